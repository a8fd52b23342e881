"""How often a process may be restarted, and how long to wait between tries.

Restart intensity (OTP's term): at most ``max_restarts`` restarts within
``period`` seconds, then give up. The waits between tries come from tenacity's
``wait_exponential_jitter``; :class:`actors.keeper.Keeper` runs them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from tenacity import wait_exponential_jitter


@dataclass(frozen=True)
class Backoff:
    """The waits between restarts, and when the count starts over."""

    minimum: float
    """The first wait."""
    maximum: float
    stable_after: float
    """Seconds of running without a fault after which the next fault waits ``minimum`` again."""

    def wait(self) -> wait_exponential_jitter:
        """tenacity's strategy: ``minimum`` doubling per try, up to ``maximum``, with jitter."""
        return wait_exponential_jitter(multiplier=self.minimum, max=self.maximum, exp_base=2,
                                       jitter=self.minimum)


class RestartIntensity:
    """Count restarts in a sliding window of ``period`` seconds; pure, times given by the caller."""

    def __init__(self, max_restarts: int, period: float) -> None:
        self.max_restarts = max_restarts
        self.period = period
        self._restarts: deque[float] = deque()

    def _prune(self, now: float) -> None:
        while self._restarts and now - self._restarts[0] > self.period:
            self._restarts.popleft()

    def record(self, now: float) -> None:
        """Count a restart at ``now``."""
        self._restarts.append(now)

    def exhausted(self, now: float) -> bool:
        """True when no restart is left in the window at ``now``."""
        return self.restarts_in_window(now) >= self.max_restarts

    def restarts_in_window(self, now: float) -> int:
        """Restarts counted in the current window."""
        self._prune(now)
        return len(self._restarts)

    def budget_left(self, now: float) -> int:
        """Restarts still allowed in the current window."""
        return max(0, self.max_restarts - self.restarts_in_window(now))

    def reason(self, now: float) -> str:
        """Why restarting stops, for a person."""
        return (f"{self.restarts_in_window(now)} restarts within {self.period:g} s "
                f"(max_restarts = {self.max_restarts})")

    def reset(self) -> None:
        """Forget the history (a person asked for a fresh boot)."""
        self._restarts.clear()
