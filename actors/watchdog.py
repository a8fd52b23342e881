"""The Watchdog actor: pings every READY room and reports the ones that went silent.

Exits are noticed at once by the processes' reader threads; this actor is for
hangs, which only silence reveals. It pings from its own thread through the
rooms' doors (:class:`~scorch.state.door.Door`), so a busy room actor never
delays a check.
"""

from __future__ import annotations

import logging
import time

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.room import RoomProxy
from actors.ticker import Ticker
from scorch.errors import ScorchError
from scorch.primitives.scsynth import TREE, commands
from scorch.primitives.system import cpu_seconds, stopped
from scorch.state import Door, HealthPolicy, Pings, RoomView, State

log = logging.getLogger(__name__)

STATUS = commands.status()
#: Seconds between two node trees asked for anyway: the client keeps its synths (from the
#: trees and the node notifications between them), so a crash can say which it lost.
TREE_EVERY = 2.0

#: sclang gets more slack than scsynth: garbage collection and class-library
#: work can hold the interpreter for a moment without anything being wrong.
SCLANG_SLACK = 2.0
#: Seconds between two log lines about checks that failed, per room.
LOG_EVERY = 10.0


class Watchdog(pykka.ThreadingActor):
    """Ping scsynth with /status and sclang with a marker; report silence as a hang."""

    def __init__(self, rooms: dict[str, tuple[RoomView, Door, RoomProxy]],
                 interval: float, missed: int, busy_limit: float = 30.0) -> None:
        super().__init__()
        self.rooms = rooms
        self.scsynth_policy = HealthPolicy(interval, missed, busy_limit)
        self.sclang_policy = HealthPolicy(interval * SCLANG_SLACK, missed, busy_limit)
        self.interval = interval
        self._ticker: Ticker | None = None
        # Per room and process: which process (its door's generation), the pings it owes.
        self._watched: dict[tuple[str, str], tuple[int, Pings]] = {}
        self._trees: dict[str, float] = {}
        """When each room was last asked for its node tree (monotonic)."""
        self._complained: dict[str, float] = {}
        self.last_tick = time.monotonic()
        """When the last check began (the supervisor's health looks at it)."""
        self._reported: dict[tuple[str, str], int] = {}
        # Per room: scsynth's pid, its CPU seconds, when they last grew, and when
        # they were read (only while pings go unanswered: an answered ping says enough).
        self._cpu: dict[str, tuple[int | None, float, float, float]] = {}

    def on_start(self) -> None:
        """Start the ticker (it only ``tell``s; the checks run in the actor)."""
        self._ticker = Ticker(self.interval, self.actor_ref.proxy().tick,
                              "watchdog-ticker").start()

    def on_stop(self) -> None:
        """Stop the ticker (actor thread)."""
        if self._ticker is not None:
            self._ticker.stop()

    def _pings(self, key: tuple[str, str], generation: int) -> Pings:
        """The pings to process ``generation`` behind a door (a new one starts afresh)."""
        watched = self._watched.get(key)
        if watched is None or watched[0] != generation:
            watched = self._watched[key] = (generation, Pings())
        return watched[1]

    def _progress(self, name: str, pid: int | None, now: float, silent_since: float,
                  ) -> float | None:
        """When the process's CPU time last grew (None where the OS cannot say).

        Read only while pings go unanswered, from the first tick of a silence (which
        began at ``silent_since``, the oldest unanswered ping). The first read of a
        silence cannot say when the time grew: it counts as growth at the silence's
        start, so a stopped process is hung as soon as when it was read every tick,
        and a working one shows its growth from the next read on, long before the limit.
        """
        used = cpu_seconds(pid)
        if used is None:
            return None
        seen = self._cpu.get(name)
        if seen is None or seen[0] != pid or seen[3] < silent_since:
            self._cpu[name] = (pid, used, silent_since, now)
            return silent_since
        grew = now if used > seen[1] else seen[2]
        self._cpu[name] = (pid, used, grew, now)
        return grew

    def tick(self) -> None:
        """Ping every READY room and report processes silent for too long.

        A check that fails (out of file descriptors, a process gone mid-look) is
        logged and skipped: a ping that was not sent counts for nothing.
        """
        self.last_tick = time.monotonic()
        for name, (view, door, proxy) in self.rooms.items():
            try:
                self._check(name, view, door, proxy)
            except ScorchError:  # its process went between two looks: the next tick sees why
                pass
            except Exception as err:  # the watchdog must outlive any one check
                self._could_not_look(name, err)

    def ticked_at(self) -> float:
        """``time.monotonic()`` of the last check."""
        return self.last_tick

    def _check(self, name: str, view: RoomView, door: Door, proxy: RoomProxy) -> None:
        if view.snapshot.state not in (State.READY, State.DEGRADED):
            self._watched.pop((name, "scsynth"), None)
            self._watched.pop((name, "sclang"), None)
            return
        osc = door.scsynth
        if osc.is_open:
            pings = self._pings((name, "scsynth"), osc.generation)
            pings.heard(osc.last_heard)
            now = time.monotonic()
            oldest = pings.oldest
            progress = (None if oldest is None else
                        self._progress(name, view.snapshot.scsynth_pid, now, oldest))
            if self.scsynth_policy.hung(now, pings, progress):
                self._report(name, "scsynth", view.snapshot.scsynth_pid, proxy,
                             self.scsynth_policy.silent_for(now, pings), pings.unanswered)
            else:
                osc.send(STATUS)
                pings.record(now)  # before any reply to it: a reply is always newer
                if now - self._trees.get(name, 0.0) >= TREE_EVERY:
                    self._trees[name] = now
                    osc.send(TREE)
        session = door.sclang
        if session.is_open:
            pings = self._pings((name, "sclang"), session.generation)
            pings.heard(session.last_pong)
            now = time.monotonic()
            if session.busy() and not stopped(view.snapshot.sclang_pid):
                # Evaluating code within its time is not hanging; a stopped
                # process is never busy, whatever it was doing.
                pings.clear()
            elif self.sclang_policy.hung(now, pings):
                self._report(name, "sclang", view.snapshot.sclang_pid, proxy,
                             self.sclang_policy.silent_for(now, pings), pings.unanswered)
            else:
                session.ping()
                pings.record(now)

    def _could_not_look(self, name: str, err: Exception) -> None:
        now = time.monotonic()
        if now - self._complained.get(name, -LOG_EVERY) >= LOG_EVERY:
            self._complained[name] = now
            log.warning("[%s] the watchdog could not check it (%s: %s); the time it could "
                        "not look counts as unknown, not as silence", name,
                        type(err).__name__, err)

    def _report(self, name: str, kind: str, pid: int | None, proxy: RoomProxy,
                silent: float, unanswered: int) -> None:
        if pid is None or self._reported.get((name, kind)) == pid:
            return  # already reported; the room is handling it
        self._reported[(name, kind)] = pid
        log.warning("[%s] %s (pid %d) answered none of %d pings over %.2f s: hung", name,
                    kind, pid, unanswered, silent)
        proxy.hung(kind, pid, silent)


class WatchdogProxy(ActorMemberMixin, pykka.ActorProxy[Watchdog]):
    """The watchdog's typed proxy (``Watchdog.start(...).proxy()`` is cast to it)."""

    ticked_at = proxy_method(Watchdog.ticked_at)
