"""The ``pattern-events`` records ``ScorchPatternEvents.sc`` sends: what patterns played.

sclang sees every event a pattern plays (rests too) and tells a batch of them a
few times a second, each with its logical time, its notes, their length and
amplitude, and the proxy that played it (``Pdef acc``, ``Tdef loop``; empty for
a player of no proxy, such as a bare ``Pbind(...).play``). Pure: no process, no
thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Events one batch may hold: sclang keeps at most its own limit, this guards the parse.
MAX_EVENTS = 2000


@dataclass(frozen=True)
class PatternEvent:
    """One event a pattern played."""

    key: str
    """``Pdef acc``, ``Tdef loop`` (a Pbindef is a Pdef), or "" for no proxy."""
    time: float
    """Unix time of its logical beat (it sounds a server latency later)."""
    sustain: float
    """Seconds each of its notes holds."""
    amp: float
    pitches: tuple[int, ...]
    """MIDI note numbers; empty for a rest or an event that plays no note."""
    beat: float | None = None
    """Its logical beat on the room's clock that follows scorch's grid (None: it played on
    another clock): where it falls on the grid, exactly, as ``time`` is not."""


@dataclass(frozen=True)
class Batch:
    """The events of one record, and how many sclang left out past its limit."""

    events: list[PatternEvent]
    dropped: int = 0

    def last_times(self) -> dict[str, float]:
        """The Unix time of each proxy's last event in the batch (rests count)."""
        last: dict[str, float] = {}
        for event in self.events:
            if event.key and event.time > last.get(event.key, -math.inf):
                last[event.key] = event.time
        return last


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def parse_events(payload: str) -> Batch:
    """Read a ``pattern-events`` payload; a line that does not fit is left out.

    ValueError when the first line (the Unix time of sclang's elapsed second 0) does not.
    """
    lines = payload.split("\n")
    offset = _number(lines[0])
    events: list[PatternEvent] = []
    dropped = 0
    for line in lines[1:MAX_EVENTS + 1]:
        fields = line.split("\t", 5)
        if len(fields) == 2 and fields[0] == "dropped" and fields[1].isdigit():
            dropped += int(fields[1])
            continue
        if len(fields) != 6:
            continue
        seconds, beat, sustain, amp, pitches, key = fields
        try:
            notes = tuple(int(p) for p in pitches.split(",") if p) if pitches else ()
            event = PatternEvent(key, offset + _number(seconds), max(0.0, _number(sustain)),
                                 max(0.0, _number(amp)), tuple(p for p in notes if 0 <= p < 128),
                                 _number(beat) if beat else None)
        except ValueError:
            continue
        events.append(event)
    dropped += max(0, len(lines) - 1 - MAX_EVENTS)
    return Batch(events, dropped)
