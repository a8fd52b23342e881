"""Decide from reply times and CPU progress whether a process is hung. Pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HealthPolicy:
    """A process is hung after ``missed`` ping intervals with no sign of life...

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

    def silent_for(self, now: float, last_heard: float, watched_since: float) -> float:
        """Seconds since the last sign of life, counting from when watching began."""
        return now - max(last_heard, watched_since)

    def hung(self, now: float, last_heard: float, watched_since: float,
             last_progress: float | None = None) -> bool:
        """True when silent too long; ``last_progress`` is when CPU time last grew."""
        silent = self.silent_for(now, last_heard, watched_since)
        if silent <= self.limit:
            return False
        if last_progress is None:
            return True
        working = now - max(last_progress, watched_since) <= self.limit
        return not working or silent > max(self.limit, self.busy_limit)
