"""Issue 19, one test per item, against real processes: the edges no input may break.

(The float32, NaN, NUL, "yes", long-name and timeout items are in
tests/integration/rooms/test_tool_edges.py with the generated input; re2 patterns there too.)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import actors.room.processes
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.primitives.scsynth.server import SHARED_MEMORY, remove_shared_memory, segment_identity
from scorch.primitives.system.udp_ports import free_udp_port
from scorch.state.events import Kind
from tests.conftest import MakeConfig, jack_name, node_exists
from tests.support.harness import ONE_ROOM

pytestmark = pytest.mark.integration

Start = Callable[[Config], Orchestra]
QUICK = "\n[watchdog]\nbackoff_min = 0.05\nbackoff_max = 0.2\nmax_restarts = 5\n"


def on_port(port: int) -> str:
    """The room on a fixed port."""
    return ONE_ROOM.replace("[instances.room]\n", f"[instances.room]\nport = {port}\n")


def test_a_failed_boot_stops_its_scsynth_and_frees_the_port_before_retrying(
        make_config: MakeConfig, monkeypatch: pytest.MonkeyPatch, library: object) -> None:
    """A restore that fails once: no scsynth left holding the port; the retry boots."""
    real = actors.room.processes.restore_nodes
    ports: list[int] = []
    calls = {"n": 0}

    def failing_once(osc, desired):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            ports.append(osc.address[1])
            raise RuntimeError("restore failed (injected)")
        return real(osc, desired)

    monkeypatch.setattr(actors.room.processes, "restore_nodes", failing_once)
    port = free_udp_port()
    config = make_config(on_port(port), watchdog=QUICK, tag="bootfail")
    orch = Orchestra(config, library)  # type: ignore[arg-type]
    try:
        assert orch.start() == {"room": None}
        failed = [e for e in orch.rooms.events("room") if e.kind == Kind.BOOT_FAILED]
        assert failed and "injected" in failed[0].message
        # the retry bound the same fixed port: the failed attempt's scsynth let it go
        assert ports == [port]
        assert orch.rooms.status("room").state == "READY"
        assert orch.rooms.status("room").port == port
    finally:
        orch.stop()


def test_a_port_held_by_another_program_names_it(
        make_config: MakeConfig, start_orchestra: Start) -> None:
    blocker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    blocker.bind(("127.0.0.1", 0))
    port = blocker.getsockname()[1]
    try:
        orch = start_orchestra(make_config(
            on_port(port),
            watchdog=QUICK.replace("max_restarts = 5", "max_restarts = 1"), tag="held"))
        assert orch.rooms.status("room").state == "FAILED"
        reason = orch.rooms.status("room").reason
        assert f"UDP port {port} is already in use by pid {os.getpid()} (" in reason
        assert "max_restarts = 1" in reason
    finally:
        blocker.close()


def test_a_failed_start_on_a_port_another_program_holds_leaves_no_segment(
        make_config: MakeConfig, start_orchestra: Start, monkeypatch: pytest.MonkeyPatch) -> None:
    """scsynth makes its 8 MB segment before it finds the automatic port taken: it goes."""
    blocker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    blocker.bind(("127.0.0.1", 0))
    held = blocker.getsockname()[1]
    handed: list[int] = []

    def taken_first() -> int:
        handed.append(held if not handed else free_udp_port())
        return handed[-1]

    monkeypatch.setattr(actors.room.processes, "free_udp_port", taken_first)
    segment = SHARED_MEMORY / f"SuperColliderServer_{held}"
    assert not segment.exists()
    try:
        orch = start_orchestra(make_config(ONE_ROOM, tag="held"))
        assert handed[0] == held and orch.rooms.status("room").port not in (None, held)
        assert not segment.exists(), "the failed scsynth's segment was left in /dev/shm"
    finally:
        blocker.close()


def test_a_segment_of_the_ports_holder_is_left_to_it(tmp_path: Path) -> None:
    """A segment that was there before the start and is still the same file is not ours."""
    port = free_udp_port()
    segment = SHARED_MEMORY / f"SuperColliderServer_{port}"
    segment.write_bytes(b"")
    try:
        before = segment_identity(port)
        remove_shared_memory(port, unless=before)
        assert segment.exists()
        other = segment.with_name(f"{segment.name}.new")
        other.write_bytes(b"")
        os.replace(other, segment)  # another file in its place (both existed: a new inode)
        remove_shared_memory(port, unless=before)
        assert not segment.exists()
    finally:
        segment.unlink(missing_ok=True)


def test_nodes_freed_behind_scorchs_back_leave_the_desired_state(
        make_config: MakeConfig, start_orchestra: Start) -> None:
    orch = start_orchestra(make_config(ONE_ROOM, tag="behind"))
    assert "hum" in orch.rooms.status("room").nodes
    since = orch.views["room"].events.mark()
    assert orch.rooms.execute_one("room", "s.freeAll; 1").ok
    ended = orch.views["room"].events.wait_for(Kind.NODE_ENDED, since, 5.0)
    assert ended is not None and "'hum'" in ended.message
    assert orch.rooms.status("room").nodes == {} and orch.rooms.nodes("room") == {}
    played = orch.rooms.play("room", "sine", {"amp": 0.001}, "tone")
    since = orch.views["room"].events.mark()
    assert orch.rooms.execute_one("room", f's.sendMsg("/n_free", {played["node_id"]}); 1').ok
    assert orch.views["room"].events.wait_for(Kind.NODE_ENDED, since, 5.0) is not None
    assert "tone" not in orch.rooms.nodes("room")
    # a restart restores none of them
    since = orch.views["room"].events.mark()
    os.kill(orch.rooms.status("room").pids["scsynth"], 9)
    restored = orch.views["room"].events.wait_for(Kind.RESTORED, since, 15.0)
    assert restored is not None and restored.details["nodes"] == []


def test_play_of_a_synthdef_freed_on_the_server_sends_it_again(
        make_config: MakeConfig, start_orchestra: Start) -> None:
    orch = start_orchestra(make_config(ONE_ROOM, tag="dfree"))
    assert orch.rooms.execute_one("room", 's.sendMsg("/d_free", "sine"); 1').ok
    played = orch.rooms.play("room", "sine", {"amp": 0.001}, "again")
    osc = orch.doors["room"].scsynth
    assert osc is not None and node_exists(osc, played["node_id"])
    assert any("was gone from scsynth" in e.message for e in orch.rooms.events("room"))


def test_malformed_json_rpc_lines_get_json_rpc_errors_over_real_stdio(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'state_dir = "{tmp_path / "state"}"\n[audio]\ndriver = "dummy"\n'
                      f'jack_server = "{jack_name("rpc")}"\n[midi]\nenabled = false\n'
                      "[instances.room]\n")
    proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "mcp", "--config",
                             str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        lines = [b"this is not json\n", b'{"jsonrpc": "2.0", "id": 7, "methd": "x"}\n',
                 b"[1, 2]\n", b'{"id": "a", "method": "ping"}\n',
                 b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
                 b'{"protocolVersion":"2025-06-18","capabilities":{},'
                 b'"clientInfo":{"name":"t","version":"1"}}}\n']
        proc.stdin.write(b"".join(lines))
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(5)]
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    # initialize may be answered first, from the handshake cache; the errors keep their order
    initialized = [a for a in answers if a.get("id") == 1]
    assert len(initialized) == 1 and "result" in initialized[0]
    codes = [(a.get("id"), a.get("error", {}).get("code")) for a in answers if a.get("id") != 1]
    assert codes == [(None, -32700), (7, -32600), (None, -32600), ("a", -32600)]
