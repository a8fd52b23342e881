"""Cue list buttons ([[midi.cues]]): the model's refusals, hostile input, and what the engine
makes of a press (a note, a CC, a program change, a named control)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from midi.actions import SceneCue
from midi.batch import replaceable_cc
from midi.engine import Engine, TargetSnapshot
from midi.routes import RouteEntry, compile_table
from midi.schema import CueRoute, MidiConfig
from midi.store import load_routes, save_routes
from scorch.config.profiles import load_profiles

PORT = "pad:pad MIDI 1"
NANO = "nanoKONTROL2:nanoKONTROL2 nanoKONTROL2 _ CTR 20:0"


def engine_on(port: str, *routes: CueRoute) -> Engine:
    engine = Engine()
    entries = [RouteEntry(f"r{i}", r, "config") for i, r in enumerate(routes)]
    engine.tables = {port: compile_table(port, entries, {}, load_profiles().for_port(port))}
    engine.snapshot = TargetSnapshot({}, {})
    return engine


def go(cue: str = "") -> SceneCue:
    return SceneCue("cue", "go", cue, 0.0)


@pytest.mark.parametrize(("fields", "message"), [
    ({}, r"exactly one of control, note, cc, program \(found: none\)"),
    ({"note": 36, "cc": 1}, "found: note, cc"),
    ({"note": 128}, "less than or equal to 127"),
    ({"note": 36, "channel": 0}, "greater than or equal to 1"),
    ({"note": 36, "action": "back"}, "'go', 'stop' or 'standby'"),
    ({"note": 36, "action": "standby"}, "needs the cue to put on standby"),
    ({"note": 36, "action": "stop", "cue": "2"}, "drop cue"),
    ({"note": 36, "cue": "two words"}, "should match pattern"),
    ({"note": 36, "instance": "lobby"}, "Extra inputs are not permitted"),
])
def test_a_cue_button_refuses_bad_fields_with_a_reason(fields: dict[str, Any],
                                                       message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CueRoute(**fields)


HOSTILE = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                    st.floats(allow_nan=True), st.text(max_size=30),
                    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5),
                                                                         st.integers(),
                                                                         max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["note", "cc", "program", "control", "channel", "port",
                                        "action", "cue", "host", "id", "velocity"]),
                       HOSTILE, max_size=5))
def test_hostile_cue_buttons_are_a_route_or_a_located_validation_error(
        fields: dict[str, Any]) -> None:
    try:
        route = CueRoute.model_validate(fields)
    except ValidationError as err:
        for error in err.errors():
            assert error["msg"], error  # each problem says what is wrong...
        assert all(isinstance(e["loc"], tuple) for e in err.errors())  # ...and where
        return
    given_sources = [k for k in ("note", "cc", "program", "control") if fields.get(k) is not None]
    assert len(given_sources) == 1
    engine_on(PORT, route)  # it compiles


def test_a_note_a_cc_and_a_program_change_press_their_buttons_once() -> None:
    engine = engine_on(PORT, CueRoute(note=36), CueRoute(cc=20, action="stop"),
                       CueRoute(program=5, channel=2, action="standby", cue="3"))
    assert engine.handle(PORT, [0x90, 36, 100]) == [go()]
    assert engine.handle(PORT, [0x80, 36, 0]) == []  # the release does nothing
    assert engine.handle(PORT, [0x90, 36, 0]) == []  # a note-on of velocity 0 is one too
    assert engine.handle(PORT, [0xB3, 20, 127]) == [SceneCue("cue", "stop", "", 0.0)]
    assert engine.handle(PORT, [0xB3, 20, 0]) == []
    assert engine.handle(PORT, [0xC1, 5]) == [SceneCue("cue", "standby", "3", 0.0)]
    assert engine.handle(PORT, [0xC0, 5]) == []  # channel 1: not its channel
    assert engine.handle("other:port 1", [0x90, 36, 100]) == []


def test_a_button_named_by_the_devices_profile_goes_a_named_cue() -> None:
    engine = engine_on(NANO, CueRoute(port="nanoKONTROL2", control="play", cue="4"))
    assert engine.handle(NANO, [0xB0, 41, 127]) == [go("4")]  # play is CC 41 on channel 1
    assert engine.handle(NANO, [0xB1, 41, 127]) == []
    assert engine_on(PORT, CueRoute(control="play")).handle(PORT, [0xB0, 41, 127]) == []


def test_a_cue_buttons_press_and_release_are_never_coalesced() -> None:
    table = engine_on(PORT, CueRoute(cc=20)).tables[PORT]
    assert not replaceable_cc(table, 0, 20)
    assert replaceable_cc(table, 0, 21)


def test_cue_buttons_keep_in_the_run_time_store_and_need_unique_ids(tmp_path: Any) -> None:
    path = tmp_path / "routes.json"
    entries = [RouteEntry("go", CueRoute(port="pad", note=36, cue="2"), "runtime")]
    save_routes(path, entries)
    assert load_routes(path) == entries
    with pytest.raises(ValidationError, match="repeated: \\['x'\\]"):
        MidiConfig(cues=(CueRoute(id="x", note=1), CueRoute(id="x", note=2)))
