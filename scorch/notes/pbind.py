"""Notes as a Pdef: the sclang code that plays a .mid's notes on a room's grid.

A file's notes become one ``Pdef`` of one ``Pbind`` whose events step through the
notes in onset order (``dur`` the time to the next onset, so chords are events
``dur`` 0 apart; ``sustain`` each note's length). Being a Pdef, it is what every
pattern in scorch is: listed by ``playing``, kept and resumed on the next bar when
sclang restarts, stopped by name. Pure: no process, no thread.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from scorch.notes.capture import Note
from scorch.state import Timeline

#: Notes one file may put in a Pdef (its code stays far under execute's limit).
MAX_NOTES = 5000

#: How loud the loudest velocity plays (the library's SynthDefs default near 0.1-0.2).
FULL_AMP = 0.4

#: What the code of :func:`pdef_code` returns (a symbol, as sclang prints it) when the room
#: does not know the SynthDef; else the beat its first event plays on (:func:`start_beat`).
NO_SYNTHDEF = "noSynthDef"

_NAME = re.compile(r"[^A-Za-z0-9_]+")


def pattern_name(stem: str) -> str:
    """A Pdef name made from a file's stem: letters, digits and ``_``, starting with a letter."""
    name = _NAME.sub("_", stem).strip("_") or "midi"
    return name if name[0].isalpha() else f"m_{name}"


@dataclass(frozen=True)
class Score:
    """A file's notes laid out in beats, ready to become a Pbind."""

    pitches: list[int | None]
    """MIDI note per event; None for the rest before the first note."""
    durs: list[float]
    """Beats from each event to the next (the last one: to the end)."""
    sustains: list[float]
    amps: list[float]
    beats: float
    """The whole length in beats, rounded up to whole bars of the file's meter."""
    notes: int


def lay_out(notes: list[Note], line: Timeline) -> Score:
    """``notes`` (seconds from the file's start) in beats of ``line``, ready to play.

    The score starts at the file's beat 0 (a rest up to its first note) and lasts to
    the end of the bar its last note ends in, so a looped score keeps its bars.
    """
    if not notes:
        raise ValueError("the file holds no notes")
    if len(notes) > MAX_NOTES:
        raise ValueError(f"the file holds {len(notes)} notes; at most {MAX_NOTES} play as one "
                         "pattern (split it, or quantise and trim it first)")
    ordered = sorted(notes)
    onsets = [max(0.0, line.beat_at(n.onset)) for n in ordered]
    end = max(line.beat_at(n.end) for n in ordered)
    bar = line.beats_per_bar
    beats = max(bar, math.ceil(end / bar - 1e-6) * bar)
    pitches: list[int | None] = []
    durs: list[float] = []
    sustains: list[float] = []
    amps: list[float] = []
    if onsets[0] > 1e-6:
        pitches.append(None)
        durs.append(onsets[0])
        sustains.append(onsets[0])
        amps.append(0.0)
    for i, (note, onset) in enumerate(zip(ordered, onsets, strict=True)):
        following = onsets[i + 1] if i + 1 < len(onsets) else beats
        pitches.append(note.pitch)
        durs.append(max(0.0, following - onset))
        sustains.append(max(1e-3, line.beat_at(note.end) - line.beat_at(note.onset)))
        amps.append(FULL_AMP * note.velocity / 127)
    return Score(pitches, durs, sustains, amps, beats, len(ordered))


def velocity_of(amp: float) -> int:
    """The velocity an event's ``amp`` stands for: :func:`lay_out`'s mapping turned round."""
    return max(1, min(127, round(amp / FULL_AMP * 127)))


def symbol(text: str) -> str:
    """``text`` as an sclang symbol literal (``'name'``), whatever it holds."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _literal(values: list[float]) -> str:
    return "#[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def pdef_code(score: Score, name: str, synthdef: str, *, quant: float, loop: bool,
              again: bool = False) -> str:
    """The code that defines ``Pdef(name)`` for ``score`` and plays it on the next ``quant``.

    Its value is the beat of the room's clock (which follows the grid) that its first
    event plays on. ``again``: a Pdef of that name still playing is stopped first, so
    this score starts on that beat (else its player plays on, and takes the new score
    as its next events). Literal arrays (``#[...]``) keep the whole score one literal
    each, whatever its size.
    """
    pitches = "#[" + ", ".join("\\rest" if p is None else str(p) for p in score.pitches) + "]"
    body = (f"Pbind(\\instrument, {symbol(synthdef)}, \\midinote, Pseq({pitches}), "
            f"\\dur, Pseq({_literal(score.durs)}), \\sustain, Pseq({_literal(score.sustains)}), "
            f"\\amp, Pseq({_literal(score.amps)}))")
    if loop:
        body = f"Pn({body}, inf)"
    stop = f"Pdef(\\{name}).stop; " if again else ""
    return (f"if(SynthDescLib.global.at({symbol(synthdef)}).isNil) {{ \\{NO_SYNTHDEF} }} "
            f"{{ {stop}Pdef(\\{name}, {body}).play(quant: {quant:g}); "
            f"TempoClock.default.nextTimeOnGrid({quant:g}) }}")


def start_beat(value: str | None) -> float | None:
    """The beat :func:`pdef_code`'s value says its Pdef starts on (None: it says none)."""
    try:
        beat = float(value or "")
    except ValueError:
        return None
    return beat if math.isfinite(beat) else None
