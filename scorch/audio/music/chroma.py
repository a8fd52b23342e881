"""Pitch classes heard in audio: a chroma per stretch, with each note's overtones folded in.

A plain chroma (every bin's energy added to its pitch class) hears a single sawtooth
C as a C major chord: its 3rd and 5th harmonics are a G and an E. So each stretch's
spectral peaks are taken lowest first, and a peak that is a whole multiple (2nd to
16th harmonic, within 1.5 %) of a lower one already kept, and not louder than it, is
that note's overtone, not a note. The notes left add their amplitude to their pitch
class; the lowest is the bass.

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from scorch.audio.notes import midi_number
from scorch.audio.spectrum import average_spectrum, peaks

#: Lowest and highest note looked for (A0 to C7): above C7 a low note's high overtones
#: crowd out the notes.
LOW_HZ, HIGH_HZ = 27.5, 2093.0
_PEAKS = 24
_HARMONICS = range(2, 17)
_HARMONIC_TOLERANCE = 0.015
_LOUDER_DB = 3.0  # an overtone this much louder than its root is a note of its own
#: Stretches shorter than this (s) are too short for notes a semitone apart in the bass.
MIN_SECONDS = 0.15


class Chroma(NamedTuple):
    """The pitch classes of one stretch."""

    profile: list[float]
    """Amplitude per pitch class, C first."""
    bass: int | None
    """The lowest note's pitch class."""
    notes: list[int]
    """The MIDI notes heard, lowest first."""


def chroma(mono: NDArray[np.float64], sample_rate: int) -> Chroma:
    """The pitch classes of ``mono``."""
    profile = [0.0] * 12
    if len(mono) < MIN_SECONDS * sample_rate or not np.any(mono):
        return Chroma(profile, None, [])
    found = [p for p in peaks(average_spectrum(mono, sample_rate), limit=_PEAKS)
             if LOW_HZ * 0.97 <= p.hz <= HIGH_HZ * 1.03]
    kept: list[tuple[float, float]] = []  # (hz, dB), lowest first
    for peak in sorted(found, key=lambda p: p.hz):
        if not any(_overtone(peak.hz, peak.db, hz, db) for hz, db in kept):
            kept.append((peak.hz, peak.db))
    notes = [round(midi_number(hz)) for hz, _ in kept]
    for note, (_, db) in zip(notes, kept, strict=True):
        profile[note % 12] += 10 ** (db / 20)
    return Chroma(profile, notes[0] % 12 if notes else None, notes)


def _overtone(hz: float, db: float, root_hz: float, root_db: float) -> bool:
    ratio = hz / root_hz
    whole = round(ratio)
    return (whole in _HARMONICS and abs(ratio - whole) <= _HARMONIC_TOLERANCE * whole
            and db <= root_db + _LOUDER_DB)
