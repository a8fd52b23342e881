"""Pattern notes on the grid exactly where they played: a differential test in a real room.

Patterns whose onsets are known (straight, swung, with rests, across bar lines, after
a tempo change) play in a room; ``notes played`` and ``notes export`` (read back with
mido) must put every note on the beat the pattern itself played it on. The
references are the pattern's own beats (its start, which the room's sclang reports,
plus its durations) and the tempo grid's ``when`` of those beats (its Unix time).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import mido
import pytest

from scorch.api.local import LocalService
from scorch.api.ops.music.notes import NotesOutput
from scorch.app.orchestra import Orchestra
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import module_orchestra

pytestmark = pytest.mark.integration

BPM = 120.0
BAR = 4
TICKS = 480
#: Seconds a note's Unix time may lie from the grid's `when` of its beat: the two are the
#: same grid read through the monotonic and the wall clock (microseconds apart).
WHEN_SLACK = 0.001


class Known(NamedTuple):
    """A pattern with known onsets: its notes (None: a rest) and their durations in beats."""

    name: str
    notes: list[int | None]
    durs: list[float]

    def code(self) -> str:
        """Play it from the next bar; the value is the beat of the room's clock it starts on."""
        notes = ", ".join("\\rest" if n is None else str(n) for n in self.notes)
        durs = ", ".join(repr(d) for d in self.durs)
        return (f"{{ Pdef(\\{self.name}, Pbind(\\instrument, \\default, \\amp, 0.005, "
                f"\\midinote, Pseq([{notes}]), \\dur, Pseq([{durs}]), \\legato, 0.5))"
                f".play(quant: {BAR}); TempoClock.default.nextTimeOnGrid({BAR}) }}.value")

    def beats(self, start: float) -> list[tuple[float, int]]:
        """(beat, pitch) of each note, from ``start``."""
        onsets = itertools.accumulate(self.durs[:-1], initial=start)
        return [(b, n) for b, n in zip(onsets, self.notes, strict=True) if n is not None]


STRAIGHT = Known("kick", [36] * 8, [1.0] * 8)
SWUNG = Known("swing", [60, 62, 64, 65, 67, 65, 64, 62], [2 / 3, 1 / 3] * 4)
RESTS = Known("rests", [48, None, 50, None, None, 52, 53, None], [0.5] * 8)
ACROSS = Known("across", [72, 71, 69, 67, 65, 64], [1.5] * 6)  # dotted: over bar lines
AFTER = Known("after", [40, 43, 45, None, 47, 50], [0.75, 0.75, 1.0, 0.5, 0.25, 1.0])


def place(beat: float) -> tuple[int, float]:
    """bar|beat of a grid beat, as musicians count (beat 0 is bar 1's first)."""
    bar = math.floor(beat / BAR + 1e-9)
    return bar + 1, round(beat - bar * BAR + 1.0, 3)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Orchestra]:
    folder = tmp_path_factory.mktemp("pattern-grid")
    with module_orchestra(folder, "pattern-grid",
                          f"[midi]\nenabled = false\n[tempo]\nbpm = {BPM}\n"
                          "[instances.lobby]\n", library) as orch:
        yield orch


def play(orch: Orchestra, patterns: list[Known]) -> dict[str, float]:
    """Start ``patterns`` together on the next bar; the beat each starts on."""
    code = "[" + ", ".join(p.code() for p in patterns) + "]"
    result = orch.rooms.execute_one("lobby", code, timeout=10)
    assert result.ok and result.value is not None, result
    starts = [float(v) for v in result.value.strip("[ ]").split(",")]
    return {p.name: s for p, s in zip(patterns, starts, strict=True)}


def wait_until_beat(orch: Orchestra, beat: float) -> None:
    """Sleep until the grid passed ``beat``, and the last events reached scorch."""
    grid = orch.tempo.grid()
    assert grid is not None
    time.sleep(max(0.0, grid.time_of(beat) - time.time()) + 0.6)


def check(service: LocalService, orch: Orchestra, pattern: Known, start: float,
          folder: Path) -> None:
    """The pattern's notes read back and exported, each on the beat it played."""
    grid = orch.tempo.grid()
    assert grid is not None
    want = pattern.beats(start)
    source = f"lobby/Pdef {pattern.name}"
    since = grid.time_of(start) - 0.05
    read = service.call("notes", {"action": "played", "input": source, "since": since})
    assert isinstance(read, NotesOutput)
    got = [(n.bar, n.beat, n.pitch) for n in read.notes]
    assert got == [(*place(b), p) for b, p in want], read.listing
    for note, (beat, _) in zip(read.notes, want, strict=True):  # the grid's when of its beat
        assert note.onset == pytest.approx(grid.time_of(beat), abs=WHEN_SLACK)
    lines = [line.split()[0] for line in read.listing.splitlines() if "|" in line]
    assert lines == [f"{b}|{f'{x:.3f}'.rstrip('0').rstrip('.')}" for b, x, _ in got]

    path = folder / f"{pattern.name}.mid"
    out = service.call("notes", {"action": "export", "input": source, "since": since,
                                 "path": str(path)})
    assert isinstance(out, NotesOutput) and out.start is not None
    assert out.start == pytest.approx(grid.time_of(start), abs=WHEN_SLACK)  # a bar line
    midi = mido.MidiFile(str(path))
    tick, ons = 0, []
    for message in midi.tracks[0]:
        tick += message.time
        if message.type == "note_on" and message.velocity:
            ons.append((tick, message.note))
    assert ons == [(round((b - start) * TICKS), p) for b, p in want]
    assert ons[0][0] == 0 or pattern.notes[0] is None


def midi_folder(room: Orchestra) -> Path:
    """Where exports may go: the state folder's midi/ (issue 37's allowed folders)."""
    return room.config.state_path() / "midi"


def test_pattern_notes_read_back_and_exported_on_the_beats_they_played(
        room: Orchestra) -> None:
    service = LocalService(room)
    together = [STRAIGHT, SWUNG, RESTS, ACROSS]
    starts = play(room, together)
    assert len(set(starts.values())) == 1 and starts["kick"] % BAR == 0
    wait_until_beat(room, max(starts.values()) + max(sum(p.durs) for p in together))
    for pattern in together:
        check(service, room, pattern, starts[pattern.name], midi_folder(room))
    # the four on the floor: every downbeat is beat 1 of its bar
    kick = service.call("notes", {"action": "played", "input": "lobby/Pdef kick",
                                  "since": time.time() - 30})
    assert isinstance(kick, NotesOutput)
    assert [n.beat for n in kick.notes] == [1.0, 2.0, 3.0, 4.0] * 2

    room.tempo.set(None, bpm=90.0)
    deadline = time.monotonic() + 10
    while True:  # the room's clock follows the grid's new tempo
        told = room.rooms.execute_one("lobby", "TempoClock.default.tempo * 60", timeout=5)
        if told.value is not None and abs(float(told.value) - 90.0) < 1e-6:
            break
        assert time.monotonic() < deadline, f"the room's clock is at {told.value} bpm"
        time.sleep(0.1)
    starts = play(room, [AFTER])
    wait_until_beat(room, starts["after"] + sum(AFTER.durs))
    check(service, room, AFTER, starts["after"], midi_folder(room))
