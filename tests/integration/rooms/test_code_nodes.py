"""Named nodes of SynthDefs that code added, in their place, through crashes (issue 30, item 5),
and the synths scorch does not restore, reported when a crash loses them (item 2)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.errors import InvalidRequest, MidiUnavailable
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import module_orchestra, node_param

pytestmark = pytest.mark.integration

FX = ("SynthDef(\\fxtest, { |out = 0, freq = 300, amp = 0.001| "
      "Out.ar(out, SinOsc.ar(freq) * amp) }).add; 1")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Orchestra]:
    with module_orchestra(tmp_path_factory.mktemp("code-nodes"), "codenodes",
                          "[midi]\nenabled = false\n[instances.room]\n[watchdog]\nmissed = 40\n",
                          library) as orch:
        yield orch


def _order(api: LocalService) -> list[str]:
    """The synthdefs of the default group's synths, head to tail."""
    rooms: Any = api.call("playing", {"instance": "room", "detail": True})
    tree = rooms.rooms[0].tree or []
    return [t.synthdef for t in tree if t.synthdef is not None and t.parent == 1]


def _crash(room: Orchestra) -> None:
    view = room.views["room"]
    pid = view.snapshot.scsynth_pid
    assert pid is not None
    since = view.events.mark()
    os.kill(pid, signal.SIGKILL)
    restored = view.events.wait_for(Kind.RESTORED, since, 30.0)
    assert restored is not None


def test_a_synthdef_code_added_plays_as_a_named_node_in_its_place_through_a_crash(
        room: Orchestra) -> None:
    api = LocalService(room)
    assert room.rooms.execute_one("room", FX).ok
    api.call("play", {"instance": "room", "synthdef": "sine", "node": "src",
                      "params": {"amp": 0.001}})
    api.call("play", {"instance": "room", "synthdef": "sine", "node": "tail",
                      "params": {"amp": 0.001}})
    played: Any = api.call("play", {"instance": "room", "synthdef": "fxtest", "node": "fx",
                                    "params": {"freq": 333}, "target": "src"})
    assert played.node == "fx"
    assert _order(api) == ["sine", "fxtest", "sine"]  # after src, before tail
    # `midi map` checks the param against fxtest's own controls, read from its bytes
    route = {"port": "knobs", "cc": 1, "instance": "room", "node": "fx", "range": [100, 900]}
    with pytest.raises(InvalidRequest, match=r"node 'fx' on room \(fxtest\) has no param "
                                             "'cutoff'; its params: out, freq, amp"):
        room.midi.map({**route, "param": "cutoff"})
    with pytest.raises(MidiUnavailable):  # fxtest's own param: only MIDI being off stops it
        room.midi.map({**route, "param": "freq"})
    with pytest.raises(InvalidRequest, match="knows no SynthDef 'nosuchdef'"):
        api.call("play", {"instance": "room", "synthdef": "nosuchdef", "node": "x"})
    with pytest.raises(InvalidRequest, match="add_action 'before' needs a target"):
        api.call("play", {"instance": "room", "synthdef": "sine", "add_action": "before"})
    # sclang forgets it, so only the bytes scorch kept can bring it back
    assert room.rooms.execute_one("room", "SynthDescLib.global.removeAt(\\fxtest); 1").ok
    _crash(room)
    fx = room.rooms.nodes("room")["fx"]
    osc = room.doors["room"].scsynth
    assert osc is not None
    assert node_param(osc, fx.node_id, "freq") == pytest.approx(333)
    assert _order(api) == ["sine", "fxtest", "sine"]
    for node in ("fx", "src", "tail"):
        api.call("release", {"instance": "room", "node": node})


def test_a_crash_reports_the_synths_code_made_that_no_restore_brings_back(
        room: Orchestra, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import actors.watchdog

    api = LocalService(room)
    # The nodes an earlier test released fade out over their release time: only then does
    # the room hold nothing but what this test makes.
    deadline = time.monotonic() + 10
    while _order(api):
        assert time.monotonic() < deadline, _order(api)
        time.sleep(0.1)
    # No node tree on the watchdog's clock: what the report knows comes from the node
    # notifications (an end at once, a start named by the tree it asks for).
    monkeypatch.setattr(actors.watchdog, "TREE_EVERY", 1e9)
    assert room.rooms.execute_one("room", FX).ok
    api.call("play", {"instance": "room", "synthdef": "sine", "node": "kept",
                      "params": {"amp": 0.001}})
    osc = room.doors["room"].scsynth
    assert osc is not None

    def made(code: str, defs: dict[str, int], gone: tuple[int, ...] = ()) -> tuple[list[int], int]:
        """The node ids the code's value lists, and its history id, once scsynth runs them."""
        result: Any = api.call("execute", {"instance": "room", "code": code})
        (outcome,) = result.results
        assert outcome.ok and not outcome.server_errors, outcome
        (entry,) = api.call("history", {"limit": 1}).entries  # type: ignore[attr-defined]
        assert entry.code == code
        deadline = time.monotonic() + 10
        while True:
            synths = dict(osc.last_synths or [])
            counts = {d: list(synths.values()).count(d) for d in defs}
            if counts == defs and not set(gone) & set(synths):
                return [int(n) for n in (outcome.value or "").strip("[ ]").split(",") if n], \
                    entry.id
            assert time.monotonic() < deadline, (synths, defs, gone)
            time.sleep(0.02)

    (_, b, c), first = made("~a = Synth(\\fxtest); ~b = Synth(\\fxtest); "
                            "~c = Synth(\\sine, [\\amp, 0.001]); [~a.nodeID, ~b.nodeID, ~c.nodeID]",
                            {"fxtest": 2, "sine": 2})
    _, second = made("~b.free; ~c.free; ~d = Synth(\\fxtest); [~d.nodeID]",
                     {"fxtest": 2, "sine": 1}, gone=(b, c))
    # a routine the code started makes its synth a second after the code returned, twice the
    # grace a request's own synths have: a second on SystemClock (`1.wait` in a fork is a
    # beat of TempoClock.default, which scorch keeps at the installation's tempo: 0.5 s at
    # 120 bpm, and a start that close to the grace read as the code's own on a loaded machine)
    _, third = made("fork({ 1.wait; ~e = Synth(\\sine, [\\amp, 0.001]) }, SystemClock); []",
                    {"fxtest": 2, "sine": 2})
    since = room.views["room"].events.mark()
    _crash(room)
    lost = [e for e in room.views["room"].events.since(since) if e.kind == Kind.SYNTHS_LOST]
    assert len(lost) == 1, lost
    # not the named node, not the freed; each from the code that made it
    assert lost[0].details["synthdefs"] == {"fxtest": 2, "sine": 1}
    assert [(o["entry"], o["during"], o["synthdefs"]) for o in lost[0].details["from_code"]] == [
        (first, True, {"fxtest": 1}), (second, True, {"fxtest": 1}), (third, False, {"sine": 1})]
    assert lost[0].details["count"] == 3
    assert f"fxtest made by history #{first} (`~a = Synth(\\fxtest);" in lost[0].message
    assert f"sine started after history #{third} (`fork({{ 1.wait;" in lost[0].message
    status: Any = api.call("status", {"instance": "room"})
    assert "3 synths scorch does not restore" in str(status.instances[0].last_crash)
    api.call("release", {"instance": "room", "node": "kept"})


def test_history_keeps_every_change_and_runs_an_entry_again_by_id(room: Orchestra) -> None:
    api = LocalService(room)
    api.call("play", {"instance": "room", "synthdef": "sine", "node": "again",
                      "params": {"freq": 321, "amp": 0.001}})
    api.call("release", {"instance": "room", "node": "again"})
    api.call("execute", {"instance": "room", "code": "~count = (~count ? 0) + 1"})
    found: Any = api.call("history", {"limit": 3})
    codes = [e.code for e in found.entries]
    assert codes[0] == "~count = (~count ? 0) + 1"
    assert codes[1].startswith("@release ") and codes[2].startswith("@play ")
    assert '"node":"again"' in codes[2] and '"freq":321.0' in codes[2]
    assert "again" not in room.rooms.nodes("room")
    replayed: Any = api.call("history", {"action": "rerun", "id": found.entries[2].id})
    assert replayed.rerun == "play" and "again" in room.rooms.nodes("room")
    osc = room.doors["room"].scsynth
    assert osc is not None
    assert node_param(osc, room.rooms.nodes("room")["again"].node_id, "freq") == 321
    counted: Any = api.call("history", {"action": "rerun", "id": found.entries[0].id})
    assert counted.rerun == "execute" and counted.answer["results"][0]["value"] == "2"
    with pytest.raises(InvalidRequest, match="no entry #999999"):
        api.call("history", {"action": "rerun", "id": 999999})
    api.call("release", {"instance": "room", "node": "again"})


def test_a_session_save_and_load_are_kept_in_the_history_and_a_load_runs_again_by_id(
        room: Orchestra) -> None:
    api = LocalService(room)
    api.call("play", {"instance": "room", "synthdef": "sine", "node": "kept",
                      "params": {"freq": 300, "amp": 0.001}})
    api.call("session", {"action": "save", "name": "history-test"})
    api.call("set", {"instance": "room", "node": "kept", "params": {"freq": 500}})
    api.call("session", {"action": "load", "name": "history-test"})
    osc = room.doors["room"].scsynth
    assert osc is not None

    def freq() -> float:
        return node_param(osc, room.rooms.nodes("room")["kept"].node_id, "freq")

    assert freq() == 300
    found: Any = api.call("history", {"limit": 3})
    load, changed, save = found.entries
    assert load.code == '@session {"action":"load","name":"history-test"}', load.code
    assert save.code == '@session {"action":"save","name":"history-test"}', save.code
    assert changed.code.startswith("@set ") and load.ok and "target=kept" in load.value, load
    api.call("set", {"instance": "room", "node": "kept", "params": {"freq": 700}})
    assert freq() == 700
    again: Any = api.call("history", {"action": "rerun", "id": load.id})
    assert again.rerun == "session" and again.answer["action"] == "load", again
    assert [(c["action"], c["target"]) for c in again.answer["changes"]] == [("set", "kept")]
    assert freq() == 300  # the saved state, loaded again on scsynth
    api.call("session", {"action": "delete", "name": "history-test"})
    api.call("release", {"instance": "room", "node": "kept"})
