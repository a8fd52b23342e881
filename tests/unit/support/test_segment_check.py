"""The suite's own /dev/shm check finds a segment that no process holds, and only such."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from scorch.primitives.scsynth.server import SHARED_MEMORY
from tests.conftest import DescendantScsynths, left_segments, scsynth_port


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_segment_nobody_holds_is_reported_and_a_held_one_is_not() -> None:
    dead, held = free_udp_port(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    held.bind(("127.0.0.1", 0))
    live = int(held.getsockname()[1])
    paths = [SHARED_MEMORY / f"SuperColliderServer_{port}" for port in (dead, live)]
    try:
        for path in paths:
            path.write_bytes(b"\0" * 16)
        assert left_segments({dead, live}, grace=0.3) == [f"SuperColliderServer_{dead}"]
        assert left_segments({live}, grace=0.0) == []
    finally:
        held.close()
        for path in paths:
            path.unlink(missing_ok=True)


def test_scsynth_ports_are_read_from_command_lines() -> None:
    assert scsynth_port(["scsynth", "-u", "57110", "-a", "1024"]) == 57110
    assert scsynth_port(["scsynth", "-t", "57110"]) is None
    assert scsynth_port(["scsynth", "-u"]) is None


def test_a_descendant_named_scsynth_is_seen_with_its_port(tmp_path: Path) -> None:
    # A stand-in process named scsynth (argv[0]) with -u: what a scorch subprocess starts.
    fake = tmp_path / "scsynth"
    fake.symlink_to(sys.executable)
    watcher = DescendantScsynths()
    child = subprocess.Popen([str(fake), "-c", "import time; time.sleep(5)", "-u", "40123"])
    try:
        deadline = time.monotonic() + 5
        while 40123 not in watcher.ports and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
    assert 40123 in watcher.stop()
