"""A start-up deadline that a working process may stretch, and a stuck one cannot.

sclang compiles its class library before it posts its welcome: about half a
second of a core alone, but many seconds when a dozen rooms and other programs
share two cores. Stopping it at a fixed wall-clock limit then throws away a
start that was nearly done and begins the same work again. So when the limit
comes and the process used CPU since the last look, it is working, not stuck:
the deadline moves on by a step, up to a hard cap. A process that used (almost)
no CPU in that time is stuck, and the wait ends at the limit as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: CPU seconds a process must have used since the last look to count as working.
PROGRESS = 0.05
#: The hard cap, as a multiple of the limit.
CAP = 3.0


@dataclass
class ProgressDeadline:
    """When to give up on a start, given the clock and the process's CPU time."""

    started: float
    limit: float
    cpu: float | None
    """The process's CPU seconds at the start (None: unknown, no stretching)."""
    step: float = 0.0
    """How far each stretch moves the deadline (0: a quarter of the limit)."""

    def __post_init__(self) -> None:
        self.deadline = self.started + self.limit
        self.cap = self.started + CAP * self.limit
        self.stretched = 0
        """How many times the deadline moved on."""
        if self.step <= 0:
            self.step = self.limit / 4

    def remaining(self, now: float, read_cpu: Callable[[], float | None]) -> float:
        """Seconds left (<= 0: give up); ``read_cpu`` is asked only when the deadline has come."""
        if now < self.deadline:
            return self.deadline - now
        cpu = read_cpu()
        if self.cpu is None or cpu is None or cpu - self.cpu < PROGRESS or now >= self.cap:
            return 0.0
        self.cpu = cpu
        self.deadline = min(self.cap, now + self.step)
        self.stretched += 1
        return self.deadline - now
