"""Undo and redo against real processes: the state read back from scsynth goes back and forth.

Ten mixed changes (play, set, a scene recall, buffers, a MIDI route, tempo, patterns,
a stop that forgets the named nodes) through the API; undone step by step, what
scsynth holds (its whole node tree from ``/g_queryTree``: each group's synths by
SynthDef and controls, so a synth an undo failed to free shows; each named node's
values by ``/s_get``; each buffer's frames by ``/b_query``), the tempo, the MIDI
routes and the patterns are as they were before each change; redone, as after them.
Dry runs and checkpoints beside.
"""

from __future__ import annotations

import json
import time
import wave
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from scorch.api.local import LocalService
from scorch.api.ops.buffers import BufferOutput
from scorch.api.ops.code import StopOutput
from scorch.api.ops.midi import MidiOutput
from scorch.api.ops.rooms import ActionOutput
from scorch.api.ops.undo import UndoOutput
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import InvalidRequest
from scorch.primitives.osc import OscArg
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
backend = "jack"
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
#: The SynthDef of the patterns' notes: synths that come and go while they play.
NOTE = "default"


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


Node = tuple[int, int, str | None, tuple[tuple[str, Any], ...]]
"""A node on scsynth: id, parent group, SynthDef (None: a group), controls."""


def query_tree(orch: Orchestra) -> list[Node]:
    """Every node on scsynth, depth first: (id, parent, SynthDef or None for a group,
    controls), read with ``/g_queryTree 0 1``."""
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    # (scorch asks for the tree too, without controls: its replies are not this one)
    args: Sequence[OscArg] = osc.request("/g_queryTree", 0, 1, reply="/g_queryTree.reply",
                                         timeout=2.0, match=lambda m: m.args[0] == 1).args
    nodes: list[Node] = []
    at, pending = 3, [(0, int(args[2]))]  # type: ignore[arg-type]
    while pending:
        group, left = pending[-1]
        if left == 0:
            pending.pop()
            continue
        pending[-1] = (group, left - 1)
        node, children = int(args[at]), int(args[at + 1])  # type: ignore[arg-type]
        at += 2
        if children >= 0:
            nodes.append((node, group, None, ()))
            pending.append((node, children))
            continue
        synthdef, count = str(args[at]), int(args[at + 1])  # type: ignore[arg-type]
        pairs = args[at + 2:at + 2 + 2 * count]
        at += 2 + 2 * count
        controls = tuple((str(name), round(value, 5) if isinstance(value, float) else value)
                         for name, value in zip(pairs[::2], pairs[1::2], strict=True))
        nodes.append((node, group, synthdef, controls))
    assert at == len(args), "the reply was not read to its end"
    return nodes


def tree_shape(orch: Orchestra) -> dict[str, Any]:
    """The node tree as undo must bring it back: the groups, and in each group how many
    synths of each SynthDef with each set of controls (a synth played again has a new
    id); the patterns' notes, which come and go, aside."""
    nodes = query_tree(orch)
    return {"groups": sorted((n, parent) for n, parent, synthdef, _ in nodes if synthdef is None),
            "synths": Counter((parent, synthdef, controls) for _, parent, synthdef, controls
                              in nodes if synthdef not in (None, NOTE))}


def heard(orch: Orchestra) -> dict[str, Any]:
    """What scsynth, the clock, the MIDI router and sclang hold now, read back from them."""
    view = orch.views["lobby"]
    osc = orch.doors[view.name].scsynth
    assert osc is not None
    running = {n for n, _, synthdef, _ in query_tree(orch) if synthdef is not None}
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
    return {"tree": tree_shape(orch), "nodes": nodes, "frames": frames,
            "bpm": round(orch.tempo.state()["bpm"], 3), "routes": routes(orch),
            "patterns": {k: (p.playing, p.text) for k, p in view.patterns.items()}}


def routes(orch: Orchestra) -> dict[str, dict[str, Any]]:
    """The MIDI routes, as `midi routes` lists them: by id, each as the router has it (a
    route put back carries its id inside too)."""
    out = LocalService(orch).call("midi", {"action": "routes"})
    assert isinstance(out, MidiOutput) and isinstance(out.result, list)
    return {r["id"]: {k: v for k, v in r["route"].items() if k != "id"} for r in out.result}


def settled(orch: Orchestra, want: dict[str, Any], what: str) -> None:
    """Wait for the state to read as ``want`` (patterns report twice a second)."""
    deadline = time.monotonic() + 5.0
    now = heard(orch)
    while now != want and time.monotonic() < deadline:
        time.sleep(0.1)
        now = heard(orch)
    assert now == want, (what, {k: (now[k], want[k]) for k in want if now[k] != want[k]})


def test_undo_of_ten_mixed_changes_restores_what_scsynth_holds_and_redo_brings_it_back(
    room: Orchestra,
) -> None:
    api = LocalService(room)
    view = room.views["lobby"]
    assert room.rooms.execute_one("lobby", PLAY, timeout=10).ok
    wait(lambda: len(view.patterns) == 2, "the patterns were not recorded")
    # a scene of hum an octave up, kept before the changes (saving one is no change)
    room.rooms.set("lobby", "hum", {"freq": 220})
    room.scenes.save("up", "lobby")
    room.rooms.set("lobby", "hum", {"freq": 110})
    before = heard(room)
    cc = {"port": "knobs", "cc": 74, "instance": "lobby", "node": "hum", "param": "freq",
          "range": [100, 900]}
    changes: list[tuple[str, dict[str, Any]]] = [
        ("play", {"instance": "lobby", "synthdef": "sine", "name": "lead",
                  "params": {"freq": 300, "amp": 0.002}}),
        ("set", {"instance": "lobby", "node": "hum", "params": {"freq": 440}}),
        ("scene", {"action": "recall", "name": "up", "instance": "lobby"}),
        ("buffer", {"action": "load", "instance": "lobby", "path": "tone.wav"}),
        ("midi", {"action": "map", "spec": cc}),
        ("set", {"instance": "lobby", "node": "lead", "params": {"amp": 0.003}}),
        ("tempo", {"bpm": 100.0}),
        ("pattern", {"action": "source", "instance": "lobby", "name": "other", "at": "now",
                     "source": "Pbind(\\dur, 0.25, \\legato, 0.1, \\amp, 0.001)"}),
        ("stop", {"instance": "lobby"}),
        ("play", {"instance": "lobby", "synthdef": "sine", "name": "pad",
                  "params": {"freq": 500, "amp": 0.001}}),
    ]
    # what each change left, read back where a step-by-step undo stops below
    kept: dict[int, dict[str, Any]] = {}
    for number, (name, args) in enumerate(changes, 1):
        api.call(name, args)
        if number in (2, 3, 4, 5, 8):
            if number == 8:
                wait(lambda: "0.25" in view.patterns["Pdef other"].text, "not recorded")
            kept[number] = heard(room)
    wait(lambda: not any(p.playing for p in view.patterns.values()), "stop left a pattern")
    after = heard(room)
    assert after["nodes"] == {"pad": ("sine", 500.0, 0.001)}
    assert after["frames"][SAMPLE_BUFFER_BASE] == 4800 and after["bpm"] == 100.0
    added = set(after["routes"]) - set(before["routes"])
    assert [after["routes"][r]["cc"] for r in added] == [74]
    assert "0.25" in after["patterns"]["Pdef other"][1]
    assert kept[3]["nodes"]["hum"] == ("sine", 220.0, 0.001)  # the scene's
    assert kept[8]["nodes"] == {"hum": ("sine", 220.0, 0.001), "lead": ("sine", 300.0, 0.003)}
    assert sum(kept[8]["tree"]["synths"].values()) == sum(
        before["tree"]["synths"].values()) + 1  # lead

    journal = api.call("undo", {"action": "list", "instance": "lobby"})
    assert isinstance(journal, UndoOutput)
    # the tempo and the MIDI routes are the installation's: not the room's to undo
    assert [e.call for e in journal.journal] == [
        "play", "set", "scene recall", "buffer load", "set", "pattern source", "stop", "play"]
    whole = api.call("undo", {"action": "list"})
    assert isinstance(whole, UndoOutput) and len(whole.journal) == 10

    preview = api.call("undo", {"dry_run": True})
    assert isinstance(preview, UndoOutput) and preview.dry_run
    assert [c.detail for c in preview.steps[0].changes] == ["release node pad (sine)"]
    assert heard(room) == after, "a dry run changed something"

    since = view.events.mark()
    # the play and the stop undone: hum and lead back as they were, the patterns playing
    undone = api.call("undo", {"steps": 2})
    assert isinstance(undone, UndoOutput) and len(undone.steps) == 2, undone
    assert undone.failure() is None
    settled(room, kept[8], "undo of the stop did not bring the nodes and patterns back")
    api.call("undo", {"steps": 3})  # the source, the tempo, lead's amp
    settled(room, kept[5], "undo did not bring back the state before the source change")
    api.call("undo", {})  # the MIDI route: gone from `midi routes`
    assert routes(room) == before["routes"]
    settled(room, kept[4], "undo of the MIDI map left something")
    api.call("undo", {})  # the buffer
    settled(room, kept[3], "undo of the buffer load left something")
    api.call("undo", {})  # the scene: hum's freq as set before it
    settled(room, kept[2], "undo of the scene recall did not put its values back")
    assert heard(room)["nodes"]["hum"] == ("sine", 440.0, 0.001)
    api.call("undo", {"steps": 2})
    settled(room, before, "undo did not bring back the state before the ten changes")
    steps = [e.details["undone"] for e in room.rooms.events("lobby", since)
             if e.kind == Kind.UNDONE]
    assert steps == [True] * 10, steps  # the tempo's and the route's: every room's log
    with pytest.raises(InvalidRequest, match="nothing to undo"):
        api.call("undo", {})

    since = view.events.mark()
    redone = api.call("undo", {"action": "redo", "steps": 10})
    assert isinstance(redone, UndoOutput) and len(redone.steps) == 10
    assert redone.failure() is None
    settled(room, after, "redo did not bring the ten changes back")
    redos = [e for e in room.rooms.events("lobby", since) if e.kind == Kind.UNDONE]
    assert [e.details["undone"] for e in redos] == [False] * 10
    assert all(e.message.startswith("redone: ") for e in redos)
    # the journal's file reads back as the journal (a restart of scorch keeps it)
    kept_file = Journal()
    for line in (room.config.state_path() / "journal.jsonl").read_text().splitlines():
        kept_file.read_line(json.loads(line))
    assert kept_file.entries == room.undo.journal.entries and len(kept_file.entries) == 10


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
    # every room: each says what it would stop; scsynth's tree is the same node for node
    tree = [node for node in query_tree(room) if node[2] != NOTE]
    everywhere = api.call("stop", {"instance": "*", "dry_run": True})
    assert isinstance(everywhere, StopOutput) and everywhere.dry_run
    assert everywhere.would_stop == room.rooms.sounding("*") == playing
    assert not everywhere.stopped
    assert {"node extra (sine)", "node pad (sine)"} <= set(everywhere.would_stop["lobby"])
    assert [node for node in query_tree(room) if node[2] != NOTE] == tree, "a dry run freed"
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
