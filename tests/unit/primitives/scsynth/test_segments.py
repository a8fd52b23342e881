"""Sweeping the shared-memory segments that dead scsynths left (real sockets, a private folder)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from scorch.primitives.scsynth import server
from scorch.primitives.scsynth.server import STALE_AFTER, sweep_stale_segments


def segment(folder: Path, port: int, age: float) -> Path:
    path = folder / f"SuperColliderServer_{port}"
    path.write_bytes(b"\0" * 64)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_only_old_segments_of_ports_nobody_holds_are_swept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "SHARED_MEMORY", tmp_path)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as held, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        held.bind(("127.0.0.1", 0))
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
        probe.close()  # a port nobody holds now: the scsynth that had it is dead
        dead = segment(tmp_path, free, STALE_AFTER + 60)
        alive = segment(tmp_path, held.getsockname()[1], STALE_AFTER + 60)
        starting = segment(tmp_path, free + 1 if free < 65535 else free - 1, 1.0)
        other = tmp_path / "SuperColliderServer_notaport"
        other.write_bytes(b"")
        assert sweep_stale_segments() == [free]
    assert not dead.exists()
    assert alive.exists()  # its scsynth runs: the port is held
    assert starting.exists()  # may be a scsynth that has not bound its port yet
    assert other.exists()


def test_nothing_to_sweep_asks_nothing_of_the_system(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "SHARED_MEMORY", tmp_path)
    monkeypatch.setattr(server.psutil, "net_connections",
                        lambda kind: pytest.fail("listed sockets with no candidate"))
    assert sweep_stale_segments() == []
