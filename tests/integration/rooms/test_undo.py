"""Undo and redo against real processes: the state read back from scsynth goes back and forth.

Ten mixed changes (play, set, release, buffers, tempo, patterns) through the API;
undone, what scsynth holds (each named node's values by ``/s_get``, which nodes
run, each buffer's frames by ``/b_query``), the tempo and the patterns are as
before them; redone, as after them. Dry runs and checkpoints beside.
"""

from __future__ import annotations

import json
import time
import wave
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from scorch.api.local import LocalService
from scorch.api.ops.buffers import BufferOutput
from scorch.api.ops.code import StopOutput
from scorch.api.ops.instances import ActionOutput
from scorch.api.ops.undo import UndoOutput
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import InvalidRequest
from scorch.primitives.scsynth.node_tree import tree_nodes
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.desired import SAMPLE_BUFFER_BASE
from scorch.state.events import Kind
from scorch.state.journal import Journal
from tests.conftest import jack_name, orchestra_pids, pid_alive

pytestmark = pytest.mark.integration

CONFIG = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{jack}"
[midi]
enabled = false
[samples]
paths = ["{samples}"]
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.hum]
synthdef = "sine"
params = {{ freq = 110, amp = 0.001 }}
"""
PLAY = ("Pdef(\\beat, Pbind(\\dur, 0.5, \\legato, 0.1, \\amp, 0.001)).play(quant: 1);"
        "Pdef(\\other, Pbind(\\dur, 1, \\legato, 0.1, \\amp, 0.001)).play(quant: 1); 1")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, library: SynthDefLibrary) -> Iterator[Orchestra]:
    """One room for the module (the second test starts from the state the first left)."""
    tmp = tmp_path_factory.mktemp("undo")
    samples = tmp / "samples"
    samples.mkdir()
    for name in ("tone", "click"):
        with wave.open(str(samples / f"{name}.wav"), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(48000)
            out.writeframes(b"\x00\x10" * 4800)
    text = CONFIG.format(state=tmp / "state", jack=jack_name("undo"), samples=samples)
    orch = Orchestra(parse_config(text, tmp / "config.toml"), library)
    assert orch.start() == {"lobby": None}
    pids = orchestra_pids(orch)
    yield orch
    orch.stop()
    assert not [pid for pid in pids if pid_alive(pid)], "a process outlived stop()"


def heard(orch: Orchestra) -> dict[str, Any]:
    """What scsynth, the clock and sclang hold now, read back from them."""
    view = orch.views["lobby"]
    osc = view.osc
    assert osc is not None
    reply = osc.request("/g_queryTree", 0, 0, reply="/g_queryTree.reply", timeout=2.0)
    running = {n.node_id for n in tree_nodes(reply.args)}
    nodes = {}
    for node in view.nodes.values():
        assert node.node_id in running, f"node {node.name} is not on scsynth"
        got = osc.request("/s_get", node.node_id, "freq", "amp", reply="/n_set", timeout=2.0)
        nodes[node.name] = (node.synthdef, round(float(got.args[2]), 3),
                            round(float(got.args[4]), 4))
    frames = {}
    for bufnum in (SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_BASE + 1):
        info = osc.request("/b_query", bufnum, reply="/b_info", timeout=2.0)
        frames[bufnum] = int(info.args[1])
    return {"nodes": nodes, "frames": frames, "bpm": round(orch.tempo.state()["bpm"], 3),
            "patterns": {k: (p.playing, p.text) for k, p in view.patterns.items()}}


def settled(orch: Orchestra, want: dict[str, Any], what: str) -> None:
    """Wait for the state to read as ``want`` (patterns report twice a second)."""
    deadline = time.monotonic() + 5.0
    now = heard(orch)
    while now != want and time.monotonic() < deadline:
        time.sleep(0.1)
        now = heard(orch)
    assert now == want, what


def test_undo_of_ten_mixed_changes_restores_what_scsynth_holds_and_redo_brings_it_back(
    room: Orchestra,
) -> None:
    api = LocalService(room)
    assert room.rooms.execute_one("lobby", PLAY, timeout=10).ok
    view = room.views["lobby"]
    wait(lambda: len(view.patterns) == 2, "the patterns were not recorded")
    before = heard(room)
    changes: list[tuple[str, dict[str, Any]]] = [
        ("play", {"instance": "lobby", "synthdef": "sine", "name": "lead",
                  "params": {"freq": 300, "amp": 0.002}}),
        ("set", {"instance": "lobby", "node": "hum", "params": {"freq": 440}}),
        ("buffer", {"action": "load", "instance": "lobby", "path": "tone.wav"}),
        ("set", {"instance": "lobby", "node": "lead", "params": {"amp": 0.003}}),
        ("tempo", {"bpm": 100.0}),
        ("pattern", {"action": "stop", "instance": "lobby", "name": "beat", "at": "now"}),
        ("release", {"instance": "lobby", "node": "hum"}),
        ("play", {"instance": "lobby", "synthdef": "sine", "name": "pad",
                  "params": {"freq": 500, "amp": 0.001}}),
        ("pattern", {"action": "source", "instance": "lobby", "name": "other", "at": "now",
                     "source": "Pbind(\\dur, 0.25, \\legato, 0.1, \\amp, 0.001)"}),
        ("set", {"instance": "lobby", "node": "pad", "params": {"freq": 600}}),
    ]
    for name, args in changes:
        api.call(name, args)
    deadline = time.monotonic() + 3
    while view.patterns["Pdef beat"].playing and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.7)  # the source change's record
    after = heard(room)
    assert after["nodes"] == {"lead": ("sine", 300.0, 0.003), "pad": ("sine", 600.0, 0.001)}
    assert after["frames"][SAMPLE_BUFFER_BASE] == 4800 and after["bpm"] == 100.0
    assert after["patterns"]["Pdef beat"][0] is False
    assert "0.25" in after["patterns"]["Pdef other"][1]

    journal = api.call("undo", {"action": "list", "instance": "lobby"})
    assert isinstance(journal, UndoOutput)
    # the tempo is the installation's: it is not the room's to undo
    assert [e.call for e in journal.journal] == [
        "play", "set", "buffer load", "set", "pattern stop", "release", "play",
        "pattern source", "set"]
    whole = api.call("undo", {"action": "list"})
    assert isinstance(whole, UndoOutput) and len(whole.journal) == 10

    preview = api.call("undo", {"dry_run": True})
    assert isinstance(preview, UndoOutput) and preview.dry_run
    assert [c.detail for c in preview.steps[0].changes] == ["set pad: freq 600 -> 500"]
    assert heard(room) == after, "a dry run changed something"

    since = view.events.mark()
    undone = api.call("undo", {"steps": 10})
    assert isinstance(undone, UndoOutput) and len(undone.steps) == 10, undone
    assert undone.failure() is None
    settled(room, before, "undo did not bring back the state before the ten changes")
    assert view.events.wait_for(Kind.UNDONE, since, 1.0) is not None
    with pytest.raises(InvalidRequest, match="nothing to undo"):
        api.call("undo", {})

    redone = api.call("undo", {"action": "redo", "steps": 10})
    assert isinstance(redone, UndoOutput) and len(redone.steps) == 10
    assert redone.failure() is None
    settled(room, after, "redo did not bring the ten changes back")
    # the journal's file reads back as the journal (a restart of scorch keeps it)
    kept = Journal()
    for line in (room.config.state_path() / "journal.jsonl").read_text().splitlines():
        kept.read_line(json.loads(line))
    assert kept.entries == room.undo.journal.entries and len(kept.entries) == 10


def test_dry_runs_change_nothing_and_back_to_a_checkpoint_is_undone_in_turn(
    room: Orchestra,
) -> None:
    api = LocalService(room)
    view = room.views["lobby"]
    api.call("pattern", {"action": "play", "instance": "lobby", "name": "beat", "at": "now"})
    wait(lambda: view.patterns["Pdef beat"].playing, "the pattern does not play")
    nodes, buffers = set(view.nodes), set(view.buffers)
    api.call("undo", {"action": "checkpoint", "name": "start"})
    api.call("play", {"instance": "lobby", "synthdef": "sine", "name": "extra",
                      "params": {"freq": 300, "amp": 0.002}})
    api.call("pattern", {"action": "stop", "instance": "lobby", "name": "beat", "at": "now"})
    wait(lambda: not view.patterns["Pdef beat"].playing, "the stop was not recorded")
    api.call("buffer", {"action": "load", "instance": "lobby", "path": "click.wav"})
    before = heard(room)

    playing = room.rooms.sounding("lobby")
    assert "node extra (sine)" in playing["lobby"] and "Pdef beat" not in playing["lobby"]
    stop = api.call("stop", {"instance": "lobby", "dry_run": True})
    assert isinstance(stop, StopOutput) and stop.would_stop == playing and not stop.stopped
    quit_ = api.call("instance", {"action": "quit", "name": "lobby", "dry_run": True})
    assert isinstance(quit_, ActionOutput) and quit_.would_stop == playing
    freed = api.call("buffer", {"action": "free", "instance": "lobby", "name": "click",
                                "dry_run": True})
    assert isinstance(freed, BufferOutput) and freed.dry_run
    assert [b.name for b in freed.buffers] == ["click"]
    assert room.rooms.status("lobby").state == "READY"
    assert heard(room) == before, "a dry run changed something"

    back = api.call("undo", {"action": "back", "name": "start", "dry_run": True})
    assert isinstance(back, UndoOutput)
    assert sorted(c.detail.split(" (")[0] for c in back.steps[0].changes) == [
        "free buffer click", "play Pdef beat", "release node extra"]
    api.call("undo", {"action": "back", "name": "start"})
    assert set(view.nodes) == nodes and set(view.buffers) == buffers
    wait(lambda: view.patterns["Pdef beat"].playing, "back did not play the pattern again")
    api.call("undo", {})  # the way back is a change too
    assert set(view.nodes) == nodes | {"extra"} and set(view.buffers) == buffers | {"click"}
    wait(lambda: not view.patterns["Pdef beat"].playing, "undo did not stop it again")


def wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 5.0
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
