"""Faults in every phase of a room's life, against real processes (issue 12).

Each test injects its fault at the exact moment of the phase, from the thread
that is in that phase: a wrapper around the step (the attach record being
built, the restore being sent) signals the real process by its pid, then lets
the real step go on. Nothing is mocked; the step only tells the test when.
The room must come back by itself under its restart policy, its named node
playing on scsynth, well before the 20 s an attach may wait.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest

import actors.room.processes
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.primitives.sclang import protocol as sclang_protocol
from scorch.primitives.sclang.interpreter import Sclang
from scorch.primitives.scsynth.server import Scsynth, ScsynthOptions
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.console import Console
from scorch.primitives.system.udp_ports import free_udp_port
from scorch.state.events import Kind
from tests.conftest import MakeConfig, jack_name, node_exists, orchestra_ports, orphan_segments
from tests.support.harness import ONE_ROOM, jack_server
from tests.support.lossy_udp import LossyRelay, first, osc_address

pytestmark = pytest.mark.integration

QUICK = """
[watchdog]
interval = 0.1
missed = 5
backoff_min = 0.05
backoff_max = 0.3
max_restarts = 10
"""
#: Seconds a room may take to come back from any one fault here; an attach that
#: waited out its timeout would take 20.
BACK_WITHIN = 12.0


def child(name: str, but: set[int] = frozenset()) -> psutil.Process:  # type: ignore[assignment]
    """The newest child process of this test called ``name`` (scsynth, sclang, jackd)."""
    found = [p for p in psutil.Process().children(recursive=True)
             if p.name() == name and p.pid not in but]
    assert found, f"no {name} child"
    return max(found, key=lambda p: p.create_time())


@pytest.fixture
def orchestra(make_config: MakeConfig,
              library: SynthDefLibrary) -> Iterator[Callable[..., Orchestra]]:
    """Make an (unstarted) orchestra; stop it after, and check that no child is left."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    made: list[Orchestra] = []

    def make(tag: str, watchdog: str = QUICK) -> Orchestra:
        config: Config = make_config(ONE_ROOM, watchdog=watchdog, tag=tag)
        made.append(Orchestra(config, library))
        return made[-1]

    yield make
    for orch in made:
        orch.stop()
    left = [p for p in psutil.Process().children(recursive=True)
            if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"left running: {[(p.pid, p.name()) for p in left]}"
    ports = {port for orch in made for port in orchestra_ports(orch)}
    assert not orphan_segments(ports), "shared memory left by a dead scsynth"


def once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
         fault: Callable[[], None]) -> list[float]:
    """Wrap ``owner.name`` so its first call injects ``fault`` first; return when it did."""
    real = getattr(owner, name)
    at: list[float] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not at:
            fault()
            at.append(time.monotonic())
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return at


def assert_back(orch: Orchestra, since: float) -> None:
    """READY, sclang attached, the named node playing on scsynth, within BACK_WITHIN."""
    view = orch.views["room"]
    deadline = time.monotonic() + BACK_WITHIN
    while time.monotonic() < deadline:
        snap = view.snapshot
        if (snap.state.name == "READY" and snap.sclang_state == "ready"
                and orch.doors["room"].scsynth.is_open):
            break
        time.sleep(0.05)
    took = time.monotonic() - since
    snap = view.snapshot
    assert snap.state.name == "READY" and snap.sclang_state == "ready", (
        f"not back after {took:.1f} s: {snap.state} {snap.sclang_state} {snap.reason}")
    assert orch.rooms.execute_one("room", "1 + 1").value == "2"
    osc = orch.doors[view.name].scsynth
    assert osc is not None and node_exists(osc, orch.rooms.nodes("room")["hum"].node_id)


def messages(orch: Orchestra, kind: Kind) -> list[str]:
    return [e.message for e in orch.rooms.events("room") if e.kind == kind]


@pytest.mark.parametrize(("sig", "said"), [
    (signal.SIGKILL, "killed by SIGKILL while sclang attached"),
    (signal.SIGSTOP, "stopped (SIGSTOP) while sclang attached")])
def test_scsynth_lost_while_sclang_attaches_is_restarted_without_waiting_out_the_attach(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch,
        sig: signal.Signals, said: str) -> None:
    orch = orchestra(f"ph-attach-{sig.name.lower()}")
    at = once(monkeypatch, sclang_protocol, "attach",
              lambda: os.kill(child("scsynth").pid, sig))
    orch.start()
    assert at, "the fault was not injected"
    assert_back(orch, at[0])
    crashed = messages(orch, Kind.CRASHED)
    assert any(said in m for m in crashed), crashed


def test_sclang_killed_while_starting_is_started_again(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch) -> None:
    orch = orchestra("ph-sclang-kill")
    at = once(monkeypatch, sclang_protocol, "install",
              lambda: os.kill(child("sclang").pid, signal.SIGKILL))
    orch.start()
    assert at
    assert_back(orch, at[0])
    failed = messages(orch, Kind.BOOT_FAILED)
    assert any("sclang" in m and "SIGKILL" in m for m in failed), failed


def test_sclang_stopped_while_attaching_is_replaced(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch) -> None:
    orch = orchestra("ph-sclang-stop")
    stopped: list[int] = []

    def stop_sclang() -> None:
        stopped.append(child("sclang").pid)
        os.kill(stopped[0], signal.SIGSTOP)

    at = once(monkeypatch, sclang_protocol, "attach", stop_sclang)
    orch.start()
    assert at
    assert_back(orch, at[0])
    assert orch.rooms.status("room").pids["sclang"] != stopped[0]
    assert not psutil.pid_exists(stopped[0]) or \
        psutil.Process(stopped[0]).status() == psutil.STATUS_ZOMBIE
    assert any("sclang is stopped (SIGSTOP)" in m for m in messages(orch, Kind.BOOT_FAILED))


def test_scsynth_killed_while_its_state_is_restored_is_restarted_again(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch) -> None:
    orch = orchestra("ph-restore")
    orch.start()
    first = orch.rooms.status("room").pids["scsynth"]
    # The restart's restore: kill the scsynth it restores onto (not the first one).
    at = once(monkeypatch, actors.room.processes, "restore_nodes",
              lambda: os.kill(child("scsynth", but={first}).pid, signal.SIGKILL))
    since = orch.views["room"].events.mark()
    os.kill(first, signal.SIGKILL)
    restored = orch.views["room"].events.wait_for(Kind.RESTORED, since, BACK_WITHIN)
    assert at and restored is not None
    assert_back(orch, at[0])
    failures = [e.message for e in orch.views["room"].events.since(since)
                if e.kind == Kind.CRASHED and "restart of scsynth failed" in e.message]
    assert failures and "scsynth killed by SIGKILL" in failures[0], failures


def test_scsynth_killed_while_sclang_reattaches_is_restarted_again(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch) -> None:
    orch = orchestra("ph-reattach")
    orch.start()
    first = orch.rooms.status("room").pids["scsynth"]
    at = once(monkeypatch, sclang_protocol, "reattach",
              lambda: os.kill(child("scsynth", but={first}).pid, signal.SIGKILL))
    sclang = orch.rooms.status("room").pids["sclang"]
    os.kill(first, signal.SIGKILL)
    time.sleep(0.2)
    assert_back(orch, at[0] if at else time.monotonic())
    assert at
    # scsynth's fault: sclang was never restarted for it
    assert orch.rooms.status("room").pids["sclang"] == sclang


def test_jackd_killed_while_sclang_attaches_brings_the_room_back(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch) -> None:
    orch = orchestra("ph-jack")
    at = once(monkeypatch, sclang_protocol, "attach",
              lambda: os.kill(child("jackd").pid, signal.SIGKILL))
    orch.start()
    assert at
    assert_back(orch, at[0])
    # scsynth left with its JACK server; the room waited for a new one, then came back
    assert any("while sclang attached" in m for m in messages(orch, Kind.CRASHED))


def test_stopping_with_both_processes_stopped_ends_them(
        orchestra: Callable[..., Orchestra]) -> None:
    """Shutdown is a phase too: stopped processes are killed, none is left (the fixture)."""
    orch = orchestra("ph-shutdown")
    orch.start()
    pids = orch.rooms.status("room").pids
    for pid in (pids["scsynth"], pids["sclang"]):
        os.kill(pid, signal.SIGSTOP)
    started = time.monotonic()
    orch.stop()
    assert time.monotonic() - started < BACK_WITHIN
    for pid in (pids["scsynth"], pids["sclang"]):
        assert not psutil.pid_exists(pid) or \
            psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_an_automatic_port_taken_before_scsynth_binds_it_is_chosen_again(
        orchestra: Callable[..., Orchestra], monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program takes the free port scorch chose before scsynth binds it: a race
    scorch cannot prevent, only survive. scsynth is started again on another port."""
    blocker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    blocker.bind(("127.0.0.1", 0))
    held = blocker.getsockname()[1]
    real = actors.room.processes.free_udp_port
    handed: list[int] = []

    def taken_first() -> int:
        handed.append(held if not handed else real())
        return handed[-1]

    monkeypatch.setattr(actors.room.processes, "free_udp_port", taken_first)
    try:
        orch = orchestra("ph-port")
        assert orch.start() == {"room": None}
        assert handed[0] == held and orch.rooms.status("room").port not in (None, held)
        assert not messages(orch, Kind.BOOT_FAILED)  # chosen again within the same boot
        assert_back(orch, time.monotonic())
    finally:
        blocker.close()


#: The attach's own timeout here (generous: a loaded machine); the old attach, with status
#: replies lost, never finished however long it waited.
ATTACH_TIMEOUT = 40.0


@pytest.fixture(scope="module")
def lossy_scsynth() -> Iterator[Scsynth]:
    """One scsynth on its own headless jackd (no room, no orchestra: one sclang is the test)."""
    with jack_server(jack_name("lossy")) as name:
        server = Scsynth.start(ScsynthOptions(name="lossy", port=free_udp_port(),
                                              jack_server=name),
                               Console(), lambda proc, code: None, 10.0)
        try:
            yield server
        finally:
            server.stop()


def test_an_attach_whose_login_answer_sync_and_status_replies_are_lost_asks_again(
        lossy_scsynth: Scsynth) -> None:
    """sclang's attach survives lost datagrams (issue 29): it asks again, soon.

    A real sclang attaches through a relay that drops, on the way back from a real
    scsynth, the answer to its first login, the first ``/synced`` and every
    ``/status.reply``. SuperCollider's own status watcher logs in only after a status
    reply and asks once: the attach waited out its whole timeout. Scorch's login asks
    at once and again every 0.5 s, so one lost answer costs one ask.
    """
    scsynth = lossy_scsynth
    login_answer = first(1, "to-client", b"/done", b"/notify")
    synced = first(1, "to-client", b"/synced")

    def drop(way: str, datagram: bytes) -> bool:
        return (login_answer(way, datagram) or synced(way, datagram)
                or (way == "to-client" and osc_address(datagram) == b"/status.reply"))

    relay = LossyRelay(scsynth.port, drop)
    console = Console()
    sclang = None
    try:
        sclang = Sclang.start(name="lossy", lang_port=free_udp_port(), server_port=relay.port,
                              console=console, on_exit=lambda proc, code: None,
                              timeout=ATTACH_TIMEOUT)
        dropped = [osc_address(d) for d in relay.dropped]
        assert b"/done" in dropped and b"/synced" in dropped, dropped
        assert sclang.login_asks == 1  # the lost answer cost one ask, nothing more
        assert sclang.client_id == 0
        # `s` works: a round trip through scsynth, and its node ids are client 0's.
        result = sclang.session.submit("s.serverRunning", timeout=5.0)[1].result(timeout=10.0)
        assert result.ok and result.value == "true", result

        # A re-attach (after a restart of scsynth) asks again too: here scsynth knows the
        # client, so it answers "already registered"; the first such answer is lost.
        # (The old re-attach asked once and waited out its timeout.)
        relay.drop = first(1, "to-client", b"/fail", b"/notify")
        before = len(relay.dropped)
        sclang.reattach(relay.port)
        assert [osc_address(d) for d in relay.dropped[before:]] == [b"/fail"]
    finally:
        if sclang is not None:
            sclang.stop("the test is over")
        relay.close()
