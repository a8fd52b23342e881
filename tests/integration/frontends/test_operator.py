"""The technician's side (issue 12): the CLI against a real ``scorch run``, reload, systemd.

Every command goes through the real control socket of a real ``scorch run``
subprocess; the notify protocol is read from a real AF_UNIX datagram socket
with the sender's credentials, so a message from jackd (which speaks the same
protocol when it inherits NOTIFY_SOCKET) would show.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from scorch.cli.service_unit import unit_text
from scorch.primitives.scsynth.client import OscClient
from scorch.wire.envelope import find_running
from tests.conftest import jack_name, node_exists
from tests.support.processes import terminate

pytestmark = pytest.mark.integration

SCORCH = [sys.executable, "-m", "scorch.cli.main"]


def config_text(state: Path, tag: str, extra_rooms: str = "", lobby_extra: str = "") -> str:
    return textwrap.dedent(f"""
        state_dir = "{state}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name(tag)}"
        [midi]
        backend = "jack"
        [docs]
        build = "on-demand"
        [instances.lobby]
        group = "ground"
        synthdefs = ["sine"]
        [instances.lobby.nodes.drone]
        synthdef = "sine"
        params = {{ freq = 220, amp = 0.001 }}
        """) + lobby_extra + textwrap.dedent("""
        [instances.attic]
        synthdefs = ["sine"]
        """) + extra_rooms


Scorch = Callable[..., subprocess.CompletedProcess[str]]


class Running:
    """A ``scorch run`` subprocess and a way to call its CLI."""

    def __init__(self, tmp_path: Path, tag: str, env: dict[str, str] | None = None) -> None:
        self.config = tmp_path / "config.toml"
        self.state = tmp_path / "state"
        self.config.write_text(config_text(self.state, tag))
        self.proc = subprocess.Popen([*SCORCH, "run", "--config", str(self.config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True,
                                     env={**os.environ, **(env or {})})
        self.log: list[str] = []
        threading.Thread(target=self._read_log, daemon=True).start()
        deadline = time.monotonic() + 90
        while find_running(self.state) is None:
            assert self.proc.poll() is None, "scorch run exited:\n" + "\n".join(self.log[-30:])
            assert time.monotonic() < deadline, "scorch run did not start"
            time.sleep(0.1)

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line.rstrip("\n"))

    def __call__(self, *args: str, stdin: str | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*SCORCH, *args, "--config", str(self.config)], input=stdin,
                              capture_output=True, text=True, timeout=timeout)

    def status(self, room: str) -> dict[str, object]:
        done = self("status", room, "--json")
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout)["instances"][0])

    def stop(self) -> None:
        terminate(self.proc)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(tag: str, env: dict[str, str] | None = None) -> Running:
        started.append(Running(tmp_path, tag, env))
        return started[-1]

    yield start
    for run in started:
        kids = [p.pid for p in psutil.Process(run.proc.pid).children(recursive=True)] \
            if run.proc.poll() is None else []
        run.stop()
        assert run.proc.returncode == 0, "\n".join(run.log[-30:])
        assert not [pid for pid in kids if psutil.pid_exists(pid)
                    and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]


def playing(status: dict[str, object], node: str) -> bool:
    """The named node runs on that room's scsynth (asked over OSC)."""
    nodes = status["nodes"]
    assert isinstance(nodes, dict) and node in nodes
    osc = OscClient(int(str(status["port"])))
    try:
        return node_exists(osc, nodes[node]["node_id"])
    finally:
        osc.close()


def test_the_operator_cli_reaches_every_room(running: Callable[..., Running],
                                             tmp_path: Path) -> None:
    run = running("op-cli")
    text = run("status")
    assert text.returncode == 0
    assert "lobby  READY since" in text.stdout and "node drone (sine #" in text.stdout
    assert "attic  READY since" in text.stdout

    done = run("exec", "lobby", "-", stdin='"from stdin".postln; 6 * 7')
    assert done.returncode == 0 and done.stdout.splitlines() == ["from stdin", "-> 42"]
    script = tmp_path / "tune.scd"
    script.write_text("(\nvar a = 20;\na + 22\n)\n")
    done = run("exec", "lobby", str(script))
    assert done.returncode == 0 and done.stdout.strip() == "-> 42"
    script.write_text("(\n1 + ) 2\n)\n")
    failed = run("exec", "lobby", str(script))
    assert failed.returncode == 1 and "(line 2, char" in failed.stderr

    before = run.status("lobby")
    restarted = run("restart", "lobby")
    assert restarted.returncode == 0, restarted.stderr
    after = run.status("lobby")
    assert after["state"] == "READY" and after["pids"] != before["pids"]
    assert playing(after, "drone")

    assert run("quit", "ground").returncode == 0  # a group, as the MCP tools take
    assert run.status("lobby")["state"] == "STOPPED"
    assert run.status("attic")["state"] == "READY"
    booted = run("boot", "*")
    assert booted.returncode == 0, booted.stderr
    assert run.status("lobby")["state"] == "READY" and playing(run.status("lobby"), "drone")

    logs = run("logs", "lobby", "-n", "200")
    assert logs.returncode == 0
    assert "[scorch] STOPPED: stopped" in logs.stdout and "[sclang] from stdin" in logs.stdout
    follower = subprocess.Popen([*SCORCH, "logs", "-f", "--config", str(run.config)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)
    try:
        time.sleep(1.5)
        assert run("exec", "attic", '"followed line".postln').returncode == 0
        assert follower.stdout is not None
        deadline = time.monotonic() + 10
        seen = ""
        while "followed line" not in seen and time.monotonic() < deadline:
            seen += follower.stdout.readline()
        assert "attic [sclang] followed line" in seen
    finally:
        os.killpg(follower.pid, signal.SIGTERM)
        follower.wait(timeout=10)

    assert run("midi", "ports").returncode == 0
    assert run("midi", "routes").returncode == 0
    panic = run("midi", "panic")
    assert panic.returncode == 0, panic.stderr
    assert run("stop", "lobby").returncode == 0
    assert run.status("lobby")["nodes"] == {}


def test_the_cli_without_a_running_scorch_says_so_with_its_own_status(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(config_text(tmp_path / "state", "op-none"))
    for args in (["status"], ["logs", "-f"], ["restart", "lobby"], ["reload"]):
        done = subprocess.run([*SCORCH, *args, "--config", str(config)], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 3, (args, done.stderr)
        assert "no `scorch run` answers" in done.stderr


def test_reload_applies_only_what_changed_and_a_bad_config_changes_nothing(
        running: Callable[..., Running]) -> None:
    run = running("op-reload")
    lobby, attic = run.status("lobby"), run.status("attic")
    run.config.write_text(config_text(
        run.state, "op-reload",
        lobby_extra='[instances.lobby.nodes.shimmer]\nsynthdef = "sine"\n'
                    "params = { freq = 880, amp = 0.001 }\n",
        extra_rooms='[instances.cellar]\nsynthdefs = ["sine"]\n'))
    done = run("reload")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["room cellar: added (booting)",
                                        "room lobby: node shimmer added",
                                        "MIDI: routes and ports re-read"]
    new_lobby = run.status("lobby")
    assert new_lobby["pids"] == lobby["pids"] and playing(new_lobby, "shimmer")
    assert playing(new_lobby, "drone")
    assert run.status("attic")["pids"] == attic["pids"]  # untouched
    deadline = time.monotonic() + 60
    while run.status("cellar")["state"] != "READY" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.status("cellar")["state"] == "READY"
    while run.status("cellar").get("sound") is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.status("cellar")["sound"] == "ok"  # the sound watch reads a room added too

    good = run.config.read_text()
    run.config.write_text(good.replace("amp = 0.001 }", "amp = 0.001", 1))
    bad = run("reload")
    assert bad.returncode != 0 and "config.toml:" in bad.stderr
    run.config.write_text(good.replace('jack_server = "', 'jack_server = "other-', 1))
    refused = run("reload")
    assert refused.returncode == 2 and "[audio] changed" in refused.stderr
    assert "nothing was changed" in refused.stderr
    assert run.status("cellar")["state"] == "READY"

    # SIGHUP does the same; a room whose outputs changed restarts with its nodes.
    run.config.write_text(good.replace('[instances.attic]\n', '[instances.attic]\noutputs = 4\n'))
    run.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 60
    while run.status("attic")["pids"] == attic["pids"] and time.monotonic() < deadline:
        time.sleep(0.2)
    while run.status("attic")["state"] != "READY" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.status("attic")["state"] == "READY"
    assert run.status("lobby")["pids"] == lobby["pids"]
    assert any("SIGHUP: reloaded: room attic: restarted for outputs" in line for line in run.log)


def _notify_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sock.settimeout(0.2)
    return sock


def _receive(sock: socket.socket, until: float) -> list[tuple[int, str]]:
    """(sender pid, message) of each datagram that comes before ``until``."""
    got = []
    size = struct.calcsize("3i")
    while time.monotonic() < until:
        try:
            data, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(size))
        except TimeoutError:
            continue
        pid = -1
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = array.array("i", payload[:size])[0]
        got.append((pid, data.decode()))
    return got


def test_scorch_run_speaks_systemds_notify_protocol_and_no_child_does(
        running: Callable[..., Running], tmp_path: Path) -> None:
    listener = _notify_socket(tmp_path / "notify.sock")
    try:
        run = running("op-notify", env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock"),
                                        "WATCHDOG_USEC": "1000000"})
        messages = _receive(listener, time.monotonic() + 3.0)
        texts = [text for _, text in messages]
        ready = next(i for i, text in enumerate(texts) if "READY=1" in text.splitlines())
        assert "STATUS=2/2 rooms READY; restarts 0" in texts[ready]
        # WATCHDOG=1 every half second (half of WATCHDOG_USEC) while scorch is healthy
        assert sum(text == "WATCHDOG=1" for text in texts[ready:]) >= 4
        assert {pid for pid, _ in messages} == {run.proc.pid}
        for child in psutil.Process(run.proc.pid).children(recursive=True):
            environ = child.environ()
            assert "NOTIFY_SOCKET" not in environ and "WATCHDOG_USEC" not in environ, child
        run.stop()
        stopping = _receive(listener, time.monotonic() + 1.0)
        assert any("STOPPING=1" in text.splitlines() for _, text in stopping)
    finally:
        listener.close()


def test_the_service_unit_runs_scorch_as_a_watched_notify_service(tmp_path: Path) -> None:
    config = tmp_path / "my room" / "config.toml"
    config.parent.mkdir()
    config.write_text(config_text(tmp_path / "state", "op-unit"))
    out = tmp_path / "scorch.service"
    done = subprocess.run([*SCORCH, "service", "install", "--user", "--config", str(config),
                           "--output", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "systemctl --user enable --now scorch" in done.stdout
    unit = out.read_text()
    assert unit == unit_text(Path(sys.executable).parent / "scorch", config.resolve(), True)
    for line in ("Type=notify", "WatchdogSec=30", "Restart=on-failure",
                 "ExecReload=/bin/kill -HUP $MAINPID", "WantedBy=default.target"):
        assert line in unit.splitlines()
    # the path with a space is quoted, so systemd reads one argument
    assert f"--config '{config.resolve()}'" in unit
    assert "--resume" not in unit
    resumed = unit_text(Path("/x/scorch"), config.resolve(), True, resume=True)
    assert f"ExecStart=/x/scorch run --config '{config.resolve()}' --resume" in resumed
