"""The key of a pitch-class profile: Krumhansl-Schmuckler, then the mode it leans to. Pure.

The Krumhansl-Schmuckler key-finding algorithm (Krumhansl 1990, *Cognitive Foundations
of Musical Pitch*, ch. 4) correlates a piece's pitch-class distribution (each pitch
class weighted by how long it sounds) with the probe-tone profiles of the 24 major and
minor keys measured by Krumhansl and Kessler (1982, "Tracing the dynamic changes in
perceived tonal organization in a spatial representation of musical keys",
*Psychological Review* 89(4)); the best correlation names the key.

Major and minor alone do not say "D dorian". Once the tonic is found, the scale
degrees that tell the church modes apart decide it (each against its neighbour a
semitone away): over a minor tonic, a major sixth outweighing the minor sixth is
dorian, a minor second outweighing the major second phrygian, else minor (aeolian);
over a major tonic, an augmented fourth outweighing the fourth is lydian, a minor
seventh outweighing the major seventh mixolydian, else major (ionian).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

#: Sharps, as the rest of scorch names notes.
PITCH_CLASSES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
#: Krumhansl and Kessler's (1982) probe-tone ratings, tonic first.
MAJOR_PROFILE = (6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88)
MINOR_PROFILE = (6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17)
#: A mode's telling degree must outweigh its neighbour by this factor to name it.
_MODAL_MARGIN = 1.5


class Key(NamedTuple):
    """A key and how sure the analysis is of it."""

    tonic: int
    """Pitch class of the tonic, 0 = C."""
    mode: str
    """major or minor: the Krumhansl-Schmuckler answer."""
    modal: str
    """The mode it leans to: major, minor, dorian, phrygian, lydian or mixolydian."""
    correlation: float
    """Pearson correlation with the best key's profile, -1 to 1."""
    margin: float
    """How far the best correlation is above the next key's (0: a tie)."""

    @property
    def name(self) -> str:
        """Such as ``D dorian``, ``F# minor``, ``C major``."""
        return f"{PITCH_CLASSES[self.tonic]} {self.modal}"

    @property
    def plain(self) -> str:
        """The major or minor key alone, such as ``D minor``."""
        return f"{PITCH_CLASSES[self.tonic]} {self.mode}"


def find_key(profile: Sequence[float]) -> Key | None:
    """The key of a 12-value pitch-class profile (C first); None when it is flat or empty."""
    if len(profile) != 12:
        raise ValueError(f"a pitch-class profile has 12 values, not {len(profile)}")
    weights = [max(0.0, float(w)) for w in profile]
    if _spread(weights) <= 1e-12:
        return None
    scores = sorted(((correlation(weights, _rotated(shape, tonic)), tonic, mode)
                     for mode, shape in (("major", MAJOR_PROFILE), ("minor", MINOR_PROFILE))
                     for tonic in range(12)), reverse=True)
    (best, tonic, mode), second = scores[0], scores[1][0]
    return Key(tonic, mode, _modal(weights, tonic, mode), best, best - second)


def _modal(weights: list[float], tonic: int, mode: str) -> str:
    """The church mode the degrees around ``tonic`` lean to."""
    def degree(semitones: int) -> float:
        return weights[(tonic + semitones) % 12]

    def outweighs(telling: int, usual: int) -> bool:
        return degree(telling) > _MODAL_MARGIN * degree(usual)

    if mode == "minor":
        if outweighs(9, 8):
            return "dorian"
        return "phrygian" if outweighs(1, 2) else "minor"
    if outweighs(6, 5):
        return "lydian"
    return "mixolydian" if outweighs(10, 11) else "major"


def correlation(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson's correlation of two equal-length sequences (0 when either is flat)."""
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    da = [x - mean_a for x in a]
    db = [y - mean_b for y in b]
    norm = math.sqrt(sum(x * x for x in da) * sum(y * y for y in db))
    return sum(x * y for x, y in zip(da, db, strict=True)) / norm if norm > 0 else 0.0


def _rotated(shape: Sequence[float], tonic: int) -> list[float]:
    """The profile of the key on ``tonic``: its value for pitch class p is shape[p - tonic]."""
    return [shape[(pc - tonic) % 12] for pc in range(12)]


def _spread(weights: list[float]) -> float:
    mean = sum(weights) / 12
    return sum((w - mean) ** 2 for w in weights)


def profile_of(notes: Sequence[tuple[int, float]]) -> list[float]:
    """The pitch-class profile of (MIDI pitch, duration in seconds or beats) pairs."""
    weights = [0.0] * 12
    for pitch, duration in notes:
        weights[pitch % 12] += max(0.0, duration)
    return weights
