"""A room's safety stage as readers see it: its settings, its gain, what it last measured."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from scorch.primitives.synthdefs.stage import StageReading

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
