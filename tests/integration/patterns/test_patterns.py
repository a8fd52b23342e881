"""Patterns and proxies through an sclang crash, and what plays, against real processes.

A Pdef and an Ndef started by ``execute`` come back after sclang is SIGKILLed: on
the next bar of the room's clock, their events reaching scsynth (``/n_go``, heard
by a client of our own registered with ``/notify 1``), and what the dead sclang
left on scsynth is freed before the new one allocates the same ids.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator

import pytest

from scorch.api.local import LocalService
from scorch.api.ops.music.playing import PlayingOutput
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.primitives.scsynth.node_tree import client_of, is_default_group, tree_nodes
from scorch.state.events import Kind
from tests.conftest import MakeConfig, node_exists
from tests.support.scsynth_listener import Listener

pytestmark = pytest.mark.integration

Start = Callable[[Config], Orchestra]

ROOM = """
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.hum]
synthdef = "sine"
params = { freq = 110, amp = 0.001 }
"""
WATCHDOG = """
[watchdog]
interval = 0.25
missed = 8
max_restarts = 5
period = 60
backoff_min = 0.05
backoff_max = 1
"""
BPM = 120.0
BAR = 4 * 60.0 / BPM
#: The Pdef's notes last 30 s: any alive after the restart were left by the dead sclang.
PLAY = """
Pdef(\\acc, Pbind(\\instrument, \\default, \\degree, Pseq([0, 2, 4], inf), \\dur, 0.5,
    \\sustain, 30, \\amp, 0.002)).play(quant: 1);
Ndef(\\drone, { SinOsc.ar(110) * 0.002 }).play;
"""


@pytest.fixture
def room(make_config: MakeConfig, start_orchestra: Start) -> Iterator[tuple[Orchestra, Listener]]:
    orch = start_orchestra(make_config(ROOM, watchdog=WATCHDOG, extra=f"[tempo]\nbpm = {BPM}\n",
                                       tag="patterns"))
    port = orch.rooms.status("lobby").port
    assert port is not None
    listener = Listener(port)
    yield orch, listener
    listener.close()


def sclang_synths(orch: Orchestra) -> dict[int, int]:
    """Synths of sclang's client on scsynth now: id -> parent."""
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    reply = osc.request("/g_queryTree", 0, 0, reply="/g_queryTree.reply", timeout=2.0)
    return {n.node_id: n.parent for n in tree_nodes(reply.args)
            if n.synthdef is not None and client_of(n.node_id) == 0
            and not is_default_group(n.node_id)}


def wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_pdef_and_ndef_come_back_on_the_next_bar_after_sclang_is_killed(
    room: tuple[Orchestra, Listener],
) -> None:
    orch, listener = room
    view = orch.views["lobby"]
    started = time.time()
    result = orch.rooms.execute_one("lobby", PLAY, timeout=10)
    assert result.ok, result
    wait(lambda: {"Pdef acc", "Ndef drone"} <= set(view.patterns)
         and all(p.playing for p in view.patterns.values()), 5, f"not recorded: {view.patterns}")
    assert view.patterns["Pdef acc"].how == "source"
    assert view.patterns["Pdef acc"].text.startswith("Pdef('acc', Pbind('instrument'")
    assert view.patterns["Ndef drone"].text == "Ndef('drone', { SinOsc.ar(110) * 0.002 })"
    wait(lambda: len(listener.synth_starts(started)) >= 3, 5, "the Pdef does not play")
    left = sclang_synths(orch)
    assert len(left) >= 3, left  # notes of 30 s and the Ndef's synths

    sclang = orch.rooms.status("lobby").pids["sclang"]
    since = view.events.mark()
    killed = time.time()
    os.kill(sclang, signal.SIGKILL)
    restored = view.events.wait_for(Kind.RESTORED, since, 30.0)
    assert restored is not None, orch.rooms.events("lobby")
    back = time.time()

    # What the dead sclang left was freed before the new one started.
    assert set(left) <= listener.ends(killed, back), "a synth of the dead sclang was left"
    # Both play again within one bar (plus the server latency) of RESTORED.
    wait(lambda: any(h.message.args[1] == 1 for h in listener.synth_starts(back)),
         BAR + 1.0, "the Pdef did not resume")
    first = min(h.at for h in listener.synth_starts(back) if h.message.args[1] == 1)
    assert first - back <= BAR + 0.4, f"resumed {first - back:.2f} s after RESTORED"
    # On the bar, as the notes before the kill were on their beats: both a server latency
    # (s.latency, as every sclang pattern plays) after the grid's time.
    grid = orch.tempo.grid()
    assert grid is not None
    bars = grid.beat_at(first) / grid.beats_per_bar
    late = (bars - int(bars)) * BAR
    before = [(grid.beat_at(h.at) % 0.5) * 60 / BPM for h in listener.synth_starts(started)
              if h.at < killed and h.message.args[1] == 1]
    assert before and all(abs(b - late) < 0.04 for b in before), (late, before)
    assert late < 0.3, f"{late:.3f} s after the bar"
    wait(lambda: view.patterns["Ndef drone"].playing, BAR + 1.0, "the Ndef did not resume")
    checked = orch.rooms.execute_one(
        "lobby", "[Pdef(\\acc).isPlaying, Ndef(\\drone).isMonitoring, "
        "Ndef(\\drone).group.nodeID, Ndef(\\drone).monitor.group.nodeID]", timeout=10)
    assert checked.ok and checked.value is not None, checked
    pdef, ndef, group, monitor = checked.value.strip("[ ]").split(", ")
    assert (pdef, ndef) == ("true", "true")
    # Its synths reached scsynth: its source's, in its group, as it was defined again; its
    # monitor's, which plays it out, within the bar (and the Pdef's slack) of RESTORED.
    sources = [h for h in listener.synth_starts(killed) if h.message.args[1] == int(group)]
    assert sources, f"no /n_go of the Ndef's synth in its group {group}"
    heard = [h for h in listener.synth_starts(back) if h.message.args[1] == int(monitor)]
    assert heard, f"no /n_go of the Ndef's monitor in {monitor} after RESTORED"
    assert heard[0].at - back <= BAR + 0.4, f"monitored {heard[0].at - back:.2f} s after"
    osc = orch.doors[view.name].scsynth
    assert osc is not None  # both run still
    assert node_exists(osc, int(sources[-1].message.args[0]))
    assert node_exists(osc, int(heard[-1].message.args[0]))
    wait(lambda: "Ndef drone" in owners(orch), 3, f"no synth of the Ndef: {owners(orch)}")


def owners(orch: Orchestra) -> dict[str, int]:
    out = LocalService(orch).call("playing", {"instance": "lobby"})
    assert isinstance(out, PlayingOutput)
    return out.rooms[0].synths or {}


def test_playing_lists_patterns_proxies_and_named_nodes_with_their_owners(
    room: tuple[Orchestra, Listener],
) -> None:
    orch, _ = room
    view = orch.views["lobby"]
    code = PLAY + """
Pbindef(\\bass, \\instrument, \\default, \\degree, -7, \\dur, 1, \\amp, 0.001);
Tdef(\\tick, { loop { 1.wait } }).play;
"""
    assert orch.rooms.execute_one("lobby", code, timeout=10).ok
    wait(lambda: len(view.patterns) == 4, 5, f"not recorded: {view.patterns}")
    wait(lambda: {"Pdef acc", "Ndef drone", "node hum"} <= set(owners(orch)), 5,
         f"owners: {owners(orch)}")

    out = LocalService(orch).call("playing", {"instance": "lobby", "detail": True})
    assert isinstance(out, PlayingOutput)
    lobby = out.rooms[0]
    kinds = {(p.kind, p.name): p.playing for p in lobby.patterns}
    assert kinds == {("Pdef", "acc"): True, ("Ndef", "drone"): True,
                     ("Pbindef", "bass"): False, ("Tdef", "tick"): True}
    assert [n.name for n in lobby.nodes] == ["hum"]
    tree = {t.id: t for t in lobby.tree or ()}
    hum = orch.rooms.nodes("lobby")["hum"].node_id
    assert tree[hum].owner == "node hum"
    ndef_groups = [t for t in tree.values() if t.synthdef is None and t.owner == "Ndef drone"]
    assert ndef_groups, "the Ndef's group is not attributed"
    text = out.text()
    assert "Pbindef bass: stopped" in text and "node hum: sine" in text

    # stopping one pattern is seen as such, the others play on
    assert orch.rooms.execute_one("lobby", "Pdef(\\acc).stop", timeout=10).ok
    wait(lambda: not view.patterns["Pdef acc"].playing, 3, "the stop was not recorded")
    assert view.patterns["Tdef tick"].playing and view.patterns["Ndef drone"].playing


def test_a_pattern_that_hangs_sclang_again_right_after_it_resumed_is_not_resumed_twice(
    room: tuple[Orchestra, Listener],
) -> None:
    orch, _ = room
    view = orch.views["lobby"]
    since = view.events.mark()
    assert orch.rooms.execute_one("lobby", "Tdef(\\spin, { loop { } }).play", timeout=10).ok
    first = view.events.wait_for(Kind.HUNG, since, 15.0)
    assert first is not None, orch.rooms.events("lobby")
    second = view.events.wait_for(Kind.HUNG, first.seq, 30.0)
    assert second is not None, ("the restored Tdef did not play (it hangs sclang when it does)",
                                orch.rooms.events("lobby"), view.patterns,
                                [ln.text for ln in view.console.tail(40)])
    refused = view.events.wait_for(Kind.STARTUP_ERROR, second.seq, 15.0)
    assert refused is not None and "not resumed: Tdef spin" in refused.message
    assert view.events.wait_for(Kind.RESTORED, refused.seq, 15.0) is not None
    result = orch.rooms.execute_one("lobby", "Tdef(\\spin).isPlaying", timeout=10)
    assert result.ok and result.value == "false"
    assert not view.patterns["Tdef spin"].playing
    assert orch.rooms.status("lobby").state == "READY"


def test_an_ndef_plays_again_on_a_restarted_scsynth_while_the_pdef_plays_on(
    room: tuple[Orchestra, Listener],
) -> None:
    orch, _ = room
    view = orch.views["lobby"]
    assert orch.rooms.execute_one("lobby", PLAY, timeout=10).ok
    wait(lambda: {"Pdef acc", "Ndef drone"} <= set(owners(orch)), 5, f"{owners(orch)}")
    scsynth = orch.rooms.status("lobby").pids["scsynth"]
    since = view.events.mark()
    os.kill(scsynth, signal.SIGKILL)
    restored = view.events.wait_for(Kind.RESTORED, since, 30.0)
    assert restored is not None, orch.rooms.events("lobby")
    # the Ndef's group and synths died with scsynth: defined again, they play from the next bar
    wait(lambda: {"Pdef acc", "Ndef drone", "Ndef monitor"} <= set(owners(orch)), BAR + 3,
         f"not back on the new scsynth: {owners(orch)}")
    checked = orch.rooms.execute_one(
        "lobby", "[Pdef(\\acc).isPlaying, Ndef(\\drone).isMonitoring]", timeout=10)
    assert checked.value == "[ true, true ]"
    assert owners(orch)["Ndef drone"] == 1
