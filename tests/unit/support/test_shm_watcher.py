"""The /dev/shm watcher on real segments: it names one the suite leaked, and only such.

A segment is made here on purpose and mapped by a child process (as scsynth
maps its own); killing the child leaves it mapped by no one: the leak the
session's check must name. A segment mapped by a process outside the suite
(started through a double fork, so init is its parent) must never be named.
The looks are taken by hand, on a clock the test moves, so a loaded machine
cannot make the watcher miss one.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from scorch.primitives.scsynth.server import SHARED_MEMORY
from tests.support.shm import scan
from tests.support.shm.cleanup import kill_freeing_segments, release
from tests.support.shm.watcher import SegmentWatcher

#: Maps the segment named on its command line, says so, and waits to be killed.
MAP = ("import mmap, sys, time\n"
       "f = open(sys.argv[1], 'r+b'); m = mmap.mmap(f.fileno(), 4096)\n"
       "print('mapped', flush=True); time.sleep(60)\n")
#: The same from a grandchild whose parent exits at once: a process outside the suite.
ORPHAN = ("import os, subprocess, sys\n"
          f"p = subprocess.Popen([sys.executable, '-c', {MAP!r}, sys.argv[1]],\n"
          "                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
          "print(p.pid, flush=True); os._exit(0)\n")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def segment() -> Iterator[Path]:
    """A 4 KiB scsynth-named segment on a free port, removed after."""
    path = SHARED_MEMORY / f"SuperColliderServer_{free_port()}"
    path.write_bytes(b"\0" * 4096)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def mapper(path: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", MAP, str(path)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None and child.stdout.readline() == "mapped\n"
    return child


class Clock:
    """The watcher's monotonic clock, moved by the test: looks are taken by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def watcher_by_hand(clock: Clock) -> SegmentWatcher:
    """A watcher whose thread never looks: the test calls look() at the times it sets."""
    return SegmentWatcher(interval=3600, leak_after=10, clock=clock)


def test_a_segment_left_mapped_by_no_process_is_named_and_one_still_mapped_is_not() -> None:
    clock = Clock()
    watcher = watcher_by_hand(clock)  # segments before it never count
    with segment() as leaked, segment() as kept:
        dying, living = mapper(leaked), mapper(kept)
        try:
            assert scan.mapped_by([dying.pid]) == {leaked}
            watcher.look()  # both mapped by processes of the suite: its own
            dying.kill()
            dying.wait()
            clock.now = 1
            watcher.look()  # leaked: mapped by no one from now
            clock.now = 11
            watcher.look()  # ten seconds on: a leak
            living.kill()  # kept: mapped until now, and freed at once
            living.wait()
            kept.unlink()
            leaks = watcher.finish(grace=1.0)
        finally:
            for child in (dying, living):
                child.kill()
                child.wait()
        assert [leak.name for leak in leaks] == [leaked.name] and not watcher.failure
        assert "test_a_segment_left_mapped_by_no_process" in leaks[0].describe()


def test_a_segment_of_a_process_outside_the_suite_is_never_named() -> None:
    clock = Clock()
    watcher = watcher_by_hand(clock)
    with segment() as foreign:
        # On a port the suite used: only the outsider's maps say the segment is not its.
        watcher.add_port(int(foreign.name.rpartition("_")[2]))
        starter = subprocess.run([sys.executable, "-c", ORPHAN, str(foreign)], check=True,
                                 capture_output=True, text=True, timeout=10)
        orphan = int(starter.stdout)
        try:
            deadline = time.monotonic() + 5
            while not scan.mapped_by([orphan]):
                assert time.monotonic() < deadline, "the orphan never mapped its segment"
                time.sleep(0.05)
            watcher.look()
            os.kill(orphan, 9)
            while scan.mapped_by([orphan]):
                assert time.monotonic() < deadline, "the orphan outlived SIGKILL"
                time.sleep(0.05)
            clock.now = 1
            watcher.look()
            clock.now = 20
            watcher.look()
            assert watcher.finish(grace=1.0) == []
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(orphan, 9)


def test_release_removes_what_no_process_maps_and_keeps_what_one_does() -> None:
    with segment() as freed, segment() as held:
        child = mapper(held)
        try:
            assert release([freed, held]) == [freed]
            assert not freed.exists() and held.exists()
        finally:
            child.kill()
            child.wait()


def test_killing_a_process_frees_the_segments_it_mapped() -> None:
    with segment() as path:
        child = mapper(path)
        try:
            assert kill_freeing_segments([child.pid]) == [path]
            assert not path.exists()
        finally:
            child.kill()
            child.wait()
