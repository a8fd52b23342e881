"""The Watchdog actor: pings every READY instance and reports the ones that went silent.

Exits are noticed at once by the processes' reader threads; this actor is for
hangs, which only silence reveals. It pings from its own thread through the
instances' thread-safe links, so a busy instance actor never delays a check.
"""

from __future__ import annotations

import contextlib
import logging
import time

import pykka

from actors.instance import InstanceProxy
from actors.ticker import Ticker
from scorch.primitives import commands
from scorch.primitives.process import cpu_seconds, stopped
from scorch.state.events import State
from scorch.state.health import HealthPolicy
from scorch.state.view import InstanceView

log = logging.getLogger(__name__)

STATUS = commands.status()

#: sclang gets more slack than scsynth: garbage collection and class-library
#: work can hold the interpreter for a moment without anything being wrong.
SCLANG_SLACK = 2.0


class Watchdog(pykka.ThreadingActor):
    """Ping scsynth with /status and sclang with a marker; report silence as a hang."""

    def __init__(self, instances: dict[str, tuple[InstanceView, InstanceProxy]],
                 interval: float, missed: int, busy_limit: float = 30.0) -> None:
        super().__init__()
        self.instances = instances
        self.scsynth_policy = HealthPolicy(interval, missed, busy_limit)
        self.sclang_policy = HealthPolicy(interval * SCLANG_SLACK, missed, busy_limit)
        self.interval = interval
        self._ticker: Ticker | None = None
        # Per instance and process: the object watched and since when.
        self._watched: dict[tuple[str, str], tuple[object, float]] = {}
        self._reported: dict[tuple[str, str], int] = {}
        # Per instance: scsynth's pid, its CPU seconds, and when they last grew.
        self._cpu: dict[str, tuple[int | None, float, float]] = {}

    def on_start(self) -> None:
        """Start the ticker (it only ``tell``s; the checks run in the actor)."""
        self._ticker = Ticker(self.interval, self.actor_ref.proxy().tick,
                              "watchdog-ticker").start()

    def on_stop(self) -> None:
        """Stop the ticker (actor thread)."""
        if self._ticker is not None:
            self._ticker.stop()

    def _since(self, key: tuple[str, str], link: object, now: float) -> float:
        watched = self._watched.get(key)
        if watched is None or watched[0] is not link:
            self._watched[key] = (link, now)
            return now
        return watched[1]

    def _progress(self, name: str, pid: int | None, now: float) -> float | None:
        """When the process's CPU time last grew (None where the OS cannot say)."""
        used = cpu_seconds(pid)
        if used is None:
            return None
        seen = self._cpu.get(name)
        if seen is None or seen[0] != pid or used > seen[1]:
            self._cpu[name] = (pid, used, now)
            return now
        return seen[2]

    def tick(self) -> None:
        """Ping every READY instance and report processes silent for too long."""
        now = time.monotonic()
        for name, (view, proxy) in self.instances.items():
            if view.snapshot.state not in (State.READY, State.DEGRADED):
                self._watched.pop((name, "scsynth"), None)
                self._watched.pop((name, "sclang"), None)
                continue
            osc = view.osc
            if osc is not None:
                since = self._since((name, "scsynth"), osc, now)
                progress = self._progress(name, view.snapshot.scsynth_pid, now)
                if self.scsynth_policy.hung(now, osc.last_heard, since, progress):
                    self._report(name, "scsynth", view.snapshot.scsynth_pid, proxy,
                                 self.scsynth_policy.silent_for(now, osc.last_heard, since))
                else:
                    osc.send(STATUS)
            session = view.sclang
            if session is not None:
                since = self._since((name, "sclang"), session, now)
                if session.busy() and not stopped(view.snapshot.sclang_pid):
                    # Evaluating code within its time is not hanging; a stopped
                    # process is never busy, whatever it was doing.
                    self._watched[(name, "sclang")] = (session, now)
                elif self.sclang_policy.hung(now, session.last_pong, since):
                    self._report(name, "sclang", view.snapshot.sclang_pid, proxy,
                                 self.sclang_policy.silent_for(now, session.last_pong, since))
                else:
                    with contextlib.suppress(OSError):
                        session.ping()

    def _report(self, name: str, kind: str, pid: int | None, proxy: InstanceProxy,
                silent: float) -> None:
        if pid is None or self._reported.get((name, kind)) == pid:
            return  # already reported; the instance is handling it
        self._reported[(name, kind)] = pid
        log.warning("[%s] %s (pid %d) silent for %.2f s: hung", name, kind, pid, silent)
        proxy.hung(kind, pid, silent)


WatchdogProxy = pykka.ActorProxy[Watchdog]
