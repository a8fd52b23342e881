"""What a test that SIGKILLs ``scorch run`` or ``scorch mcp`` frees after it.

Their scsynths and jackd die with them (the parent-death signal), and nothing
frees the segments they mapped: a scsynth's stays until the next scsynth start
on the machine sweeps it, 10 s later at the earliest; a killed jackd's until
the next JACK server starts (which forgets them in its registry when their
files are gone as well). The session's watcher counts both as the suite's leaks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

from scorch.primitives.scsynth.server import SHARED_MEMORY
from tests.support.shm.scan import mapped_by, mappers, processes


def release(paths: Iterable[Path], folder: Path = SHARED_MEMORY) -> list[Path]:
    """Remove those of ``paths`` that no process maps now; return them."""
    held = mappers(processes(), folder)
    gone = []
    for path in paths:
        if path.name not in held and path.exists():
            path.unlink(missing_ok=True)
            gone.append(path)
    return gone


def kill_freeing_segments(pids: Iterable[int], timeout: float = 10.0) -> list[Path]:
    """SIGKILL ``pids``, wait until they map nothing, and free the segments they mapped."""
    pids = list(pids)
    held = mapped_by(pids)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while mapped_by(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return release(held)
