"""A thread that tells an actor to act every so often (pykka has no timers)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Self

import pykka


class Ticker:
    """Call ``tell`` every ``interval`` seconds until stopped or the actor is gone.

    ``tell`` should only put a message in the actor's inbox (a proxy call whose
    future nobody waits on): the work then runs in the actor's own thread. While
    that tick is still queued or running, the next ones are skipped, so a slow tick
    (a busy sclang asked for Link's peers) never piles up ticks in front of the
    actor's other messages.
    """

    def __init__(self, interval: float, tell: Callable[[], object], name: str) -> None:
        self.interval = interval
        """Seconds between ticks; may be changed while it runs (from the next wait on)."""
        self._tell = tell
        self._halted = False
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Self:
        """Start ticking; returns itself."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop ticking (a tick already told still runs)."""
        self._halted = True
        self._wake.set()

    def hurry(self) -> None:
        """Tick now, then every ``interval`` from here (a new interval takes effect at once)."""
        self._wake.set()

    def _wait(self) -> None:
        """Wait until the next tick is due, or hurried, or stopped."""
        self._wake.wait(self.interval)
        self._wake.clear()

    def _run(self) -> None:
        pending: object = None
        while True:
            self._wait()
            if self._halted:
                return
            if isinstance(pending, pykka.Future):
                try:
                    pending.get(timeout=0)
                except pykka.Timeout:
                    continue  # the last tick still runs: no pile of ticks behind a slow one
                except Exception:  # the tick failed; its method logs what went wrong
                    pass
            try:
                pending = self._tell()
            except pykka.ActorDeadError:
                return
