"""Notes as a compact text a model reads easily, and a summary when they are many.

One line per note, grouped by bar::

    bar 3
      3|1     C4   1/8   v96
      3|1.5   E4   1/8   v90

The place is ``bar|beat`` on the grid (beats from 1, fractions as decimals), the
length is a fraction of a whole note (a beat is a quarter), the velocity follows
``v``. When the dump would pass the character budget, :func:`render` gives a
:func:`summary` instead: counts, span, range, pitch-class histogram, density.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from scorch.notes.capture import Note, place
from scorch.state import Timeline

NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


def note_name(pitch: int) -> str:
    """The scientific name of a MIDI note number: 60 is C4, 61 is C#4."""
    return f"{NAMES[pitch % 12]}{pitch // 12 - 1}"


def length_name(beats: float) -> str:
    """A length in beats as a fraction of a whole note (1 beat = 1/4), to the nearest 1/64."""
    whole = Fraction(max(1, round(beats * 16)), 64)
    return f"{whole.numerator}/{whole.denominator}" if whole.denominator != 1 else str(whole)


def _beat_text(beat: float) -> str:
    return f"{beat:.3f}".rstrip("0").rstrip(".")


def dump(notes: list[Note], line: Timeline) -> str:
    """Every note, one line each, grouped by bar, in onset order."""
    out: list[str] = []
    bar_now = None
    for n in sorted(notes):
        where = place(n.onset, line)
        if where.bar != bar_now:
            out.append(f"bar {where.bar}")
            bar_now = where.bar
        beats = n.duration * line.bpm / 60.0
        out.append(f"  {where.bar}|{_beat_text(where.beat):<6} {note_name(n.pitch):<4} "
                   f"{length_name(beats):<5} v{n.velocity}")
    return "\n".join(out)


def summary(notes: list[Note], line: Timeline) -> str:
    """What a range holds in a few lines: counts, span, range, pitch classes, density."""
    if not notes:
        return "no notes"
    notes = sorted(notes)
    first, last = place(notes[0].onset, line), place(notes[-1].onset, line)
    bars = last.bar - first.bar + 1
    low, high = min(n.pitch for n in notes), max(n.pitch for n in notes)
    classes = Counter(n.pitch % 12 for n in notes)
    histogram = " ".join(f"{NAMES[pc]}:{classes[pc]}" for pc in range(12) if classes[pc])
    velocities = [n.velocity for n in notes]
    mean_beats = sum(n.duration for n in notes) / len(notes) * line.bpm / 60.0
    sources = Counter(n.source for n in notes)
    return "\n".join([
        f"{len(notes)} notes in {bars} bar(s), bar {first.bar} to {last.bar} "
        f"({notes[-1].end - notes[0].onset:.1f} s)",
        f"range {note_name(low)} to {note_name(high)}; "
        f"velocity {min(velocities)} to {max(velocities)}; mean length {length_name(mean_beats)}",
        f"pitch classes {histogram}",
        f"density {len(notes) / bars:.1f} notes per bar",
        "sources " + ", ".join(f"{s or '-'}:{c}" for s, c in sources.most_common()),
    ])


def render(notes: list[Note], line: Timeline, budget: int = 4000) -> str:
    """The dump if it fits in ``budget`` characters, else the summary (cut to fit)."""
    text = dump(notes, line) if notes else "no notes"
    if len(text) <= budget:
        return text
    text = summary(notes, line)
    return text if len(text) <= budget else text[: max(0, budget - 1)] + "…"


def records(notes: list[Note], line: Timeline) -> list[dict[str, object]]:
    """The notes as structured data: the record, its place, name and length, in onset order."""
    out: list[dict[str, object]] = []
    for n in sorted(notes):
        where = place(n.onset, line)
        out.append({**n._asdict(), "bar": where.bar, "beat": round(where.beat, 6),
                    "name": note_name(n.pitch),
                    "length": length_name(n.duration * line.bpm / 60.0)})
    return out
