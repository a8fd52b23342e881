"""The hours component: the schedule and the cue list, kept by one thread that fires what is due.

The thread looks at the clocks (:class:`~scorch.schedule.clockwork.Keeper`: the
state for now at its start and after a clock jump, each action once at its
time) and at the cues a GO fired, and hands what is due, a little ahead, to
workers that make the calls through the :class:`~scorch.app.hours.fired.Firer`
(the API layer's: the operations, journaled as one step, in the history):
calls that take a time (``set``, ``play``, ``release``, ``execute``) go out at
once stamped with it, so scsynth plays them on its own clock; the others are
made at the time. Every firing is a :class:`Fired`, kept, told to listeners and
written as an event in each room it reached (``SCHEDULED``, or
``SCHEDULE_FAILED`` with why).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from scorch.app.hours.cues import Cues
from scorch.app.hours.fired import Fired, Firer, Outcome, Source
from scorch.app.tree import Tree
from scorch.config import Config, plan_of
from scorch.errors import ConfigError, ScorchError
from scorch.schedule import Call, Due, Keeper, Plan
from scorch.state import Kind

log = logging.getLogger(__name__)

#: Seconds ahead of its time an action is handed to a worker (a timed call's bundle must
#: reach scsynth before its timestamp).
LEAD = 0.2
#: The longest the thread sleeps between two looks at the clocks (a jump is seen by then).
MAX_SLEEP = 1.0
#: Firings kept for the ``schedule`` and ``cue`` operations (and, later, the page).
RECENT = 100
#: Workers making calls: a slow one (a room booting) holds up no other firing.
WORKERS = 4

Listener = Callable[[Fired], None]


class Hours:
    """The schedule and the cue list of one installation (any thread)."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree
        config = tree.config
        self.plan: Plan = plan_of(config.location, config.schedule)
        """The schedule in time (dry runs read it)."""
        self._keeper = Keeper(self.plan, LEAD)
        self._wake = threading.Event()
        self._halt = threading.Event()
        self.cues = Cues(tuple(c.cue() for c in config.cues), config.cueing.double_go,
                         config.cueing.lead, config.state_path(), self._wake.set)
        """The cue list: GO, standby, edits."""
        self.problem: str | None = "the schedule and the cues start once the rooms are up"
        """Why nothing fires now (None: the thread runs)."""
        self._firer: Firer | None = None
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self._recent: deque[Fired] = deque(maxlen=RECENT)
        self._buttons: ThreadPoolExecutor | None = None
        """Makes the cue buttons' calls one after the other, off the MIDI thread."""
        self._listeners: list[Listener] = []

    # --- life -----------------------------------------------------------------------

    def start(self, firer: Firer) -> None:
        """Check every call against its operation, then keep the hours (a thread).

        Its first look applies the state the schedule says for now. A call that does
        not check keeps it all off, saying why (:attr:`problem`). Once only.
        """
        with self._starting:
            if self._firer is not None or self._halt.is_set():
                return
            config = self._tree.config
            self._firer = firer
            try:
                if config.schedule or config.cues:
                    firer.check(config)
            except ConfigError as err:
                self.problem = f"the schedule and cues are off: {err}"
                log.error("%s", self.problem)
                return
            self.problem = None
        self.ensure()

    def ensure(self) -> None:
        """Start the thread once there is something to keep (a schedule, a cue)."""
        with self._starting:
            if (self._thread is not None or self._firer is None or self.problem is not None
                    or self._halt.is_set()):
                return
            if not self._tree.config.schedule and not self.cues.list.cues:
                return
            self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="hours")
            self._thread = threading.Thread(target=self._run, name="hours", daemon=True)
            self._thread.start()

    def running(self) -> bool:
        """Whether the thread keeps the hours."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Stop the thread; calls under way end, nothing waiting fires."""
        self._halt.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        for pool in (self._pool, self._buttons):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        with contextlib.suppress(ScorchError):
            self.cues.flush()

    def check(self, config: Config) -> None:
        """ConfigError when a reloaded config's calls do not check (nothing changes then)."""
        if self._firer is not None and (config.schedule or config.cues):
            self._firer.check(config)

    def reload(self, config: Config) -> None:
        """Take a reloaded config: a new schedule starts from its state for now."""
        plan = plan_of(config.location, config.schedule)
        with self._lock:
            if (plan.entries, plan.place) != (self.plan.entries, self.plan.place):
                self.plan = plan
                self._keeper = Keeper(plan, LEAD)
        self.cues.replace(tuple(c.cue() for c in config.cues), config.cueing.double_go,
                          config.cueing.lead)
        self.ensure()
        self._wake.set()

    def press(self, action: str, cue: str) -> None:
        """A cue button (MIDI): call the cue operation with ``action`` (and ``cue``, '' for
        none) in a worker; never waits (called on the MIDI router's thread)."""
        args = {"action": action, **({"cue": cue} if cue else {})}
        with self._lock:  # held only briefly (start holds _starting through its checks)
            if self._halt.is_set():
                return
            if self._buttons is None:
                self._buttons = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cue-button")
            with contextlib.suppress(RuntimeError):  # shut down meanwhile
                self._buttons.submit(self._call, args)

    def _call(self, args: dict[str, Any]) -> None:
        firer = self._firer
        if firer is None:
            log.warning("a cue button (%s) before the cues started: ignored", args)
            return
        try:
            firer.cue(args)
        except ScorchError as err:
            log.error("cue button %s: %s", args, err)
        except Exception:  # a fault of scorch's: said, and the next press goes on
            log.exception("cue button %s failed", args)

    # --- what fired -----------------------------------------------------------------

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with every :class:`Fired` (in a worker thread; keep it short)."""
        with self._lock:
            self._listeners.append(listener)

    def recent(self) -> list[Fired]:
        """What fired lately, oldest first."""
        with self._lock:
            return list(self._recent)

    def label(self, what: str, when: float) -> str:
        """``what at 2026-12-24 18:00:00.000`` on the installation's wall clock (the same text
        on every host: the journal's entries of one firing match across hosts)."""
        local = datetime.fromtimestamp(when, self.plan.place.zone)
        return f"{what} at {local.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}"

    # --- the thread -----------------------------------------------------------------

    def _run(self) -> None:
        while not self._halt.is_set():
            with self._lock:
                keeper = self._keeper
            tick = keeper.tick(time.time(), time.monotonic())
            if tick.jumped:
                log.warning("the clock jumped %+.1f s: the schedule puts the rooms in its "
                            "state for now", tick.jumped)
            if tick.catch_up:
                self._submit(self._catch_up, tick.catch_up)
            for due in tick.due:
                label = self.label(f"schedule {due.entry.name!r}", due.time)
                self._submit(self._fire, "schedule", label, due.calls, due.time)
            for firing in self.cues.due(time.time() + LEAD):
                label = self.label(firing.cue.label(), firing.time)
                self._submit(self._fire, "cue", label, firing.cue.do, firing.time)
            with contextlib.suppress(ScorchError):
                self.cues.flush()
            soonest = time.time() + MAX_SLEEP
            if tick.wake is not None:
                soonest = min(soonest, tick.wake)
            waiting = self.cues.next_time()
            if waiting is not None:
                soonest = min(soonest, waiting - LEAD)
            self._wake.wait(max(0.0, soonest - time.time()))
            self._wake.clear()

    def _submit(self, task: Callable[..., None], *args: object) -> None:
        if self._pool is not None and not self._halt.is_set():
            with contextlib.suppress(RuntimeError):  # shut down meanwhile
                self._pool.submit(task, *args)

    def _catch_up(self, dues: Sequence[Due]) -> None:
        for due in dues:  # in order, one after the other: oldest first
            part = "" if due.part == "do" else f" {due.part}"
            label = self.label(f"schedule {due.entry.name!r}{part} (state for now)", due.time)
            self._fire("catch-up", label, due.calls, None)

    def _fire(self, source: Source, label: str, calls: Sequence[Call],
              at: float | None) -> None:
        firer = self._firer
        if firer is None or self._halt.is_set():
            return
        try:
            outcomes = firer.fire(label, calls, at, source)
        except Exception as err:  # a fault of scorch's: said, and the thread goes on
            log.exception("%s failed", label)
            outcomes = [Outcome(call, False, f"internal error: {err}") for call in calls]
        fired = Fired(source, label, at if at is not None else time.time(), time.time(),
                      tuple(outcomes))
        self._tell(fired)

    def _tell(self, fired: Fired) -> None:
        with self._lock:
            self._recent.append(fired)
            listeners = list(self._listeners)
        failed = [o for o in fired.outcomes if not o.ok]
        for outcome in failed:
            log.error("%s: %s: %s", fired.label, outcome.call.text(), outcome.error)
        reached = {room for o in fired.outcomes if o.ok for room in o.rooms}
        views = self._tree.views
        for room in sorted(reached | (set(views) if failed else set())):
            view = views.get(room)
            if view is None:
                continue
            mine = [o for o in fired.outcomes if room in o.rooms or (not o.ok and not o.rooms)]
            bad = [o for o in mine if not o.ok]
            kind = Kind.SCHEDULE_FAILED if bad else Kind.SCHEDULED
            what = "; ".join(f"{o.call.text()}: {o.error}" for o in bad) if bad else "; ".join(
                o.call.text() for o in mine)
            view.events.add(kind, f"{fired.label}: {what}"[:500], source=fired.source,
                            due=fired.due, late=round(fired.done - fired.due, 4))
        for listener in listeners:
            try:
                listener(fired)
            except Exception:  # a listener's fault is its own
                log.exception("a listener of the hours failed")
