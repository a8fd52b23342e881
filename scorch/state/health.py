"""Decide from pings, replies and CPU progress whether a process is hung. Pure.

Silence is counted from pings that were actually sent: a watchdog that could
not look (its thread delayed, the process out of file descriptors) sent none,
so the time it was blind is unknown, never evidence of a hang.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

#: Pings remembered per process; more unanswered ones than this add nothing.
MAX_REMEMBERED = 4096


@dataclass
class Pings:
    """The send times of the pings to one process that no sign of life has followed yet."""

    sent: deque[float] = field(default_factory=lambda: deque(maxlen=MAX_REMEMBERED))

    def record(self, at: float) -> None:
        """A ping went out at ``at`` (only count pings whose send succeeded)."""
        self.sent.append(at)

    def heard(self, last_heard: float) -> None:
        """Forget the pings answered by a sign of life at ``last_heard``."""
        while self.sent and self.sent[0] <= last_heard:
            self.sent.popleft()

    def clear(self) -> None:
        """Forget every ping (the process is busy on purpose, or was replaced)."""
        self.sent.clear()

    @property
    def unanswered(self) -> int:
        """How many pings went out since the last sign of life."""
        return len(self.sent)

    @property
    def oldest(self) -> float | None:
        """When the first unanswered ping went out."""
        return self.sent[0] if self.sent else None


@dataclass(frozen=True)
class HealthPolicy:
    """A process is hung when ``missed`` pings in a row, over ``missed`` intervals, got no reply...

    ...unless it is visibly working: scsynth computing a large buffer answers
    nothing until it is done, but its CPU time keeps growing. A working process
    gets up to ``busy_limit`` seconds of silence; a stopped or deadlocked one,
    whose CPU time stands still, is hung after the short limit. Any reply
    counts as a sign of life, not only the ping's.
    """

    interval: float
    missed: int
    busy_limit: float = 30.0

    @property
    def limit(self) -> float:
        """Seconds of silence that make an idle process hung."""
        return self.interval * self.missed

    def silent_for(self, now: float, pings: Pings) -> float:
        """Seconds since the first ping that nothing answered (0 when all were)."""
        oldest = pings.oldest
        return 0.0 if oldest is None else now - oldest

    def hung(self, now: float, pings: Pings, last_progress: float | None = None) -> bool:
        """True when enough pings went unanswered for long enough.

        ``pings`` must have heard the last sign of life already;
        ``last_progress`` is when the process's CPU time last grew (None: unknown).
        """
        oldest = pings.oldest
        if oldest is None or pings.unanswered < self.missed:
            return False
        silent = now - oldest
        if silent <= self.limit:
            return False
        if last_progress is None:
            return True
        working = now - max(last_progress, oldest) <= self.limit
        return not working or silent > max(self.limit, self.busy_limit)
