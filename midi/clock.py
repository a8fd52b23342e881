"""MIDI clock: follow an external one (tempo smoothed from its ticks), and what to send.

MIDI clock is 24 ticks (``F8``) per quarter note. ``FA`` start: the next tick is
song position 0; ``FB`` continue: the next tick goes on from the song position;
``FC`` stop. ``F2 lsb msb`` sets the song position in sixteenths while stopped.
A device counts ticks from there, so the tempo is the ticks' rate and the
position their count.

:class:`ClockFollower` is pure: the router feeds it each clock message with its
time and reads back a :class:`ClockReading`. Its tempo is the least-squares slope
of the last :data:`WINDOW` ticks' times, which smooths the jitter of a JACK period
(a tick's time is only known to the cycle it arrived in).
"""

from __future__ import annotations

import math
from collections import deque
from typing import NamedTuple

PPQN = 24
TICK, START, CONTINUE, STOP, SONG_POSITION = 0xF8, 0xFA, 0xFB, 0xFC, 0xF2
CLOCK_MESSAGES = frozenset({TICK, START, CONTINUE, STOP, SONG_POSITION})
#: Ticks the tempo is fitted over (two beats), and the fewest that give a tempo.
WINDOW = 48
MIN_TICKS = 12
#: A gap this long between ticks (seconds) means the clock stopped: fit afresh.
GAP = 1.0
#: Song position pointer's range in sixteenths (14 bits).
MAX_SIXTEENTHS = 16383


class ClockReading(NamedTuple):
    """What an external clock says at one tick."""

    bpm: float | None
    """The fitted tempo (None until :data:`MIN_TICKS` ticks came in a row)."""
    position: float
    """Song position in beats at ``at``."""
    playing: bool
    at: float
    """When that tick came (``time.monotonic()`` seconds)."""


class ClockFollower:
    """An external MIDI clock's tempo, transport and position (no threads, no clock)."""

    def __init__(self) -> None:
        self._times: deque[float] = deque(maxlen=WINDOW)
        self._ticks = 0
        """Song position in ticks."""
        self._armed = False
        """Start or continue came: the next tick is the first one played."""
        self.playing = False
        self.ticks_seen = 0

    def feed(self, data: list[int], at: float) -> ClockReading | None:
        """Take one clock message; return a reading when the transport changed or on a beat."""
        status = data[0] if data else 0
        if status != SONG_POSITION and len(data) != 1:
            return None  # realtime messages are one byte: anything else is malformed
        if status == TICK:
            return self._tick(at)
        if status == START:
            self._ticks, self._armed = 0, True
        elif status == CONTINUE:
            self._armed = True
        elif status == STOP:
            was, self.playing, self._armed = self.playing, False, False
            if was:
                return self.reading(at)
        elif status == SONG_POSITION and len(data) == 3 and max(data[1:]) < 0x80:
            self._ticks = (data[1] | data[2] << 7) * (PPQN // 4)
        return None

    def _tick(self, at: float) -> ClockReading | None:
        self.ticks_seen += 1
        if self._times and at - self._times[-1] > GAP:
            self._times.clear()
        self._times.append(at)
        changed = False
        if self._armed:
            self._armed, self.playing, changed = False, True, True
        elif self.playing:
            self._ticks += 1
        on_beat = self._ticks % PPQN == 0 if self.playing else self.ticks_seen % PPQN == 0
        return self.reading(at) if changed or on_beat else None

    def bpm(self) -> float | None:
        """The tempo fitted over the last ticks, or None with too few of them."""
        times = self._times
        n = len(times)
        if n < MIN_TICKS:
            return None
        mean_i = (n - 1) / 2.0
        mean_t = sum(times) / n
        spread = sum((i - mean_i) ** 2 for i in range(n))
        slope = sum((i - mean_i) * (t - mean_t) for i, t in enumerate(times)) / spread
        return 60.0 / (PPQN * slope) if slope > 0 else None

    def reading(self, at: float) -> ClockReading:
        """Where the external clock is now (its last tick's time is ``at``)."""
        return ClockReading(self.bpm(), self._ticks / PPQN, self.playing, at)


def song_position(beats: float) -> list[int]:
    """``F2 lsb msb`` for a song position of ``beats`` (the sixteenth it is in, clamped)."""
    sixteenths = max(0, min(MAX_SIXTEENTHS, math.floor(beats * 4 + 1e-9)))
    return [SONG_POSITION, sixteenths & 0x7F, sixteenths >> 7]
