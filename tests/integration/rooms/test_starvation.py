"""The supervisor cannot be starved (issue 12): a connection flood, a process out of descriptors.

The flood runs against a real ``scorch run`` whose file-descriptor limit is
256, four times fewer than the connections thrown at it: before the bounds, the
accept loop died on EMFILE and the watchdog, blind while it lasted, killed
healthy rooms when it could look again.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from scorch.api.remote import RemoteService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.state.events import Kind
from scorch.wire.envelope import find_running, request_line
from scorch.wire.server import MAX_CONNECTIONS
from tests.conftest import MakeConfig, jack_name, node_exists
from tests.support.harness import ONE_ROOM

pytestmark = pytest.mark.integration

SCORCH = [sys.executable, "-m", "scorch.cli.main"]
FLOOD = 1100
FD_LIMIT = 256
#: Seconds each request that keeps a slot busy waits.
BUSY_FOR = 2.0
WATCHDOG = """
[watchdog]
interval = 0.1
missed = 5
"""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))
    os.setsid()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    config = tmp_path / "config.toml"
    config.write_text(textwrap.dedent(f"""
        state_dir = "{tmp_path / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name('flood')}"
        """) + ONE_ROOM + WATCHDOG)
    proc = subprocess.Popen([*SCORCH, "run", "--config", str(config)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, preexec_fn=_limited)
    try:
        deadline = time.monotonic() + 60
        while (path := find_running(tmp_path / "state")) is None:
            assert proc.poll() is None and time.monotonic() < deadline, "scorch run did not start"
            time.sleep(0.1)
        yield proc, path
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _connect(path: Path, deadline: float) -> socket.socket:
    """Connect, waiting while the listen queue is full (the server accepts as it can)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    while True:
        try:
            sock.connect(str(path))
            break
        except BlockingIOError:
            assert time.monotonic() < deadline, "the server stopped accepting"
            time.sleep(0.001)
    sock.setblocking(True)
    return sock


def _last_line(sock: socket.socket) -> dict[str, object]:
    sock.settimeout(5.0)
    with sock.makefile("rb") as reader:
        return dict(json.loads(reader.readline()))


def test_a_flood_of_held_connections_kills_nothing_and_refuses_clearly(
        running: tuple[subprocess.Popen[str], Path]) -> None:
    proc, path = running
    service = RemoteService(path)
    before = service.call("status", {"instance": "room"}).model_dump()["instances"][0]
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        for _ in range(FLOOD):
            held.append(_connect(path, deadline))
        server = psutil.Process(proc.pid)
        assert server.num_fds() < FD_LIMIT - 32
        assert server.num_threads() < MAX_CONNECTIONS + 60
        # Held and silent: the oldest were let go with a line that says why.
        evicted = _last_line(held[0])
        assert evicted["closed"] is True and evicted["evicted"] is True
        assert "had sent nothing" in str(evicted["error"])
        # The operator still gets answers, and the room was never touched.
        during = service.call("status", {"instance": "room"}).model_dump()["instances"][0]
        assert during["state"] == "READY" and during["pids"] == before["pids"]

        # Every slot busy with a request: a newcomer is refused, with the reason.
        busy = []
        wait = request_line(1, "wait_for", {"instance": "room", "pattern": "never-printed",
                                            "timeout_s": BUSY_FOR})
        for _ in range(MAX_CONNECTIONS):
            sock = _connect(path, deadline)
            sock.sendall(wait)
            busy.append(sock)
        time.sleep(0.5)
        extra = _connect(path, deadline)
        refused = _last_line(extra)
        assert refused["closed"] is True and refused["evicted"] is False
        assert "every one is in use" in str(refused["error"])
        held += [*busy, extra]
    finally:
        for sock in held:
            sock.close()
    time.sleep(BUSY_FOR + 0.5)  # the busy requests finish their wait; their slots free up
    after = service.call("status", {"instance": "room"}).model_dump()["instances"][0]
    service.close()
    assert after["state"] == "READY" and after["pids"] == before["pids"]
    events = RemoteService(path).call("events", {"instance": "room"}).model_dump()
    kinds = {e["kind"] for e in events["events"]}
    assert not kinds & {"HUNG", "CRASHED", "FAILED"}, kinds
    assert proc.poll() is None


def test_a_process_out_of_descriptors_does_not_make_healthy_rooms_look_hung(
        make_config: MakeConfig, start_orchestra: object) -> None:
    """EMFILE for three times the hang limit: the watchdog could not look, so it kills nothing."""
    config: Config = make_config(ONE_ROOM, watchdog=WATCHDOG, tag="emfile")
    orch: Orchestra = start_orchestra(config)  # type: ignore[operator]
    pids = orch.rooms.status("room").pids
    since = orch.views["room"].events.mark()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    spent: list[int] = []
    try:
        # The limit is on descriptor numbers: just above the highest, then fill the gaps.
        highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 2, hard))
        with pytest.raises(OSError) as exhausted:
            for _ in range(highest + 2):
                spent.append(os.open("/dev/null", os.O_RDONLY))
        assert exhausted.value.errno == errno.EMFILE
        time.sleep(1.5)  # the watchdog's limit is 0.5 s
    finally:
        for fd in spent:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    time.sleep(1.0)  # and it looks again
    hung = [e for e in orch.views["room"].events.since(since) if e.kind == Kind.HUNG]
    assert not hung, [e.message for e in hung]
    assert orch.rooms.status("room").pids == pids
    osc = orch.doors["room"].scsynth
    assert osc is not None and node_exists(osc, orch.rooms.nodes("room")["hum"].node_id)
