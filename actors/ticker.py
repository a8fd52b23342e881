"""A thread that tells an actor to act every so often (pykka has no timers)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pykka


class Ticker:
    """Call ``tell`` every ``interval`` seconds until stopped or the actor is gone.

    ``tell`` should only put a message in the actor's inbox (a proxy call whose
    future nobody waits on): the work then runs in the actor's own thread.
    """

    def __init__(self, interval: float, tell: Callable[[], object], name: str) -> None:
        self.interval = interval
        self._tell = tell
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Ticker:
        """Start ticking; returns itself."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop ticking (a tick already told still runs)."""
        self._halt.set()

    def _run(self) -> None:
        while not self._halt.wait(self.interval):
            try:
                self._tell()
            except pykka.ActorDeadError:
                return
