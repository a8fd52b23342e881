"""Keep at most one message per (node, param) in flight per interval; keep the newest.

Under a flood of control changes scsynth must not fall behind (it reads OSC once
per audio block, and a full UDP buffer drops datagrams, the last value among
them). When a key was sent less than ``interval`` ago, a new value waits in a
one-slot mailbox that later values overwrite; the sender flushes the slot when
the interval is up. An idle key is sent at once, so a single move costs nothing.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

_PRUNE_AT = 4096


class Coalescer(Generic[T]):
    """Latest-value slots per key, rate-limited to one send per ``interval`` seconds."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._last: dict[Hashable, float] = {}
        self._pending: dict[Hashable, T] = {}
        self.coalesced = 0
        """Values overwritten before they were sent."""

    def offer(self, key: Hashable, item: T, now: float) -> bool:
        """Return True if ``item`` should be sent now; else keep it as ``key``'s newest."""
        if key in self._pending:
            self._pending[key] = item
            self.coalesced += 1
            return False
        last = self._last.get(key)
        if last is None or now - last >= self.interval:
            self._last[key] = now
            return True
        self._pending[key] = item
        return False

    def due(self, now: float) -> tuple[list[T], float | None]:
        """Return the pending items whose interval is up, and when the next one is due."""
        ready: list[T] = []
        next_due: float | None = None
        for key in list(self._pending):
            at = self._last[key] + self.interval
            if at <= now:
                ready.append(self._pending.pop(key))
                self._last[key] = now
            elif next_due is None or at < next_due:
                next_due = at
        if len(self._last) > _PRUNE_AT:
            for key, last in list(self._last.items()):
                if now - last >= self.interval and key not in self._pending:
                    del self._last[key]
        return ready, next_due

    def __len__(self) -> int:
        return len(self._pending)
