"""Keep the rooms' events in the history behind ``scorch report`` (state folder, sqlite).

A thread reads every room's :class:`~scorch.state.events.EventLog` now and then and
appends what is new, so rooms never wait on the file; it prunes the file to its bounds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from scorch.app.history.store import HISTORY_FILE, History, Recorded, Sample
from scorch.state import RoomView, db

log = logging.getLogger(__name__)

POLL_S = 1.0  # how often the rooms' logs are read (a room's log keeps far more than this)
PRUNE_S = 600.0
SAMPLE_S = 10.0  # the safety stage's last reading of each room, kept this often
#: Short-term loudness under this is not kept (BS.1770-4's absolute gate: silence).
GATE_LUFS = -70.0


class Recorder:
    """Copy new events of every room into the history file; one daemon thread."""

    def __init__(self, state: Path, views: Callable[[], Mapping[str, RoomView]],
                 xruns: Callable[[], Mapping[str, int]] | None = None) -> None:
        self.path = state / HISTORY_FILE
        self._views = views
        self._xruns = xruns
        """The xruns so far of the JACK server each room of this host runs on."""
        self._marks: dict[str, int] = {}
        #: one flush at a time: the thread's and a caller's would take one range between
        #: them, and the caller return before the thread had written its part
        self._flushing = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._history: History | None = None

    def start(self) -> None:
        """Open the file and begin (a file that cannot be opened is logged, not raised)."""
        if self._thread is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._history = History(self.path)
        except Exception as err:  # the report is a convenience: it never stops a run
            log.error("history: %s cannot be opened (%s); scorch report will miss this run",
                      self.path, err)
            return
        self._thread = threading.Thread(target=self._run, name="history", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Write what is left and close the file."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        if self._history is not None:
            self.flush()
            self._history.close()
            self._history = None

    def _run(self) -> None:
        pruned = sampled = 0.0
        while not self._stopping.wait(POLL_S):
            try:
                self.flush()
                if time.monotonic() - sampled >= SAMPLE_S:
                    sampled = time.monotonic()
                    self.sample(time.time())
                if self._history is not None and time.monotonic() - pruned > PRUNE_S:
                    pruned = time.monotonic()
                    self._history.prune(time.time())
            except Exception:  # a full disk must not end the run
                log.exception("history: writing the rooms' events failed")

    def flush(self) -> None:
        """Append every room's events since the last call."""
        with self._flushing:
            if self._history is None:
                return
            new: list[Recorded] = []
            for name, view in list(self._views().items()):
                events = view.events.since(self._marks.get(name, 0))
                if events:
                    self._marks[name] = events[-1].seq
                new += [Recorded(e.time, name, str(e.kind), e.message, e.details)
                        for e in events]
            if new:
                self._history.add_events(new)

    def sample(self, now: float) -> None:
        """Keep each room's peak, gain reduction and short-term loudness from its safety
        stage's last reading, and the xruns of the JACK server it runs on."""
        if self._history is None:
            return
        found: list[Sample] = []
        xruns = self._xruns() if self._xruns is not None else {}
        found += [Sample(now, name, "xruns", float(count)) for name, count in xruns.items()]
        for name, view in list(self._views().items()):
            reading = view.stage_readings.last  # none without a stage or while it is down
            if reading is not None:
                found += [Sample(now, name, "peak_dbfs", db(reading.peak_out)),
                          Sample(now, name, "gain_reduction_db",
                                 -db(reading.least_gain) - reading.loudness_db)]
                if reading.loudness_lufs >= GATE_LUFS:  # silence is no part of its loudness
                    found.append(Sample(now, name, "lufs", round(reading.loudness_lufs, 1)))
        if found:
            self._history.add_samples(found)
