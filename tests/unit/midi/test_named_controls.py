"""Controls by name: a route says fader1 and the port's profile says which message it is."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from midi.actions import PageCue, SetParam
from midi.batch import coalesce
from midi.controllers.echoes import WINDOW as ECHO_WINDOW
from midi.engine import Engine, TargetSnapshot
from midi.routes import RouteEntry, bind, compile_table, control_of
from midi.schema import ControlRoute, PageRoute
from scorch.config.profiles import load_profiles

NANO = "nanoKONTROL2:nanoKONTROL2 nanoKONTROL2 _ CTR 20:0"
APC = "APC mini mk2:APC mini mk2 APC mini mk2 Contr 24:0"
A = ("127.0.0.1", 57110)
PROFILES = load_profiles()


def engine_on(port: str, *routes, page: str | None = None, feedback: bool = False) -> Engine:
    engine = Engine()
    entries = [RouteEntry(f"r{i}", r, "config") for i, r in enumerate(routes)]
    engine.tables = {port: compile_table(port, entries, {"a": ("a",)},
                                         PROFILES.for_port(port), page, feedback)}
    engine.snapshot = TargetSnapshot({"a": A}, {("a", "pad"): 1000})
    return engine


def route(**fields) -> ControlRoute:
    return ControlRoute(**{"port": "nanoKONTROL2", "instance": "a", "node": "pad",
                           "param": "cutoff", "takeover": "immediate", **fields})


def values(actions) -> list[float]:
    return [round(a.value, 4) for a in actions if isinstance(a, SetParam)]


def test_a_fader_named_in_a_route_moves_its_param_by_the_profiles_numbers() -> None:
    engine = engine_on(NANO, route(control="fader3", range=(100, 200)))
    assert values(engine.handle(NANO, [0xB0, 2, 127])) == [200.0]
    assert values(engine.handle(NANO, [0xB0, 3, 127])) == []  # fader4 is not mapped


def test_a_control_the_device_lacks_maps_nothing_on_that_port() -> None:
    entries = [RouteEntry("r", route(port="*", control="fader9"), "config")]
    table = compile_table(NANO, entries, {"a": ("a",)}, PROFILES.for_port(NANO))
    assert table.controls == {}
    apc = compile_table(APC, entries, {"a": ("a",)}, PROFILES.for_port(APC))
    assert list(apc.controls) == [("cc", 0, 56)]


def test_a_momentary_button_toggles_its_param_at_each_press() -> None:
    engine = engine_on(NANO, route(control="solo1"))
    assert values(engine.handle(NANO, [0xB0, 32, 127])) == [1.0]
    assert values(engine.handle(NANO, [0xB0, 32, 0])) == []
    assert values(engine.handle(NANO, [0xB0, 32, 127])) == [0.0]


def test_a_pad_sending_notes_is_a_control_too_and_can_be_momentary_or_velocity() -> None:
    engine = engine_on(APC, route(port="APC", control="pad1", button="momentary"),
                       route(port="APC", control="pad2", param="amp", button="velocity"))
    assert values(engine.handle(APC, [0x90, 56, 127])) == [1.0]
    assert values(engine.handle(APC, [0x80, 56, 0])) == [0.0]
    assert values(engine.handle(APC, [0x90, 57, 64])) == [round(64 / 127, 4)]
    assert values(engine.handle(APC, [0x90, 57, 0])) == []  # a release keeps the hit


def test_a_button_press_and_release_in_one_batch_both_count() -> None:
    engine = engine_on(NANO, route(control="solo1"))
    batch = [([0xB0, 32, 127], 0.0), ([0xB0, 32, 0], 0.0)]
    assert coalesce(batch, engine.tables[NANO]) == batch


def test_a_page_button_switches_and_routes_of_other_pages_rest() -> None:
    page = PageRoute(port="nanoKONTROL2", control="track_right", page="gallery")
    lobby = route(control="fader1", page="lobby")
    gallery = route(control="fader1", param="amp", page="gallery")
    engine = engine_on(NANO, page, lobby, gallery, page="lobby")
    assert [a.param for a in engine.handle(NANO, [0xB0, 0, 64])] == ["cutoff"]
    assert engine.handle(NANO, [0xB0, 59, 127]) == [PageCue(NANO, "gallery")]
    assert engine.handle(NANO, [0xB0, 59, 0]) == []
    engine = engine_on(NANO, page, lobby, gallery, page="gallery")
    assert [a.param for a in engine.handle(NANO, [0xB0, 0, 64])] == ["amp"]


def test_feedback_echoed_back_is_dropped_once_within_its_window() -> None:
    engine = engine_on(NANO, route(control="solo1"), feedback=True)
    now = [100.0]
    engine.clock = lambda: now[0]
    engine.echoes.expect((NANO, 0xB0, 32), 0, now[0] + ECHO_WINDOW)
    engine.echoes.expect((NANO, 0xB0, 32), 127, now[0] + ECHO_WINDOW)
    assert engine.handle(NANO, [0xB0, 32, 127]) == []  # the echo of the LED's "on"
    assert engine.handle(NANO, [0xB0, 32, 0]) == []  # and of the "off" sent before it
    assert values(engine.handle(NANO, [0xB0, 32, 127])) == [1.0]  # then a real press
    engine.echoes.expect((NANO, 0xB0, 32), 127, now[0] + ECHO_WINDOW)
    now[0] += 2 * ECHO_WINDOW
    assert values(engine.handle(NANO, [0xB0, 32, 127])) == [0.0]  # too late to be an echo
    assert engine.echoed == 2


def test_every_control_moved_is_touched_even_when_takeover_holds_it() -> None:
    engine = engine_on(NANO, route(control="knob1", takeover="pickup"))
    engine.observe("a", "pad", "cutoff", 0.9)
    assert engine.handle(NANO, [0xB0, 16, 0]) == []
    assert ("a", "pad", "cutoff") in engine.touched


def test_a_bound_route_finds_its_control_again_for_feedback() -> None:
    profile = PROFILES.all["korg-nanokontrol2"]
    bound = bind(route(control="rec2"), profile)
    assert bound is not None and bound.cc == 65 and bound.channel == 1
    found = control_of(bound, profile)
    assert found is not None and found.name == "rec2"
    numeric = control_of(route(cc=33), profile)  # a route of numbers gets feedback too
    assert numeric is not None and numeric.name == "solo2"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 255), max_size=4), max_size=30))
def test_hostile_bytes_on_a_profiled_port_never_raise(messages: list[list[int]]) -> None:
    engine = engine_on(NANO, route(control="solo1"), route(control="knob1", param="amp"),
                       PageRoute(port="nano", control="cycle", page="p"), feedback=True)
    engine.echoes.expect((NANO, 0xB0, 32), 127, 1e18)
    for data in messages:
        for action in engine.handle(NANO, data):
            assert isinstance(action, SetParam | PageCue)


def test_an_old_expired_echo_of_a_value_does_not_hide_a_fresh_one() -> None:
    engine = engine_on(NANO, route(control="solo1"), feedback=True)
    now = [100.0]
    engine.clock = lambda: now[0]
    engine.echoes.expect((NANO, 0xB0, 32), 127, now[0] + ECHO_WINDOW)
    now[0] += 10.0  # long gone, and still kept (the list is pruned only by newer values)
    engine.echoes.expect((NANO, 0xB0, 32), 127, now[0] + ECHO_WINDOW)
    assert engine.handle(NANO, [0xB0, 32, 127]) == []
    assert engine.echoed == 1
