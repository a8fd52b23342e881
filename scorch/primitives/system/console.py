"""A bounded, time-stamped log of what a room's processes printed."""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import NamedTuple, Protocol


class Matcher(Protocol):
    """A compiled pattern: ``re`` or ``re2``."""

    def search(self, text: str) -> object | None:
        """A match anywhere in ``text``, or None."""
        ...


class ConsoleLine(NamedTuple):
    """One line a process printed."""

    seq: int
    """Position in the console since it was created; marks compare against it."""
    time: float
    """Wall-clock time (Unix seconds) when scorch read the line."""
    source: str
    """The process that printed it: ``scsynth``, ``sclang`` or ``jackd``."""
    text: str
    """The line, without its newline."""
    note: str = ""
    """What scorch knows of where it came from: ``after #N`` for output of something
    request N left running, ``error after #N`` for an error in it; empty otherwise."""


class Console:
    """Keep the last ``limit`` lines of each source; thread-safe.

    Writers are the processes' reader threads; readers are actors and the facade.
    ``counting`` names a pattern per source whose lines are counted as they come (a
    total the bound on lines kept does not cut short: jackd's xruns).
    """

    def __init__(self, limit: int = 1000, counting: Mapping[str, Matcher] | None = None
                 ) -> None:
        self._limit = limit
        self._lines: dict[str, deque[ConsoleLine]] = {}
        self._seq = 0
        self._changed = threading.Condition()
        self._counting = dict(counting or {})
        self._counts = dict.fromkeys(self._counting, 0)

    def append(self, source: str, text: str, note: str = "") -> ConsoleLine:
        """Add a line printed by ``source`` and wake any waiter."""
        with self._changed:
            self._seq += 1
            line = ConsoleLine(self._seq, time.time(), source, text, note)
            self._lines.setdefault(source, deque(maxlen=self._limit)).append(line)
            counted = self._counting.get(source)
            if counted is not None and counted.search(text):
                self._counts[source] += 1
            self._changed.notify_all()
            return line

    def counted(self, source: str) -> int:
        """Lines of ``source`` that matched its ``counting`` pattern since the start."""
        with self._changed:
            return self._counts.get(source, 0)

    def mark(self) -> int:
        """Return a mark: lines after it are the ones printed from now on."""
        with self._changed:
            return self._seq

    def _merged(self, since: int, source: str | None) -> list[ConsoleLine]:
        streams = [self._lines.get(source, ())] if source else list(self._lines.values())
        merged = [line for stream in streams for line in stream if line.seq > since]
        merged.sort(key=lambda line: line.seq)
        return merged

    def tail(self, count: int = 50, source: str | None = None) -> list[ConsoleLine]:
        """Return the last ``count`` lines, oldest first."""
        with self._changed:
            merged = self._merged(0, source)
        return merged[-count:] if count > 0 else []

    def since(self, mark: int, source: str | None = None) -> list[ConsoleLine]:
        """Return the lines printed after ``mark``."""
        with self._changed:
            return self._merged(mark, source)

    def clear(self) -> None:
        """Forget every line (marks stay valid)."""
        with self._changed:
            self._lines.clear()

    def wait_for(
        self, pattern: str | Matcher, timeout: float, since: int | None = None,
        source: str | None = None,
    ) -> ConsoleLine | None:
        """Wait until a line after ``since`` (default: now) matches; None on timeout.

        Lines are matched outside the console's lock, so a slow pattern never holds
        up the processes' readers or anyone else reading the console.
        """
        regex: Matcher = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        with self._changed:
            seen = self._seq if since is None else since
        while True:
            with self._changed:
                lines = self._merged(seen, source)
                if not lines:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    self._changed.wait(remaining)
                    continue
            for line in lines:
                if regex.search(line.text):
                    return line
            seen = lines[-1].seq
            if time.monotonic() >= deadline:
                return None
