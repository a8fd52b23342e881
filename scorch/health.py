"""Decide from reply times whether a process is hung. Pure; the watchdog calls it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HealthPolicy:
    """A process is hung after ``missed`` ping intervals with no sign of life.

    Any reply counts as a sign of life, not only the ping's: a server busy
    loading buffers still answers, so it is never taken for hung.
    """

    interval: float
    missed: int

    @property
    def limit(self) -> float:
        """Seconds of silence that make a process hung."""
        return self.interval * self.missed

    def silent_for(self, now: float, last_heard: float, watched_since: float) -> float:
        """Seconds since the last sign of life, counting from when watching began."""
        return now - max(last_heard, watched_since)

    def hung(self, now: float, last_heard: float, watched_since: float) -> bool:
        """True when the process has been silent for longer than the limit."""
        return self.silent_for(now, last_heard, watched_since) > self.limit
