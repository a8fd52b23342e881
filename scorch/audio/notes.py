"""Name the equal-tempered note nearest a frequency (A4 = 440 Hz). Pure."""

from __future__ import annotations

import math
from typing import NamedTuple

#: The reference pitch: MIDI note 69 (A4).
A4_HZ = 440.0
_A4_MIDI = 69
_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


class Note(NamedTuple):
    """The nearest note to a frequency and how far off it is."""

    name: str
    """Scientific pitch notation with sharps, such as ``A4`` or ``C#3``."""
    cents: int
    """Deviation from the note in cents, -50 to +50 (positive is sharp)."""


def midi_number(hz: float) -> float:
    """Return the fractional MIDI note number of ``hz`` (69.0 for 440 Hz)."""
    if hz <= 0:
        raise ValueError(f"a frequency must be positive, not {hz}")
    return _A4_MIDI + 12 * math.log2(hz / A4_HZ)


def nearest_note(hz: float) -> Note:
    """Return the note nearest ``hz`` and the deviation from it in cents."""
    midi = midi_number(hz)
    nearest = round(midi)
    cents = round((midi - nearest) * 100)
    return Note(f"{_NAMES[nearest % 12]}{nearest // 12 - 1}", int(cents))


def format_cents(cents: int) -> str:
    """Return cents with an explicit sign: ``+0``, ``+12``, ``-7``."""
    return f"{cents:+d}"
