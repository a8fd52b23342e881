"""Faults against real processes: crashes, hangs, a dead JACK, crash loops, stop mid-backoff.

Each test injects a fault by process id and asserts the outcome: the instance
back with its named nodes and their last values, the others untouched.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.primitives.system.udp_ports import free_udp_port
from scorch.state.events import Kind
from tests.conftest import MakeConfig, node_exists, node_param, orchestra_pids, pid_alive

pytestmark = pytest.mark.integration

TWO_ROOMS = """
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.02 }
[instances.attic]
synthdefs = ["sine"]
[instances.attic.nodes.hum]
synthdef = "sine"
params = { freq = 110, amp = 0.02 }
"""

FAST_WATCHDOG = """
[watchdog]
interval = 0.1
missed = 5
max_restarts = 5
period = 60
backoff_min = 0.05
backoff_max = 1
"""

# For tests that inject no hang: slow enough that a loaded CI machine never
# makes a healthy process look hung, which would break their pid assertions.
CALM_WATCHDOG = FAST_WATCHDOG.replace("interval = 0.1\nmissed = 5", "interval = 0.25\nmissed = 8")

Start = Callable[[Config], Orchestra]


def tree(orch: Orchestra, name: str) -> list[int]:
    """Node ids in scsynth's tree, from /g_queryTree (answered to the sender)."""
    osc = orch.doors[name].scsynth
    assert osc is not None
    reply = osc.request("/g_queryTree", 0, 0, reply="/g_queryTree.reply", timeout=1.0)
    args = reply.args
    # flag, node id, child count, then per node: id, child count [, def name]
    ids, i = [], 1
    while i + 1 < len(args):
        node_id, children = int(args[i]), int(args[i + 1])  # type: ignore[arg-type]
        ids.append(node_id)
        i += 2 if children >= 0 else 3
    return sorted(ids)


def wait_restored(orch: Orchestra, name: str, since: int, timeout: float = 15.0) -> None:
    event = orch.views[name].events.wait_for((Kind.RESTORED, Kind.FAILED), since, timeout)
    assert event is not None, f"{name} not restored within {timeout} s: {orch.rooms.events(name)}"
    assert event.kind == Kind.RESTORED, event.message


def test_sigkill_scsynth_restores_nodes_with_last_values_and_leaves_others_alone(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    orch = start_orchestra(make_config(TWO_ROOMS, watchdog=CALM_WATCHDOG, tag="kill"))
    drone = orch.rooms.nodes("lobby")["drone"].node_id
    orch.rooms.set("lobby", "drone", {"freq": 330.0})
    attic_tree = tree(orch, "attic")
    attic_pid = orch.rooms.status("attic").pids["scsynth"]
    old = orch.rooms.status("lobby").pids["scsynth"]
    since = orch.views["lobby"].events.mark()

    os.kill(old, signal.SIGKILL)
    # A value set while the instance restarts is not lost.
    orch.rooms.set("lobby", "drone", {"amp": 0.03})
    wait_restored(orch, "lobby", since)

    crashed = orch.views["lobby"].events.wait_for(Kind.CRASHED, since, 0)
    assert crashed is not None and "SIGKILL" in crashed.message
    status = orch.rooms.status("lobby")
    assert status.state == "READY" and status.pids["scsynth"] != old
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    assert node_param(osc, drone, "freq") == pytest.approx(330.0)
    assert node_param(osc, drone, "amp") == pytest.approx(0.03)
    assert status.restarts_in_window == 1 and status.restart_budget_left == 4
    assert tree(orch, "attic") == attic_tree
    assert orch.rooms.status("attic").pids["scsynth"] == attic_pid
    result = orch.rooms.execute_one("lobby", "s.name", timeout=10)
    assert result.ok and result.value == "lobby"


def test_sigkill_sclang_keeps_the_sound_and_code_runs_after(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    orch = start_orchestra(make_config(TWO_ROOMS, watchdog=CALM_WATCHDOG, tag="lang"))
    drone = orch.rooms.nodes("lobby")["drone"].node_id
    osc = orch.doors["lobby"].scsynth
    generation = osc.generation
    scsynth = orch.rooms.status("lobby").pids["scsynth"]
    sclang = orch.rooms.status("lobby").pids["sclang"]
    since = orch.views["lobby"].events.mark()

    os.kill(sclang, signal.SIGKILL)
    checks = []
    while orch.views["lobby"].events.wait_for(Kind.RESTORED, since, 0.05) is None:
        checks.append(node_exists(osc, drone))
        assert len(checks) < 400, "sclang did not come back"
    assert checks and all(checks), "the node stopped while sclang restarted"
    assert orch.rooms.status("lobby").pids["scsynth"] == scsynth
    assert osc.generation == generation  # the same scsynth behind the door
    result = orch.rooms.execute_one("lobby", "s.name")
    assert result.ok and result.value == "lobby"
    assert not pid_alive(sclang)


def test_sigstop_scsynth_is_declared_hung_killed_and_restored(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    orch = start_orchestra(make_config(TWO_ROOMS, watchdog=FAST_WATCHDOG, tag="hang"))
    drone = orch.rooms.nodes("lobby")["drone"].node_id
    old = orch.rooms.status("lobby").pids["scsynth"]
    since = orch.views["lobby"].events.mark()

    os.kill(old, signal.SIGSTOP)
    hung = orch.views["lobby"].events.wait_for(Kind.HUNG, since, 10.0)
    assert hung is not None and "scsynth" in hung.message
    wait_restored(orch, "lobby", since)
    assert not pid_alive(old)
    osc = orch.doors["lobby"].scsynth
    assert osc is not None and node_exists(osc, drone)
    crashed = orch.views["lobby"].events.wait_for(Kind.CRASHED, since, 0)
    assert crashed is not None and "after it hung" in crashed.message


def test_sigstop_sclang_is_declared_hung_and_restarted_while_scsynth_plays(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    orch = start_orchestra(make_config(TWO_ROOMS, watchdog=FAST_WATCHDOG, tag="langhang"))
    sclang = orch.rooms.status("lobby").pids["sclang"]
    scsynth = orch.rooms.status("lobby").pids["scsynth"]
    since = orch.views["lobby"].events.mark()
    os.kill(sclang, signal.SIGSTOP)
    hung = orch.views["lobby"].events.wait_for(Kind.HUNG, since, 10.0)
    assert hung is not None and "sclang" in hung.message
    wait_restored(orch, "lobby", since)
    assert orch.rooms.status("lobby").pids["scsynth"] == scsynth
    assert orch.rooms.execute_one("lobby", "1 + 1").value == "2"


def test_killing_the_private_jackd_brings_everything_back(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    orch = start_orchestra(make_config(TWO_ROOMS, watchdog=CALM_WATCHDOG, tag="jack"))
    jackd = orch.rooms.pids()["jackd"]
    assert jackd is not None
    marks = {name: orch.views[name].events.mark() for name in orch.rooms.names()}
    os.kill(jackd, signal.SIGKILL)
    for name in orch.rooms.names():
        wait_restored(orch, name, marks[name], timeout=30.0)
    new_jackd = orch.rooms.pids()["jackd"]
    assert new_jackd is not None and new_jackd != jackd and pid_alive(new_jackd)
    for name, node in (("lobby", "drone"), ("attic", "hum")):
        osc = orch.doors[name].scsynth
        assert osc is not None
        assert node_exists(osc, orch.rooms.nodes(name)[node].node_id)
        assert orch.rooms.status(name).state == "READY"


def test_a_crash_loop_ends_failed_within_its_intensity_and_others_stay_ready(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    """A room with a fixed port that another program took cannot come back."""
    watchdog = CALM_WATCHDOG.replace("max_restarts = 5", "max_restarts = 3")
    watchdog = watchdog.replace("backoff_min = 0.05", "backoff_min = 0.3")
    port = free_udp_port()
    rooms = TWO_ROOMS.replace("[instances.lobby]\n", f"[instances.lobby]\nport = {port}\n")
    orch = start_orchestra(make_config(rooms, watchdog=watchdog, tag="loop"))
    assert orch.rooms.status("lobby").port == port
    attic_pid = orch.rooms.status("attic").pids["scsynth"]
    old = orch.rooms.status("lobby").pids["scsynth"]
    since = orch.views["lobby"].events.mark()

    os.kill(old, signal.SIGKILL)
    # Another program takes the port as soon as scsynth lets go of it.
    blocker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    deadline = time.monotonic() + 5
    while True:
        try:
            blocker.bind(("127.0.0.1", port))
            break
        except OSError:
            assert time.monotonic() < deadline, "scsynth never released its port"
            time.sleep(0.005)
    try:
        failed = orch.views["lobby"].events.wait_for(Kind.FAILED, since, 30.0)
        assert failed is not None
        assert "3 restarts within 60 s" in failed.message
        restarts = [e for e in orch.rooms.events("lobby") if e.seq > since and
                    e.kind == Kind.RESTARTING]
        assert len(restarts) == 3
        assert orch.rooms.status("lobby").state == "FAILED"
        assert orch.rooms.status("attic").state == "READY"
        assert orch.rooms.status("attic").pids["scsynth"] == attic_pid
        failures = [e for e in orch.rooms.events("lobby")
                    if e.seq > since and e.kind == Kind.CRASHED]
        assert any(f"UDP port {port} is already in use" in e.message for e in failures)
        with pytest.raises(Exception, match="FAILED"):
            orch.rooms.play("lobby", "sine", {}, "x")
    finally:
        blocker.close()
    # Booting again on request clears FAILED.
    orch.rooms.boot("lobby")
    assert orch.rooms.status("lobby").state == "READY"


def test_stopping_during_a_backoff_exits_at_once_with_no_process_left(
    make_config: MakeConfig,
) -> None:
    from scorch.primitives.synthdefs.library import SynthDefLibrary

    watchdog = CALM_WATCHDOG.replace("backoff_min = 0.05", "backoff_min = 60")
    watchdog = watchdog.replace("backoff_max = 1", "backoff_max = 120")
    orch = Orchestra(make_config(TWO_ROOMS, watchdog=watchdog, tag="backoff"), SynthDefLibrary())
    orch.start()
    pids = orchestra_pids(orch)
    since = orch.views["lobby"].events.mark()
    os.kill(orch.rooms.status("lobby").pids["scsynth"], signal.SIGKILL)
    waiting = orch.views["lobby"].events.wait_for(Kind.RESTARTING, since, 10.0)
    assert waiting is not None and waiting.details["delay"] >= 60
    started = time.monotonic()
    orch.stop()
    took = time.monotonic() - started
    assert took < 30, f"stop waited out the backoff ({took:.1f} s)"
    assert not [pid for pid in pids if pid_alive(pid)]



def test_busy_processes_are_not_taken_for_hung(
    make_config: MakeConfig, start_orchestra: Start
) -> None:
    """A long buffer computation and a long evaluation must not trigger the watchdog."""
    orch = start_orchestra(make_config(TWO_ROOMS, watchdog=FAST_WATCHDOG, tag="busy-ok"))
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    since = orch.views["lobby"].events.mark()
    pids = orch.rooms.status("lobby").pids
    # 4 million frames of 64 summed sine partials: seconds of work in scsynth's
    # non-realtime thread, far beyond the watchdog's 0.5 s of allowed silence.
    osc.request("/b_alloc", 0, 4_000_000, 1, reply="/done", timeout=10.0)
    started = time.monotonic()
    osc.request("/b_gen", 0, "sine1", 7, *([1.0] * 64), reply="/done", timeout=60.0)
    busy_scsynth = time.monotonic() - started
    # Busy for 2 s of wall time whatever the machine's speed: silent to pings throughout.
    result = orch.rooms.execute_one(
        "lobby", "var t0 = Main.elapsedTime, n = 0; "
        "while { Main.elapsedTime - t0 < 2.0 } { n = n + 1 }; n > 0", 30.0)
    assert result.ok, result.error
    # Longer than each process's allowed silence: 0.5 s for scsynth, 1 s for sclang.
    assert busy_scsynth > 0.5, "the buffer fill was too quick to prove anything"
    assert result.elapsed > 1.0, "the evaluation was too quick to prove anything"
    assert orch.views["lobby"].events.wait_for(Kind.HUNG, since, 0) is None
    assert orch.rooms.status("lobby").pids == pids
