"""The watch on each room's sound: faults found in what its safety stage measures.

Every room's stage reports a few times a second anyway (peak in and out, the
limiter's gain, NaN caught: ``scorch/primitives/synthdefs/stage.py``), so the watch
costs scsynth nothing more: each reading goes, in the OSC receive thread, through
the room's :class:`~scorch.app.soundwatch.detector.Detector`. A fault that begins or ends
is one typed event in the room's log (``SOUND_SILENT``, ``SOUND_LIMITING``,
``SOUND_NAN``, ``SOUND_HOWL``, ``SOUND_DC``, ``SOUND_XRUNS``, ``SOUND_OK``) with what
was measured (the xruns from the JACK server's console, not the stage); the
action ``[watch]`` names for it (``on_silent``...) is then made by a worker thread
through the firer the API layer arms it with (:meth:`SoundWatch.arm`), as a tool's
call: journaled, in the history, told as ``SOUND_ACTION``. A room without a stage is
not watched.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from scorch.app.hours import Firer
from scorch.app.soundwatch.actions import action_call
from scorch.app.soundwatch.detector import Detector, Finding, Measured, Thresholds
from scorch.app.tree import Tree
from scorch.config import WatchConfig
from scorch.primitives.synthdefs import StageReading
from scorch.state import Kind

log = logging.getLogger(__name__)

#: Seconds over which the xruns' rate is counted (``xruns_per_min``).
XRUN_WINDOW = 60.0


class SoundWatch:
    """Each room's sound faults, from its stage's readings (any thread)."""

    def __init__(self, tree: Tree, xruns: Callable[[], Mapping[str, int]] | None = None
                 ) -> None:
        self._tree = tree
        self._xruns = xruns
        """The xruns so far of the JACK server each room of this host runs on."""
        self._xrun_marks: deque[tuple[float, int]] = deque()
        """(when, xruns so far) a second apart, over the last minute: the rate's base."""
        self._lock = threading.Lock()
        self._detectors: dict[str, Detector] = {}
        self._settings: tuple[object, dict[str, tuple[WatchConfig, Thresholds]]] = (None, {})
        """The config they were read from, and each room's watch keys (a reload: again)."""
        self._firer: Firer | None = None
        self._pending: dict[tuple[str, str], tuple[Finding, str, WatchConfig]] = {}
        """Actions of faults found before :meth:`arm` (a room silent as scorch starts)."""
        self._pool: ThreadPoolExecutor | None = None
        self._ended: dict[tuple[str, str], float] = {}
        """Seconds of the faults that ended, by room and fault (/metrics)."""
        self._stops: dict[str, Callable[[], None]] = {}
        for name in list(tree.views):
            self.watch(name)

    def watch(self, room: str) -> None:
        """Read ``room``'s stage from now on (every room at the start; one a reload adds)."""
        view = self._tree.views.get(room)
        with self._lock:
            if view is None or room in self._stops:
                return
            self._stops[room] = view.stage_readings.listen(partial(self._heard, room))

    def forget(self, room: str) -> None:
        """Read ``room`` no more (a reload removed it)."""
        with self._lock:
            stop = self._stops.pop(room, None)
            self._detectors.pop(room, None)
        if stop is not None:
            stop()

    def arm(self, firer: Firer) -> None:
        """Make the configured actions through ``firer`` from now on (alerts need none),
        first those of faults found before that still last."""
        with self._lock:
            self._firer = firer
            pending, self._pending = self._pending, {}
        for (room, _), (finding, action, watch) in pending.items():
            self._submit(room, finding, action, watch)

    def sound(self, room: str) -> str | None:
        """``ok``, or the worst fault (``nan``, ``howl``, ``dc``, ``limiting``, ``xruns``,
        ``silent``); None before any reading."""
        detector = self._detectors.get(room)
        return detector.sound if detector is not None else None

    def fault_seconds(self) -> dict[tuple[str, str], float]:
        """Seconds each room spent in each fault since scorch started (one going on: so far)."""
        now = time.monotonic()
        with self._lock:
            totals = dict(self._ended)
            detectors = list(self._detectors.items())
        for room, detector in detectors:
            for fault, seconds in detector.lasting(now).items():
                totals[(room, fault)] = totals.get((room, fault), 0.0) + seconds
        return totals

    def close(self) -> None:
        """Watch no more; wait for an action under way."""
        with self._lock:
            stops, self._stops = list(self._stops.values()), {}
        for stop in stops:
            stop()
        with self._lock:
            pool, self._pool, self._firer = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _watch(self, room: str) -> tuple[WatchConfig, Thresholds] | None:
        """The room's watch keys, read once per config (readings come a few times a second)."""
        config = self._tree.config
        seen, rooms = self._settings
        if seen is not config:
            rooms = {}
            for name, inst in config.instances.items():
                w = inst.watch.over(config.watch)
                rooms[name] = (w, Thresholds(w.expect_sound, w.silence_s, w.silence_dbfs,
                                             w.limit_s, w.howl, w.xruns_per_min))
            self._settings = (config, rooms)
        return rooms.get(room)

    def _heard(self, room: str, reading: StageReading) -> None:
        """One reading of ``room``'s stage (the OSC receive thread: quick, never blocks)."""
        settings = self._watch(room)
        view = self._tree.views.get(room)
        if settings is None or view is None:
            return
        watch, limits = settings
        detector = self._detectors.get(room)
        if detector is None or detector.watch != limits:  # a reload changed the keys
            detector = self._detectors[room] = Detector(limits)
        now = time.monotonic()
        xruns = self._xruns_last_min(room, now) if limits.xruns_per_min else 0
        found = detector.feed(Measured(now, reading.peak_in, reading.peak_out,
                                       reading.reduction_db, reading.non_finite, reading.rms_in,
                                       reading.dc_in, xruns))
        view.sound = detector.sound
        for finding in found:
            if finding.kind == Kind.SOUND_OK:
                with self._lock:
                    self._pending.pop((room, finding.fault), None)
                    key = (room, finding.fault)
                    self._ended[key] = self._ended.get(key, 0.0) + finding.details["lasted_s"]
            action = (None if finding.kind == Kind.SOUND_OK
                      else str(getattr(watch, f"on_{finding.fault}")))
            view.events.add(finding.kind, finding.message, **finding.details,
                            **({"action": action} if action else {}))
            if action is not None and action != "alert":
                self._submit(room, finding, action, watch)

    def _xruns_last_min(self, room: str, now: float) -> int:
        """How many xruns the room's JACK server reported in the last minute (0: not known)."""
        total = self._xruns().get(room) if self._xruns is not None else None
        if total is None:
            return 0
        with self._lock:
            marks = self._xrun_marks
            if not marks or now - marks[-1][0] >= 1.0:
                marks.append((now, total))
            while now - marks[0][0] > XRUN_WINDOW:  # the newest mark is now's: one stays
                marks.popleft()
            return max(0, total - marks[0][1])

    def _submit(self, room: str, finding: Finding, action: str, watch: WatchConfig) -> None:
        with self._lock:
            if self._firer is None:  # made once armed, if the fault lasts till then
                self._pending[(room, finding.fault)] = (finding, action, watch)
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="soundwatch")
            self._pool.submit(self._act, room, finding, action, watch)

    def _act(self, room: str, finding: Finding, action: str, watch: WatchConfig) -> None:
        """Make ``action`` for ``finding`` in ``room`` (the worker thread), and tell it."""
        firer, view = self._firer, self._tree.views.get(room)
        if view is None:
            return
        call = action_call(room, action, watch, view.stage.gain_db)
        error: str | None
        if firer is None:
            ok, error = False, "the watch's actions start once the rooms are up"
        else:
            try:
                outcomes = firer.fire(f"watch: {room} {finding.fault}", [call], None, "watch")
                ok = all(o.ok for o in outcomes)
                error = "; ".join(o.error for o in outcomes if o.error) or None
            except Exception as err:  # a fault of scorch's: said, and the watch goes on
                log.exception("watch action %s in %s failed", action, room)
                ok, error = False, f"internal error: {err}"
        said = f"{action} for {finding.fault}: " + ("done" if ok else f"failed: {error}")
        view.events.add(Kind.SOUND_ACTION, said, action=action, fault=finding.fault,
                        call=call.text(), ok=ok, error=error)
