"""Notes scorch sees or makes: a bounded ring per source that pairs note-on and note-off.

A :class:`NoteRing` is fed from the MIDI hot path, so each message costs O(1)
and allocates only the record of a finished note (a plain tuple; :class:`Note`
is made when read): the pending note-ons sit in two preallocated arrays indexed
by ``channel * 128 + pitch``, and the ring is a preallocated list written round
(``bench/notes_capture.py`` measures it). A note-on with velocity 0 is a note-off; a
note-on for a key already down ends the sounding note first (a retrigger).
The sustain pedal is *not* applied: a note ends when its key is released, as the
performer's hands played it (what a partner learns from, and what a .mid of the
keys holds).

Times are seconds on one clock (``time.monotonic()`` in scorch). :func:`place`
puts a time on the tempo grid of :mod:`scorch.state.tempo`. :meth:`NoteRing.save`
and :func:`load` keep a ring across restarts, re-basing its times on the new
process's clock through the wall clock saved beside them.

Thread: a ring is not locked; its one writer is the thread that owns the MIDI
input. Readers in other threads see each kept note whole (a slot is replaced at
once); a key pressed while :meth:`NoteRing.sounding` reads may show the velocity
of its press before.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, unquote

from scorch.state import Timeline

_KEYS = 16 * 128
SUFFIX = ".notes.jsonl"
#: Sources of what scorch plays rather than hears: the notes the MIDI router starts in a
#: room (``room:NAME``, its key routes' voices after transpose) and sends to a MIDI
#: output (``out:PORT``). Any other source is an input, named as its port is.
ROOM = "room:"
OUTPUT = "out:"
#: After ``room:NAME``: what a partner's answer played in that room.
PARTNER = " partner"


def is_input(source: str) -> bool:
    """True for what a MIDI input played (not what scorch sent to a room or an output)."""
    return not source.startswith((ROOM, OUTPUT))


class Note(NamedTuple):
    """One note, finished (or sounding, with its duration so far)."""

    onset: float
    """Seconds on the capture's clock."""
    duration: float
    """Seconds from onset to release."""
    pitch: int
    """MIDI note number, 60 = C4."""
    velocity: int
    """Note-on velocity, 1 to 127."""
    channel: int = 0
    """MIDI channel, 0 to 15."""
    source: str = ""
    """Who played it: an input, a room, a pattern, a file."""

    @property
    def end(self) -> float:
        """The release time."""
        return self.onset + self.duration


class NoteRing:
    """The last ``size`` notes of one source, paired from note-ons and note-offs."""

    __slots__ = ("_next", "_on", "_ring", "_velocity", "count", "size", "source")

    def __init__(self, source: str, size: int = 4096) -> None:
        if size < 1:
            raise ValueError(f"a ring holds at least one note, got {size}")
        self.source = source
        self.size = size
        # a plain tuple per note (onset, duration, pitch, velocity, channel): a Note's
        # constructor costs more than the rest of a message, so notes() makes them
        self._ring: list[tuple[float, float, int, int, int] | None] = [None] * size
        self._next = 0
        self.count = 0
        """Notes finished since the ring began (those older than ``size`` are gone)."""
        self._on: list[float | None] = [None] * _KEYS
        """The onset of each key down, by ``channel * 128 + pitch``; None while it is up."""
        self._velocity = [0] * _KEYS

    def message(self, t: float, status: int, data1: int, data2: int) -> None:
        """Feed one raw channel message at ``t``; any but note-on and note-off is ignored.

        A note-on at velocity 0 is a note-off; a release without a press is ignored.
        """
        kind = status & 0xF0
        if kind != 0x90 and kind != 0x80:
            return
        key = ((status & 0x0F) << 7) | data1
        on = self._on
        onset = on[key]
        if onset is not None:  # a release, or a retrigger: the sounding note ends
            on[key] = None
            at = self._next
            self._ring[at] = (onset, t - onset, data1, self._velocity[key], status & 0x0F)
            self._next = at + 1 if at + 1 < self.size else 0
            self.count += 1
        if kind == 0x90 and data2:
            on[key] = t
            self._velocity[key] = data2

    def note_on(self, t: float, channel: int, pitch: int, velocity: int) -> None:
        """A key went down at ``t`` (velocity 0: it went up)."""
        self.message(t, 0x90 | channel, pitch, velocity)

    def note_off(self, t: float, channel: int, pitch: int) -> None:
        """A key went up at ``t``."""
        self.message(t, 0x80 | channel, pitch, 0)

    def add(self, note: Note) -> None:
        """Keep a finished note, forgetting the oldest when the ring is full."""
        self._ring[self._next] = (note.onset, note.duration, note.pitch, note.velocity,
                                  note.channel)
        self._next = (self._next + 1) % self.size
        self.count += 1

    def notes(self) -> list[Note]:
        """Every finished note kept, in onset order."""
        source = self.source
        kept = [Note(onset, max(0.0, duration), pitch, velocity, channel, source)
                for onset, duration, pitch, velocity, channel in filter(None, self._ring)]
        kept.sort()
        return kept

    def since(self, count: int) -> list[Note]:
        """The notes finished after the first ``count`` (those still kept), in onset order.

        What a learner has not seen yet, given the :attr:`count` it saw last.
        """
        fresh = min(max(0, self.count - count), self.size)
        source, ring, at = self.source, self._ring, self._next
        picked = [ring[(at - 1 - i) % self.size] for i in range(fresh)]
        kept = [Note(onset, max(0.0, duration), pitch, velocity, channel, source)
                for onset, duration, pitch, velocity, channel in filter(None, picked)]
        kept.sort()
        return kept

    def between(self, t0: float, t1: float) -> list[Note]:
        """The finished notes with an onset in ``[t0, t1)``, in onset order."""
        return [n for n in self.notes() if t0 <= n.onset < t1]

    def sounding(self, t: float) -> list[Note]:
        """The keys down at ``t``, each with its duration so far, in onset order."""
        down = [
            Note(onset, max(0.0, t - onset), key & 0x7F, self._velocity[key], key >> 7, self.source)
            for key, onset in enumerate(self._on) if onset is not None
        ]
        down.sort()
        return down

    def held(self, t: float) -> list[Note]:
        """The kept notes that sound at ``t``: those kept whole before they end, as a
        pattern's are (its events come with their length), each with its length so far."""
        return [n._replace(duration=t - n.onset) for n in self.notes() if n.onset <= t < n.end]

    def save(self, folder: Path, clock: tuple[float, float] | None = None) -> Path:
        """Write the finished notes to ``folder`` as JSON lines; return the file.

        ``clock`` is (monotonic, wall) now; the first line keeps it so that
        :func:`load` can move the times onto another process's clock.
        """
        mono, wall = clock if clock is not None else (time.monotonic(), time.time())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (quote(self.source, safe="") + SUFFIX)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            out.write(json.dumps({"source": self.source, "monotonic": mono, "wall": wall}) + "\n")
            for n in self.notes():
                out.write(json.dumps([round(n.onset, 6), round(n.duration, 6), n.pitch,
                                      n.velocity, n.channel]) + "\n")
        tmp.replace(path)  # a crash mid-write leaves the last good file
        return path


def load(path: Path, size: int = 4096, clock: tuple[float, float] | None = None) -> NoteRing:
    """A ring holding the notes saved in ``path``, its times on this process's clock.

    Lines that do not read as a note (a torn last line) are skipped.
    """
    mono, wall = clock if clock is not None else (time.monotonic(), time.time())
    lines = path.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0]) if lines else {}
    source = str(head.get("source", unquote(path.name.removesuffix(SUFFIX))))
    # the same wall instant on both clocks: old monotonic -> wall -> new monotonic
    shift = (mono - wall) - (float(head.get("monotonic", mono)) - float(head.get("wall", wall)))
    ring = NoteRing(source, size)
    for line in lines[1:]:
        try:
            onset, duration, pitch, velocity, channel = json.loads(line)
            note = Note(float(onset) + shift, float(duration), int(pitch), int(velocity),
                        int(channel), source)
        except (ValueError, TypeError):
            continue
        ring.add(note)
    return ring


Listener = Callable[[float, int, int, int], None]
"""Told (time, status, data1, data2) of each three-byte message of one source, as it is kept."""


class Capture:
    """A ring per source, made on first use, and who listens to each source."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.rings: dict[str, NoteRing] = {}
        self.listeners: dict[str, Listener] = {}
        """Called by the ring's writer (the MIDI input thread) after each message of a source:
        a listener may only note the time or set an event (it runs on the hot path)."""
        self.awaited: set[str] = set()
        """Sources whose next key press someone waits for now (a partner's answer playing):
        the input thread looks at its queues as often as while MIDI flows."""

    def ring(self, source: str) -> NoteRing:
        """The ring of ``source``, made if it is new."""
        ring = self.rings.get(source)
        if ring is None:
            ring = self.rings[source] = NoteRing(source, self.size)
        return ring

    def between(self, t0: float, t1: float, sources: list[str] | None = None) -> list[Note]:
        """Finished notes with an onset in ``[t0, t1)`` from ``sources`` (None: all)."""
        chosen = self.rings if sources is None else [s for s in sources if s in self.rings]
        return sorted(n for s in chosen for n in self.rings[s].between(t0, t1))

    def sounding(self, t: float, sources: list[str] | None = None) -> list[Note]:
        """The keys down at ``t`` in ``sources`` (None: all)."""
        chosen = self.rings if sources is None else [s for s in sources if s in self.rings]
        return sorted(n for s in chosen for n in self.rings[s].sounding(t))

    def held(self, t: float, sources: list[str] | None = None) -> list[Note]:
        """The kept notes of ``sources`` (None: all) that sound at ``t`` (see NoteRing.held)."""
        chosen = self.rings if sources is None else [s for s in sources if s in self.rings]
        return sorted(n for s in chosen for n in self.rings[s].held(t))

    def save(self, folder: Path, clock: tuple[float, float] | None = None) -> list[Path]:
        """Write every ring to ``folder``; return the files."""
        return [ring.save(folder, clock) for ring in self.rings.values()]

    @classmethod
    def load(cls, folder: Path, size: int = 4096,
             clock: tuple[float, float] | None = None) -> Capture:
        """The rings saved in ``folder`` (none if it does not exist)."""
        capture = cls(size)
        for path in sorted(folder.glob("*" + SUFFIX)) if folder.is_dir() else []:
            ring = load(path, size, clock)
            capture.rings[ring.source] = ring
        return capture


class Place(NamedTuple):
    """A time on the grid: bar and beat counted from 1, as musicians count."""

    bar: int
    beat: float


#: Decimals of a beat a place is counted to, as the text shows it: a note less than half a
#: thousandth of a beat before a bar line is on it (split first and rounded after, it was
#: beat 5 of the bar before).
PLACES = 3


def grid_beat(t: float, line: Timeline) -> float:
    """The grid's beat at ``t``, to the thousandth of a beat a place is counted to."""
    return round(line.beat_at(t), PLACES)


def place(t: float, line: Timeline) -> Place:
    """Where ``t`` falls on the grid of ``line`` (grid beat 0 starts bar 1)."""
    beat = grid_beat(t, line)
    bar = math.floor(beat / line.beats_per_bar + 1e-9)
    return Place(bar + 1, max(0.0, round(beat - bar * line.beats_per_bar, PLACES)) + 1.0)
