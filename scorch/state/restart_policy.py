"""When to restart, how long to wait, and when to give up: restart intensity."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from tenacity import RetryCallState, wait_exponential_jitter


@dataclass(frozen=True)
class Decision:
    """What to do after a crash."""

    restart: bool
    delay: float
    attempt: int
    reason: str = ""


class RestartPolicy:
    """At most ``max_restarts`` within ``period`` seconds, with exponential backoff.

    The backoff grows with each restart since the instance was last stable for
    ``stable_after`` seconds; the first retry waits ``backoff_min``.
    """

    def __init__(
        self, max_restarts: int, period: float, backoff_min: float, backoff_max: float,
        stable_after: float,
    ) -> None:
        self.max_restarts = max_restarts
        self.period = period
        self.stable_after = stable_after
        self._wait = wait_exponential_jitter(
            multiplier=backoff_min, max=backoff_max, exp_base=2, jitter=backoff_min
        )
        self._restarts: deque[float] = deque()
        self._attempt = 0
        self._ready_since: float | None = None

    def _prune(self, now: float) -> None:
        while self._restarts and now - self._restarts[0] > self.period:
            self._restarts.popleft()

    def ready(self, now: float) -> None:
        """Note that the instance is up from ``now``."""
        self._ready_since = now

    def crashed(self, now: float) -> Decision:
        """Decide after a crash at ``now``: restart after a delay, or give up."""
        if self._ready_since is not None and now - self._ready_since >= self.stable_after:
            self._attempt = 0
        self._ready_since = None
        self._prune(now)
        if len(self._restarts) >= self.max_restarts:
            return Decision(False, 0.0, self._attempt,
                            f"{len(self._restarts)} restarts within {self.period:g} s "
                            f"(max_restarts = {self.max_restarts})")
        self._restarts.append(now)
        self._attempt += 1
        return Decision(True, self.delay(self._attempt), self._attempt)

    def delay(self, attempt: int) -> float:
        """The backoff before restart ``attempt`` (1-based), from tenacity."""
        # tenacity's waits read only the attempt number of the call state.
        state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
        state.attempt_number = attempt
        return float(self._wait(state))

    def restarts_in_window(self, now: float) -> int:
        """Restarts counted in the current window."""
        self._prune(now)
        return len(self._restarts)

    def budget_left(self, now: float) -> int:
        """Restarts still allowed in the current window."""
        return max(0, self.max_restarts - self.restarts_in_window(now))

    def reset(self) -> None:
        """Forget the history (a person asked for a fresh boot)."""
        self._restarts.clear()
        self._attempt = 0
        self._ready_since = None
