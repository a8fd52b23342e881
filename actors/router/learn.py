"""Learning: the next control or note moved, handed to whoever waits for it."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from midi import Engine


class Learners:
    """The callers waiting for the next control moved (any thread; the router's lock)."""

    def __init__(self, lock: threading.Lock, engine: Engine) -> None:
        self._lock = lock
        self._engine = engine
        self._waiting: list[Future[dict[str, Any] | None]] = []

    def arm(self, timeout_s: float) -> Future[dict[str, Any] | None]:
        """A future of the first control or note moved within ``timeout_s`` (None: none).

        Learners armed together all get the same event.
        """
        learned: Future[dict[str, Any] | None] = Future()
        learned.set_running_or_notify_cancel()  # not cancellable: only the router ends it
        with self._lock:
            self._waiting.append(learned)
            self._engine.learn = self._learned
        timer = threading.Timer(timeout_s, self._expired, args=(learned,))
        timer.name, timer.daemon = "midi-router-learn", True
        timer.start()
        learned.add_done_callback(lambda _: timer.cancel())
        return learned

    def cancel(self) -> None:
        """End every learner with None (the router stops)."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
            self._engine.learn = None
        for learner in waiting:
            learner.set_result(None)  # its done callback cancels its timer

    def _learned(self, event: dict[str, object]) -> None:
        """Hand the first moved control to every learner (called with the lock held)."""
        waiting, self._waiting = self._waiting, []
        for learner in waiting:
            learner.set_result(dict(event))

    def _expired(self, learned: Future[dict[str, Any] | None]) -> None:
        """End one learner with None; disarm the engine if it was the last (timer thread)."""
        with self._lock:
            if learned not in self._waiting:
                return  # an event got there first
            self._waiting.remove(learned)
            if not self._waiting:
                self._engine.learn = None
        learned.set_result(None)
