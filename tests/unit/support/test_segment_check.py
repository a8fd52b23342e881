"""The suite's own /dev/shm check finds a segment that no process holds, and only such."""

from __future__ import annotations

import socket

from scorch.primitives.scsynth.server import SHARED_MEMORY
from tests.conftest import left_segments, segment_ports


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_new_segment_nobody_holds_is_reported_and_a_held_one_is_not() -> None:
    before = segment_ports()
    dead, held = free_udp_port(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    held.bind(("127.0.0.1", 0))
    live = int(held.getsockname()[1])
    paths = [SHARED_MEMORY / f"SuperColliderServer_{port}" for port in (dead, live)]
    try:
        for path in paths:
            path.write_bytes(b"\0" * 16)
        assert left_segments(before, set(), grace=0.3) == [f"SuperColliderServer_{dead}"]
        assert left_segments(before | {dead}, set(), grace=0.0) == []
        assert left_segments(before | {dead}, {dead}, grace=0.0) == [f"SuperColliderServer_{dead}"]
    finally:
        held.close()
        for path in paths:
            path.unlink(missing_ok=True)
