"""Standard MIDI Files: a range of notes out with the grid's tempo and meter, a .mid in.

:func:`write` puts notes on a type-0 file whose beat 0 is the bar line at or
before the first note, with the tempo and meter of a :class:`Timeline`, so the
bars in a sequencer are the grid's bars. :func:`read` gives a file's notes in
seconds from its start, the tempo map honoured (mido walks it), and the grid of
its first tempo and meter. :func:`quantise` snaps onsets and ends to a grid.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from scorch.notes.capture import Note, NoteRing
from scorch.state import Timeline

TICKS_PER_BEAT = 480

#: What mido raises on a file that is not a Standard MIDI File, or a broken one.
UNREADABLE: tuple[type[Exception], ...] = (OSError, EOFError, ValueError, KeyError, IndexError)


def write(notes: list[Note], path: Path, line: Timeline,
          ticks_per_beat: int = TICKS_PER_BEAT) -> float:
    """Write ``notes`` to ``path`` on the grid of ``line``; return the time of the file's 0.

    The file starts on the bar line at or before the first note's tick (a note a
    fraction of a tick before a bar line is on it); its tempo and time signature are
    the grid's (a beat is a quarter note).
    """
    notes = sorted(notes)

    def ticks(t: float) -> int:  # the grid's ticks since its beat 0
        return round(line.beat_at(t) * ticks_per_beat)

    bar = line.beats_per_bar * ticks_per_beat
    start = (ticks(notes[0].onset) if notes else ticks(line.at)) // bar * bar
    events: list[tuple[int, int, int, int, int]] = []  # tick, off-before-on, channel, pitch, vel
    for n in notes:
        on = ticks(n.onset) - start
        off = max(on + 1, ticks(n.end) - start)
        events.append((on, 1, n.channel, n.pitch, n.velocity))
        events.append((off, 0, n.channel, n.pitch, 0))
    events.sort()  # at one tick the offs go first, so a repeated key sounds again
    import mido  # here, not at start: `scorch run` loads this module, few runs write files

    track = mido.MidiTrack()
    track.append(mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(line.bpm), time=0))
    track.append(mido.MetaMessage("time_signature", numerator=line.beats_per_bar,
                                  denominator=4, time=0))
    now = 0
    for tick, is_on, channel, pitch, velocity in events:
        kind = "note_on" if is_on else "note_off"
        track.append(mido.Message(kind, channel=channel, note=pitch, velocity=velocity,
                                  time=tick - now))
        now = tick
    track.append(mido.MetaMessage("end_of_track", time=0))
    path.parent.mkdir(parents=True, exist_ok=True)
    midi = mido.MidiFile(type=0, ticks_per_beat=ticks_per_beat)
    midi.tracks.append(track)
    midi.save(str(path))
    return line.time_at(start / ticks_per_beat)


class FileNotes(NamedTuple):
    """What a .mid holds: its notes, seconds from its start, and its grid."""

    notes: list[Note]
    line: Timeline
    """The file's first tempo and meter, beat 0 at time 0."""


def read(path: Path, source: str = "", grid: float | None = None) -> FileNotes:
    """The notes of the .mid at ``path`` (quantised to ``grid`` beats if given).

    Onsets are seconds from the file's start through its whole tempo map; the
    grid returned is its first tempo (120 bpm, 4/4 when it says none).
    """
    import mido

    midi = mido.MidiFile(str(path))
    ring = NoteRing(source or path.stem, size=1 << 20)
    bpm, beats_per_bar = None, None
    now = 0.0
    for msg in midi:  # merged tracks, msg.time in seconds by the tempo map
        now += msg.time
        if msg.type == "set_tempo" and bpm is None:
            bpm = mido.tempo2bpm(msg.tempo)
        elif msg.type == "time_signature" and beats_per_bar is None:
            beats_per_bar = max(1, round(msg.numerator * 4 / msg.denominator))
        elif msg.type == "note_on":
            ring.note_on(now, msg.channel, msg.note, msg.velocity)
        elif msg.type == "note_off":
            ring.note_off(now, msg.channel, msg.note)
    for held in ring.sounding(now):  # a file that ends with keys down ends them there
        ring.add(held)
    line = Timeline(round(bpm, 6) if bpm else 120.0, beats_per_bar or 4, beat=0.0, at=0.0)
    notes = ring.notes()
    return FileNotes(quantise(notes, line, grid) if grid else notes, line)


def quantise(notes: list[Note], line: Timeline, grid: float = 0.25) -> list[Note]:
    """``notes`` with onsets and ends on the nearest multiple of ``grid`` beats.

    A note never shrinks below one grid step (so none vanishes).
    """
    if grid <= 0:
        raise ValueError(f"a grid is a positive number of beats, got {grid}")
    out = []
    for n in notes:
        on = round(line.beat_at(n.onset) / grid) * grid
        end = max(on + grid, round(line.beat_at(n.end) / grid) * grid)
        onset = line.time_at(on)
        out.append(n._replace(onset=onset, duration=line.time_at(end) - onset))
    return sorted(out)
