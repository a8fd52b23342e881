"""When a timed request happens: ``at`` (a wall-clock time, the next beat or bar) or ``delay``.

Pure. A time is Unix seconds (``time.time()``), the same on every host whose
clock chrony keeps in step; scsynth turns it into a sample of its own audio
clock when it gets the bundle (``scorch.primitives.scsynth.commands.at``).

"The next beat or bar of the shared tempo" needs a :class:`TempoGrid`: where
beat 0 fell, the tempo and the bar's length. Whoever runs the shared tempo
(Ableton Link, the ``tempo`` operation) hands one to :func:`resolve`; without
one, ``next_beat`` and ``next_bar`` are refused with what to do instead.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

from scorch.errors import InvalidRequest

NEXT_BEAT: Literal["next_beat"] = "next_beat"
NEXT_BAR: Literal["next_bar"] = "next_bar"
Quantum = Literal["next_beat", "next_bar"]

#: An ``at`` or ``delay`` further ahead than this is refused (a typo, or milliseconds).
MAX_AHEAD = 3600.0
#: An ``at`` further in the past than this is refused: a clock is off, or the time is wrong.
#: Nearer past times play at once (scsynth runs a late bundle as soon as it gets it).
MAX_LATE = 10.0


class TempoGrid(NamedTuple):
    """The shared tempo's grid of beats in wall-clock time."""

    bpm: float
    """Beats per minute."""
    beats_per_bar: int
    """The bar's length in beats (bars start on beat 0, 4, 8... for 4)."""
    beat_zero: float
    """The Unix time of beat 0."""

    def beat_at(self, when: float) -> float:
        """The beat (fractional) at Unix time ``when``."""
        return (when - self.beat_zero) * self.bpm / 60.0

    def time_of(self, beat: float) -> float:
        """The Unix time of ``beat``."""
        return self.beat_zero + beat * 60.0 / self.bpm

    def next(self, quantum: Quantum, now: float) -> float:
        """The Unix time of the next beat, or of the next bar's first beat, after ``now``."""
        step = 1 if quantum == NEXT_BEAT else self.beats_per_bar
        beat = math.floor(self.beat_at(now) / step + 1e-9) * step + step
        return self.time_of(beat)


def resolve(at: float | Quantum | None, delay: float | None, now: float,
            grid: TempoGrid | None = None) -> float | None:
    """The Unix time a request happens at, or None for now.

    InvalidRequest says why when both are given, when the time is too far ahead
    or behind, or when a beat is asked for without a shared tempo.
    """
    if at is not None and delay is not None:
        raise InvalidRequest("give at or delay, not both")
    if delay is not None:
        if not 0 <= delay <= MAX_AHEAD:
            raise InvalidRequest(f"delay must be 0 to {MAX_AHEAD:g} s, found {delay:g}")
        return now + delay
    if at is None:
        return None
    if isinstance(at, str):
        if grid is None:
            raise InvalidRequest(
                f"at = {at!r} needs the shared tempo, and none runs here yet; give a time "
                "(Unix seconds) or a delay instead")
        return grid.next(at, now)
    if not math.isfinite(at):
        raise InvalidRequest(f"at must be a finite Unix time, found {at!r}")
    if at > now + MAX_AHEAD:
        raise InvalidRequest(f"at is {at - now:.1f} s ahead; at most {MAX_AHEAD:g} s is "
                             "allowed (at is a Unix time in seconds, e.g. time.time() + 2)")
    if at < now - MAX_LATE:
        raise InvalidRequest(f"at is {now - at:.1f} s in the past (now is {now:.3f}); is a "
                             "clock off? `scorch doctor` shows this host's offset")
    return float(at)
