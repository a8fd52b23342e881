"""Name the chord of a pitch-class profile, and the chords of a sequence of them. Pure.

Template matching (Fujishima 1999, "Realtime chord recognition of musical sound: a
system using Common Lisp Music", ICMC): the profile's cosine similarity with each
chord's set of pitch classes on each root; the best names the chord. Where two
chords hold the same pitch classes (C6 and Am7), the one whose root is in the bass
wins, then the simpler. A profile too close to one note, or matching no chord well,
names none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from scorch.audio.music.key import PITCH_CLASSES

#: Chord kinds as their suffix and intervals above the root, simplest first.
KINDS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("", (0, 4, 7)), ("m", (0, 3, 7)), ("5", (0, 7)), ("7", (0, 4, 7, 10)),
    ("m7", (0, 3, 7, 10)), ("maj7", (0, 4, 7, 11)), ("sus4", (0, 5, 7)),
    ("sus2", (0, 2, 7)), ("dim", (0, 3, 6)), ("aug", (0, 4, 8)), ("6", (0, 4, 7, 9)),
    ("m6", (0, 3, 7, 9)), ("m7b5", (0, 3, 6, 10)), ("dim7", (0, 3, 6, 9)),
)
#: The similarity a chord needs (a triad heard with one more note scores 0.87).
MIN_SIMILARITY = 0.8
#: A pitch class counts as sounding at this share of the strongest.
_PRESENT = 0.15


class Chord(NamedTuple):
    """One chord named."""

    root: int
    kind: str
    similarity: float

    @property
    def name(self) -> str:
        """Such as ``Am7``, ``D7``, ``C``."""
        return f"{PITCH_CLASSES[self.root]}{self.kind}"


class Span(NamedTuple):
    """A chord and when it sounds."""

    chord: Chord
    start: float
    end: float


def name_chord(profile: Sequence[float], bass: int | None = None) -> Chord | None:
    """The chord of a 12-value pitch-class profile (``bass``: its lowest pitch class)."""
    weights = [max(0.0, float(w)) for w in profile]
    strongest = max(weights)
    if strongest <= 0 or sum(w >= _PRESENT * strongest for w in weights) < 2:
        return None
    norm = math.sqrt(sum(w * w for w in weights))
    best: tuple[float, int, int, int] | None = None  # similarity, bass root, simplicity, root
    for order, (_, intervals) in enumerate(KINDS):
        for root in range(12):
            members = {(root + i) % 12 for i in intervals}
            similarity = sum(weights[pc] for pc in members) / (norm * math.sqrt(len(members)))
            rank = (round(similarity, 6), int(root == bass), -order, root)
            if best is None or rank > best:
                best = rank
    assert best is not None
    similarity, _, order, root = best
    if similarity < MIN_SIMILARITY:
        return None
    return Chord(root, KINDS[-order][0], similarity)


def progression(segments: Sequence[tuple[float, float, Sequence[float], int | None]],
                ) -> list[Span]:
    """The chords of (start, end, profile, bass) segments in time order, a chord held
    over several segments said once (also across a segment with no chord)."""
    spans: list[Span] = []
    for start, end, profile, bass in segments:
        chord = name_chord(profile, bass)
        if chord is None:
            continue
        if spans and spans[-1].chord.name == chord.name:
            spans[-1] = spans[-1]._replace(end=end)
        else:
            spans.append(Span(chord, start, end))
    return spans
