"""Releases held until scsynth confirms their synth's start (pure: the caller locks).

scsynth performs every command that arrived during one audio period together,
before it runs the period; a synth whose gate closes in the period of its
``/s_new`` never starts its envelope and never ends. A start sent with
:func:`~scorch.primitives.scsynth.commands.confirmed` is answered by ``/synced``
from scsynth's audio thread a period later at the earliest: a release sent once
that answer is read reaches a synth that has run. One whose answer never comes
(a datagram lost, scsynth stopped) goes :data:`CONFIRM_TIMEOUT` after its start.
"""

from __future__ import annotations

import heapq

Address = tuple[str, int]

#: Seconds a release waits at most for scsynth to confirm its synth's start.
CONFIRM_TIMEOUT = 0.5


class HeldReleases:
    """Starts not yet confirmed, and the releases that wait for them."""

    def __init__(self, timeout: float = CONFIRM_TIMEOUT) -> None:
        self._timeout = timeout
        self._started: dict[int, float] = {}
        """Node id -> when its start went out, until scsynth confirmed it."""
        self._held: dict[int, Address] = {}
        """Node id -> the scsynth its release waits to go to."""
        self._deadlines: list[tuple[float, int]] = []
        """When each held release goes anyway: a heap of (due, node id)."""
        self.held = 0
        """Releases that waited for a confirmation."""
        self.unconfirmed = 0
        """Releases sent after the timeout without one."""

    def started(self, node_id: int, now: float) -> None:
        """A start went out now (kept in the order of the starts: :meth:`due` forgets the
        oldest first)."""
        self._started.pop(node_id, None)
        self._started[node_id] = now

    def hold(self, node_id: int, address: Address) -> bool:
        """True when the release of ``node_id`` must wait (its start is unconfirmed)."""
        started = self._started.get(node_id)
        if started is None:
            return False
        self._held[node_id] = address
        heapq.heappush(self._deadlines, (started + self._timeout, node_id))
        self.held += 1
        return True

    def confirmed(self, node_id: int) -> Address | None:
        """scsynth confirmed the start: where its held release goes now (None: none held)."""
        self._started.pop(node_id, None)
        return self._held.pop(node_id, None)

    def drop(self, node_id: int) -> None:
        """The synth was freed: nothing to release."""
        self._started.pop(node_id, None)
        self._held.pop(node_id, None)

    def due(self, now: float) -> list[tuple[int, Address]]:
        """The held releases whose confirmation is overdue (they go now); starts unconfirmed
        this long no longer hold a release back."""
        out = []
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= now:
            node_id = heapq.heappop(deadlines)[1]
            address = self._held.pop(node_id, None)
            if address is not None:  # else confirmed and sent already
                self._started.pop(node_id, None)
                out.append((node_id, address))
        self.unconfirmed += len(out)
        started, old = self._started, now - self._timeout
        while started:  # the oldest first: a flood's hundreds are not read at every tick
            node_id = next(iter(started))
            if started[node_id] > old:
                break
            del started[node_id]
        return out

    def next_due(self) -> float | None:
        """When the next held release goes anyway (None: none is held)."""
        return self._deadlines[0][0] if self._deadlines else None

    def waiting(self) -> bool:
        """A start is unconfirmed or a deadline pending: someone must look again."""
        return bool(self._started or self._deadlines)

    def take_all(self) -> list[tuple[int, Address]]:
        """Every held release, to send now (a close); forget the rest."""
        out = list(self._held.items())
        self._started.clear()
        self._held.clear()
        self._deadlines.clear()
        return out
