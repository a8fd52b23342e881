"""What scsynth measures of each room's sound: output levels, and its safety stage.

Pure: :class:`Levels` keeps one room's last reading (peak and RMS per output, linear
amplitude) and a history of one point a second (the loudest peak and RMS of that
second) for a sparkline of the last minutes. Readings arrive from the OSC receive
thread and are read by the page's threads, so one lock guards each room.

:class:`StageState` is a room's safety stage as readers see it (its settings, its gain),
:class:`Readings` what the stage measured last.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from scorch.primitives.synthdefs import StageReading

#: Seconds of history kept for the sparkline (one point a second).
HISTORY_SECONDS = 300
#: The quietest level shown, in dBFS; anything below reads as this.
FLOOR_DB = -90.0
#: The loudest (a synth gone wild, inf): JSON carries no infinity.
CEILING_DB = 60.0


def db(amplitude: float) -> float:
    """A linear amplitude in dBFS, within :data:`FLOOR_DB` (silence, NaN) and the ceiling."""
    if not amplitude > 0 or math.isnan(amplitude):
        return FLOOR_DB
    if math.isinf(amplitude):
        return CEILING_DB
    return min(CEILING_DB, max(FLOOR_DB, round(20.0 * math.log10(amplitude), 1)))


@dataclass(frozen=True)
class Reading:
    """One report of a room's meter: when, and each output's peak and RMS in dBFS."""

    time: float
    peak: tuple[float, ...]
    rms: tuple[float, ...]


class Levels:
    """One room's last reading and its history, one point per second."""

    def __init__(self, seconds: int = HISTORY_SECONDS) -> None:
        self._lock = threading.Lock()
        self._last: Reading | None = None
        self._history: deque[tuple[int, float, float]] = deque(maxlen=seconds)
        self.readings = 0
        """How many reports came in (the tests wait on it)."""

    def add(self, now: float, peaks: list[float], rms: list[float]) -> None:
        """Take one report (linear amplitudes, as SendPeakRMS sends them)."""
        reading = Reading(now, tuple(db(p) for p in peaks), tuple(db(r) for r in rms))
        second = int(now)
        loud, mean = max(reading.peak, default=FLOOR_DB), max(reading.rms, default=FLOOR_DB)
        with self._lock:
            self._last = reading
            self.readings += 1
            if self._history and self._history[-1][0] == second:
                _, was_loud, was_mean = self._history[-1]
                self._history[-1] = (second, max(was_loud, loud), max(was_mean, mean))
            else:
                self._history.append((second, loud, mean))

    def last(self, now: float, stale: float = 1.0) -> Reading | None:
        """The last reading, unless it is older than ``stale`` seconds."""
        with self._lock:
            last = self._last
        return last if last is not None and now - last.time <= stale else None

    def history(self, now: float, seconds: int = HISTORY_SECONDS) -> list[tuple[int, float, float]]:
        """(second, loudest peak, loudest RMS) of the last ``seconds``, oldest first."""
        since = int(now) - seconds
        with self._lock:
            return [point for point in self._history if point[0] > since]


Listener = Callable[[StageReading], None]


@dataclass(frozen=True)
class StageState:
    """The stage of one room (replaced whole on change, never mutated)."""

    enabled: bool = True
    ceiling_dbfs: float = -1.0
    max_lufs: float | None = None
    gain_db: float = 0.0
    """The master gain it is set to (or fading to)."""
    fade_s: float = 0.0
    """The fade the last change of the gain took."""
    latency: int = 0
    """Samples the stage delays the room's sound by (0: no stage)."""


class Readings:
    """What the stage measured last, and who is told each new reading (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: StageReading | None = None
        self._listeners: list[Listener] = []

    @property
    def last(self) -> StageReading | None:
        """The latest reading (None before the first, or since scsynth went down)."""
        return self._last

    def add(self, reading: StageReading | None) -> None:
        """Take a reading (the OSC receive thread), or forget the last one (None)."""
        self._last = reading
        if reading is None:
            return
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(reading)

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Tell ``listener`` every reading from now on (in the OSC receive thread: it must
        not block); returns what stops it."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop
