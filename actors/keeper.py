"""Keep one supervised thing running: restart it after each fault, with backoff, or give up.

A :class:`Keeper` runs a thread per supervised thing (a room, the private
jackd). Its loop is tenacity's: each *attempt* starts what is down (through
``restart``, which asks the owning actor, so processes are still spawned from
the actor's thread) and then watches until the thing has run ``stable_after``
seconds without a fault. A fault during the watch, or a failed start, is a
failed attempt: tenacity waits its backoff and tries again, until the restart
intensity is spent; then ``gave_up`` is told why. Running stable ends the
attempt, and the next fault starts over from the shortest wait.

The waits sleep on an event, so :meth:`Keeper.halt` ends any of them at once.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    sleep_using_event,
    stop_when_event_set,
)
from tenacity.stop import stop_base

from scorch.state import Backoff, RestartIntensity

log = logging.getLogger(__name__)

#: Seconds between looks at whether a thing that cannot start yet now can.
STARTABLE_POLL = 1.0


class Fault(Exception):
    """The supervised thing is down: it crashed, or it could not be started."""


class _Spent(stop_base):
    """tenacity's stop condition: the restart intensity has no restart left."""

    def __init__(self, intensity: RestartIntensity) -> None:
        self.intensity = intensity

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self.intensity.exhausted(time.monotonic())


class Keeper:
    """Restart one supervised thing after faults (its own thread; thread-safe methods)."""

    def __init__(self, name: str, backoff: Backoff, intensity: RestartIntensity, *,
                 restart: Callable[[], None], gave_up: Callable[[str], None],
                 retrying: Callable[[float, int, str], None],
                 can_start: Callable[[], bool] = lambda: True) -> None:
        self.name = name
        self._backoff = backoff
        self.intensity = intensity
        self._restart = restart
        """Start what is down; raise on failure (blocking, from the keeper's thread)."""
        self._gave_up = gave_up
        self._retrying = retrying
        """Told (delay, attempt, what failed) before each wait."""
        self._can_start = can_start
        """False while something outside the thing keeps it down (its JACK server)."""
        self._halt = threading.Event()
        self._signal = threading.Event()
        self._lock = threading.Lock()
        self._fault: str | None = None
        self._failed_start = False
        self._thread: threading.Thread | None = None

    def start(self, fault: str | None = None) -> None:
        """Start watching; with ``fault`` (a failed first start), restart after a backoff."""
        self._fault = fault
        self._failed_start = fault is not None
        self._thread = threading.Thread(target=self._run, name=f"keeper-{self.name}",
                                        daemon=True)
        self._thread.start()

    def fault(self, what: str) -> None:
        """The thing went down (any thread): the watch ends and a restart follows."""
        with self._lock:
            self._fault = what
        self._signal.set()

    def wake(self) -> None:
        """Look again whether the thing can start (its JACK server is back)."""
        self._signal.set()

    def halt(self) -> None:
        """Stop keeping: any wait ends at once, nothing more is restarted."""
        self._halt.set()
        self._signal.set()

    @property
    def halted(self) -> bool:
        """True once halted."""
        return self._halt.is_set()

    @property
    def running(self) -> bool:
        """True while the keeper's thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float) -> None:
        """Wait for the keeper's thread to end (after :meth:`halt`)."""
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # -- the keeper's thread ------------------------------------------------------------

    def _run(self) -> None:
        while not self._halt.is_set():
            retrying = Retrying(
                retry=retry_if_exception_type(Fault),
                wait=self._backoff.wait(),
                stop=stop_when_event_set(self._halt) | _Spent(self.intensity),
                sleep=sleep_using_event(self._halt),
                before_sleep=self._before_sleep,
            )
            try:
                retrying(functools.partial(self._attempt, itertools.count(1)))
            except RetryError as err:
                if not self._halt.is_set():
                    last = err.last_attempt.exception()
                    self._gave_up(f"{self.intensity.reason(time.monotonic())}; last: {last}")
                return
            except Exception:  # a bug, not a fault: say so, and keep nothing half-kept
                log.exception("keeper of %s failed", self.name)
                return

    def _before_sleep(self, retry_state: RetryCallState) -> None:
        failure = retry_state.outcome.exception() if retry_state.outcome else None
        self._retrying(retry_state.upcoming_sleep, retry_state.attempt_number, str(failure))

    def _attempt(self, attempts: Iterator[int]) -> None:
        """Start what is down and watch until stable (return), or until down again (raise);
        ``attempts`` numbers the attempts of one run of retries."""
        number = next(attempts)
        if self._failed_start:  # the owner's own first start failed: that was attempt 1
            self._failed_start = False
            raise Fault(self._fault or "the first start failed")
        with self._lock:
            fault = self._fault
            if number == 1 and fault is not None:
                # Down before this thread first looked (it started late): attempt 1 is
                # this fault, as if it had been watching, so the restart waits the
                # shortest backoff as every first restart does.
                raise Fault(fault)
            self._fault = None
        if fault is None:
            self._watch(None)  # running and stable: only a fault ends this attempt
            return
        self._wait_until_startable()
        if self._halt.is_set():
            return
        self.intensity.record(time.monotonic())
        self._signal.clear()
        try:
            self._restart()
        except Exception as err:
            with self._lock:
                self._fault = str(err)
            raise Fault(str(err)) from err
        self._watch(time.monotonic() + self._backoff.stable_after)

    def _wait_until_startable(self) -> None:
        # Woken when what it waits for is back; looks again every second all the same.
        while not self._can_start() and not self._halt.is_set():
            self._signal.wait(STARTABLE_POLL)
            self._signal.clear()

    def _watch(self, stable_at: float | None) -> None:
        """Return at ``stable_at`` (None: never) or on halt; raise Fault when it goes down."""
        while not self._halt.is_set():
            with self._lock:
                if self._fault is not None:
                    raise Fault(self._fault)
            if stable_at is None:
                self._signal.wait()
            else:
                remaining = stable_at - time.monotonic()
                if remaining <= 0:
                    return
                self._signal.wait(remaining)
            self._signal.clear()
