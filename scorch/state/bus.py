"""The change bus: each change of the desired state published once, read by everyone who cares.

The owner of a piece of state (a room's actor for its nodes, patterns and buffers,
the conductor for the tempo, the MIDI router for its routes and the values its
knobs sent) publishes each change as a typed, immutable value
(:mod:`scorch.state.changes`). Readers take them in two ways:

- :meth:`Bus.subscribe`: a callback, called in a thread of its own subscription,
  with every change it wants (a filter, asked at publish time), once and in order.
- :meth:`Bus.reader`: a cursor over the last :data:`KEEP` changes, taken when the
  reader likes (a page's stream, a panel's long poll, a test).

:meth:`Bus.publish` never waits on a reader: it numbers the change, keeps it, puts it
in each wanting subscription's own queue and wakes it, under one short lock. A slow
subscriber only falls behind itself (past :data:`QUEUE` changes it misses the oldest,
and is told so with :class:`~scorch.state.changes.Missed`); a failing callback is
logged and its subscription goes on.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from scorch.state.changes import Change, Missed, encode

log = logging.getLogger(__name__)

#: Changes the bus keeps for readers (a morph of ten nodes at 30 a second: 30 s of them).
KEEP = 8192
#: Changes a subscription may fall behind before it misses the oldest.
QUEUE = 8192
#: The seqs of its last changes each subscription remembers (what lags, what it took).
RECENT = 64

Wants = Callable[[Change], bool]


class Published(NamedTuple):
    """A change as the bus carries it."""

    seq: int
    """Its place: 1, 2, 3... in the order published on this bus."""
    at: float
    """The Unix time it was published."""
    change: Change
    """What changed."""


def as_json(published: Published) -> dict[str, object]:
    """A published change as a JSON object: its ``seq``, when it was ``published``, its kind
    (``change``) and its fields."""
    return {"seq": published.seq, "published": published.at, **encode(published.change)}


class Subscription:
    """One subscriber's queue and the thread that hands it the changes, in order."""

    def __init__(self, bus: Bus, callback: Callable[[Published], None], name: str,
                 wants: Wants | None, settle: bool) -> None:
        self.name = name
        self.wants = wants
        self.settle = settle
        """:meth:`Bus.settle` waits for this one (a reader a call's caller must find ahead
        of its next call: the MIDI router's takeover)."""
        self._bus = bus
        self._callback = callback
        self._queue: deque[Published] = deque()
        self._ready = threading.Event()
        self._closed = False
        self.offered = 0
        """The seq of the last change put in its queue."""
        self.done = 0
        """The seq of the last change its callback finished."""
        self.taken = 0
        """Changes handed to its callback."""
        self.missed = 0
        """Changes it fell too far behind to get."""
        self._missing = 0
        self.failed = 0
        """Callbacks that raised."""
        self.recent: deque[int] = deque(maxlen=RECENT)
        """The seqs of the last changes handed to its callback, oldest first."""
        self._thread = threading.Thread(target=self._run, name=f"bus-{name}", daemon=True)

    def _offer(self, published: Published) -> None:
        """Queue one change (the bus's lock held): never waits."""
        if len(self._queue) >= QUEUE:
            self._queue.popleft()
            self.missed += 1
            self._missing += 1
        self._queue.append(published)
        self.offered = published.seq
        self._ready.set()

    def _run(self) -> None:
        bus, queue = self._bus, self._queue
        while True:
            self._ready.wait()
            with bus._lock:
                self._ready.clear()
                if self._closed:
                    return
                batch = list(queue)
                queue.clear()
                missed, self._missing = self._missing, 0
            if missed:
                self._call(Published(batch[0].seq if batch else self.offered, time.time(),
                                     Missed(missed)))
            for published in batch:
                self._call(published)
            with bus._lock:
                self.done = batch[-1].seq if batch else self.done
                bus._lock.notify_all()

    def _call(self, published: Published) -> None:
        self.taken += 1
        if type(published.change) is not Missed:
            self.recent.append(published.seq)
        try:
            self._callback(published)
        except Exception:
            self.failed += 1
            log.exception("bus subscriber %s failed on change %d (%s)", self.name,
                          published.seq, type(published.change).__name__)

    def close(self) -> None:
        """Stop handing it changes (the one being handled finishes); never waits for that."""
        self._bus._drop(self)
        self._closed = True
        self._ready.set()

    def join(self, timeout: float) -> None:
        """Wait for its thread to end (after :meth:`close`), unless called from it."""
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def stats(self) -> dict[str, Any]:
        """How far it got: the last seq offered and done, how many handed, missed and failed,
        and the seqs of the last it took."""
        return {"offered": self.offered, "done": self.done, "taken": self.taken,
                "missed": self.missed, "failed": self.failed, "recent": list(self.recent)}


class Reader:
    """A cursor over the bus's kept changes: each :meth:`take` gives those after the last."""

    def __init__(self, bus: Bus, since: int | None = None) -> None:
        self._bus = bus
        self.seq = bus.seq if since is None else since
        """The seq of the last change taken."""

    def take(self, timeout: float = 0.0) -> list[Published]:
        """The changes after the last taken (waiting up to ``timeout`` for a first one); a
        :class:`Missed` first when some were no longer kept."""
        self._bus.wait(self.seq, timeout)
        taken = self._bus.since(self.seq)
        if taken:
            self.seq = taken[-1].seq
        return taken


class Bus:
    """Typed changes, numbered in the order published; thread-safe."""

    def __init__(self, keep: int = KEEP) -> None:
        self._lock = threading.Condition()
        self._kept: deque[Published] = deque(maxlen=keep)
        self._seq = itertools.count(1)
        self._last = 0
        self._subscriptions: tuple[Subscription, ...] = ()

    @property
    def seq(self) -> int:
        """The seq of the last change published (0: none yet)."""
        return self._last

    def publish(self, change: Change) -> int:
        """Publish ``change``; return its seq. Never waits on a reader."""
        with self._lock:
            self._last = seq = next(self._seq)
            published = Published(seq, time.time(), change)
            self._kept.append(published)
            for subscription in self._subscriptions:
                if _wanted(subscription, change):
                    subscription._offer(published)
            self._lock.notify_all()
        return seq

    def subscribe(self, callback: Callable[[Published], None], name: str,
                  wants: Wants | None = None, settle: bool = False) -> Subscription:
        """Call ``callback`` with each change published from now on that ``wants`` takes
        (all: None), in a thread of its own, once and in order. ``wants`` is asked in the
        publisher's thread: keep it a quick look at the change."""
        subscription = Subscription(self, callback, name, wants, settle)
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)
        subscription._thread.start()
        return subscription

    def _drop(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)
            self._lock.notify_all()

    def subscriptions(self) -> dict[str, dict[str, Any]]:
        """Each subscription's progress, by name (what lags, what fails)."""
        return {s.name: s.stats() for s in self._subscriptions}

    def reader(self, since: int | None = None) -> Reader:
        """A cursor from ``since`` (None: from now)."""
        return Reader(self, since)

    def since(self, seq: int) -> list[Published]:
        """The kept changes after ``seq``, oldest first; a :class:`Missed` first when the
        oldest of those are no longer kept."""
        with self._lock:
            kept, last = self._kept, self._last
            if seq >= last:
                return []
            first = kept[0].seq if kept else last + 1
            out = list(itertools.islice(kept, max(0, seq + 1 - first), None))
        if first > seq + 1:
            return [Published(seq + 1, time.time(), Missed(first - seq - 1)), *out]
        return out

    def wait(self, seq: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a change after ``seq``; True once there is one."""
        with self._lock:
            return self._lock.wait_for(lambda: self._last > seq, max(timeout, 0.0))

    def settle(self, timeout: float) -> bool:
        """Wait until the settling subscriptions handled every change published so far
        (within ``timeout``); False when one is still behind then."""
        with self._lock:
            due = [(s, s.offered) for s in self._subscriptions if s.settle]
            return self._lock.wait_for(
                lambda: all(s.done >= seq or s._closed for s, seq in due), max(timeout, 0.0))

    def close(self) -> None:
        """End every subscription (scorch stops)."""
        for subscription in self._subscriptions:
            subscription.close()


def _wanted(subscription: Subscription, change: Change) -> bool:
    """Whether ``subscription`` takes ``change``; a filter that raises takes nothing (logged),
    never failing the publisher."""
    if subscription.wants is None:
        return True
    try:
        return subscription.wants(change)
    except Exception:
        log.exception("bus subscriber %s: its filter failed on %s", subscription.name,
                      type(change).__name__)
        return False
