"""The tempo of a list of onsets, and how far they lie from a grid of beats.

numpy is imported inside the tempo's estimate; the grid is plain Python.

Tempo: every pair of onsets up to two seconds apart votes for the beat periods their
distance is a whole number of (or, for a beat's halves and quarters, a half or a
quarter of), each vote a Gaussian of 8 ms around the exact multiple; the votes are
weighted by a preference for 120 bpm an octave wide (as beat trackers do: Ellis 2007,
"Beat Tracking by Dynamic Programming", *J. New Music Research* 36(1)), so a beat of
eighths is heard at its beat, not at twice it. The period with most votes wins, then
is refined to the period the onsets fit best in a least-squares sense.

Grid: onsets are placed on the coarsest subdivision of the beat (whole beats,
eighths, triplets, sixteenths...) that every onset fits (90 % of them within a sixth
of a step), and each onset's offset is its distance to the nearest line of that grid,
negative when early. A grid with no known phase (a file) takes the phase that makes
the median offset zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

#: Tempi looked for.
SLOWEST_BPM, FASTEST_BPM = 60.0, 200.0
#: Fewest onsets for a tempo or a grid figure.
MIN_ONSETS = 4
#: Subdivisions of a beat tried, coarsest first, and how a person says them in 4/4.
SUBDIVISIONS = ((1, "beats"), (2, "eighths"), (3, "triplets"), (4, "sixteenths"),
                (6, "sixteenth triplets"), (8, "thirty-seconds"))
_VOTE_WIDTH = 0.008  # s
_PAIR_SPAN = 2.0  # s: onsets further apart do not vote
_PRIOR_BPM, _PRIOR_OCTAVES = 120.0, 1.0
_STEP_BPM = 0.25
_MOST_ONSETS = 400  # a tempo from the first ones: the pairs grow as their square
_FIT_SHARE, _FIT_STEP = 0.9, 1 / 6  # 90 % of onsets within a sixth of a step


class Tempo(NamedTuple):
    """A tempo heard in onsets."""

    bpm: float
    strength: float
    """The share of onset pairs (up to 2 s apart) that agree with it, 0 to 1."""


class GridFit(NamedTuple):
    """How onsets lie on a grid."""

    bpm: float
    per_beat: int
    """Grid lines per beat: 1 beats, 2 eighths, 3 triplets, 4 sixteenths..."""
    name: str
    offsets: list[float]
    """Each onset's distance to its nearest grid line, seconds (negative: early)."""
    phase_given: bool
    """True when the grid's phase was known; False when fitted to the onsets."""

    @property
    def median(self) -> float:
        """The median offset (seconds): a steady lead or lag."""
        ordered = sorted(self.offsets)
        middle = len(ordered) // 2
        return (ordered[middle] if len(ordered) % 2
                else (ordered[middle - 1] + ordered[middle]) / 2)

    @property
    def worst(self) -> float:
        """The offset furthest from its grid line (seconds, with its sign)."""
        return max(self.offsets, key=abs)


def estimate(onsets: Sequence[float]) -> Tempo | None:
    """The tempo of ``onsets`` (seconds, any order); None with fewer than four."""
    import numpy as np

    times = np.sort(np.asarray(onsets, dtype=np.float64))[:_MOST_ONSETS]
    if len(times) < MIN_ONSETS:
        return None
    pairs = times[np.newaxis, :] - times[:, np.newaxis]
    gaps = pairs[(pairs > 0) & (pairs <= _PAIR_SPAN)]
    if not gaps.size:
        return None
    bpms = np.arange(SLOWEST_BPM, FASTEST_BPM + 1e-9, _STEP_BPM)
    scores = _votes(gaps, 60.0 / bpms) * _prior(bpms)
    period = _refine(times.tolist(), 60.0 / float(bpms[int(np.argmax(scores))]))
    agree = float(_votes(gaps, np.array([period]))[0]) / len(gaps)
    return Tempo(60.0 / period, min(1.0, agree))


def _votes(gaps: Any, periods: Any) -> Any:
    """For each period, how well the gaps are whole multiples of it, of its half or of
    its quarter (0 to len(gaps)), whole beats counting most."""
    import numpy as np

    best = np.zeros((len(periods), len(gaps)))
    for share, weight in ((1.0, 1.0), (0.5, 0.6), (0.25, 0.35)):
        steps = (periods * share)[:, np.newaxis]
        count = np.round(gaps[np.newaxis, :] / steps)
        distance = gaps[np.newaxis, :] - count * steps
        vote = weight * np.exp(-0.5 * (distance / _VOTE_WIDTH) ** 2) * (count >= 1)
        best = np.maximum(best, vote)
    return best.sum(axis=1)


def _prior(bpms: Any) -> Any:
    import numpy as np

    return np.exp(-0.5 * (np.log2(bpms / _PRIOR_BPM) / _PRIOR_OCTAVES) ** 2)


def _refine(times: list[float], period: float) -> float:
    """The period that fits the onsets placed on the nearest quarter-beat in least squares."""
    step = period / 4
    counts = [round((t - times[0]) / step) for t in times]
    n = len(times)
    mean_c, mean_t = sum(counts) / n, sum(times) / n
    spread = sum((c - mean_c) ** 2 for c in counts)
    if spread == 0:
        return period
    slope = sum((c - mean_c) * (t - mean_t) for c, t in zip(counts, times, strict=True)) / spread
    refined = 4 * slope
    return refined if 0.9 * period < refined < 1.1 * period else period


def fit(onsets: Sequence[float], bpm: float, beat_at: float | None = None) -> GridFit | None:
    """How ``onsets`` (seconds) lie on a grid of ``bpm`` whose beats fall at ``beat_at``
    plus whole beats (None: the phase that centres them); None with too few onsets."""
    times = sorted(onsets)
    if len(times) < MIN_ONSETS or bpm <= 0:
        return None
    beat = 60.0 / bpm
    chosen = SUBDIVISIONS[3]  # sixteenths unless a coarser grid holds every onset
    for per_beat, name in SUBDIVISIONS:
        step = beat / per_beat
        own = _offsets(times, step, _centred(times, step))
        within = sorted(abs(o) for o in own)[max(0, math.ceil(_FIT_SHARE * len(own)) - 1)]
        if within <= _FIT_STEP * step:
            chosen = (per_beat, name)
            break
    per_beat, name = chosen
    step = beat / per_beat
    anchor = _centred(times, step) if beat_at is None else beat_at
    return GridFit(bpm, per_beat, name, _offsets(times, step, anchor), beat_at is not None)


def _offsets(times: list[float], step: float, anchor: float) -> list[float]:
    return [((t - anchor + step / 2) % step) - step / 2 for t in times]


def _centred(times: list[float], step: float) -> float:
    """The grid phase that puts the median onset on its line."""
    offsets = sorted(_offsets(times, step, times[0]))
    middle = len(offsets) // 2
    median = (offsets[middle] if len(offsets) % 2
              else (offsets[middle - 1] + offsets[middle]) / 2)
    return times[0] + median
