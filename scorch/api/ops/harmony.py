"""The harmony operation: the key and chords of what the inputs and patterns played, or a .mid.

From notes, not audio (``listen`` hears the key and chords of sound): the notes a MIDI
input or a room's patterns played in a range, or a Standard MIDI File's. The key is
Krumhansl-Schmuckler's with the mode it leans to; the chords are named beat by beat
on the grid the notes were played on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from scorch.api.operation import READ, Args, Result, operation
from scorch.api.ops.audio import refused
from scorch.api.ops.music.notes import Bars, Input, LastSeconds
from scorch.audio.music.figures import ChordAt, harmony_of_notes
from scorch.values import Text

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


class HarmonyArgs(Args):
    """Whose notes, over which range: captured notes (one of last_bars, last_seconds), or
    a .mid file."""

    input: Input = None
    last_bars: Bars = None
    last_seconds: LastSeconds = None
    path: Annotated[Text | None, Field(max_length=4096, description=(
        "A .mid file instead: absolute, or relative to the state directory's midi/ folder"))
    ] = None


class HarmonyOutput(Result):
    """The key and the chords."""

    source: str = Field(description="whose notes, over which range")
    notes: int
    key: str | None = Field(description="such as 'D dorian' (None: too few pitch classes)")
    key_plain: str | None = Field(description="the major or minor key alone")
    key_correlation: float | None
    chords: list[ChordAt] = Field(description="beat by beat, a held chord once; start and "
                                  "end in seconds from the first note")
    more_chords: int = 0

    def text(self) -> str:
        """The key, then the progression."""
        key = (f"{self.key} (fit {self.key_correlation:.2f}; as major/minor: "
               f"{self.key_plain})" if self.key else "key unclear")
        chords = " - ".join(c.chord for c in self.chords) or "none named"
        more = f" (and {self.more_chords} more)" if self.more_chords else ""
        return f"{key}, from {self.notes} notes of {self.source}\nchords: {chords}{more}"


@operation(access=READ, command="harmony", positional=("input",), rooms=None)
def harmony(orch: Orchestra, args: HarmonyArgs) -> HarmonyOutput:
    """The key and chords of what a MIDI input or a room's patterns played (captured
    notes over last_bars or last_seconds), or of a .mid file: such as "D dorian, Am7 -
    D7" (Krumhansl-Schmuckler's key and the mode it leans to, chords named beat by beat
    on the grid). For the key and chords of sound, listen."""
    if args.path is not None:
        if (args.input, args.last_bars, args.last_seconds) != (None, None, None):
            raise refused("harmony: give `path` alone, or captured notes (`input`, "
                          "`last_bars` or `last_seconds`)", "path")
        read = orch.notes.read_file(Path(args.path))
        notes, line, source = read.notes, read.line, f"file {args.path}"
    else:
        if args.last_bars is None and args.last_seconds is None:
            raise refused("harmony needs a range of captured notes (`last_bars` or "
                          "`last_seconds`), or a .mid `path`", "last_bars")
        span = orch.notes.span(args.last_bars, args.last_seconds)
        notes, line = orch.notes.played(span, args.input), orch.notes.line()
        ranged = (f"the last {args.last_bars:g} bars" if args.last_bars is not None
                  else f"the last {args.last_seconds:g} s")
        source = f"{args.input or 'every input'}, {ranged}"
    found = harmony_of_notes([(n.onset, n.duration, n.pitch) for n in notes],
                             (line.time_at(0.0), 60.0 / line.bpm))
    if found is None:
        return HarmonyOutput(source=source, notes=0, key=None, key_plain=None,
                             key_correlation=None, chords=[])
    return HarmonyOutput(source=source, notes=len(notes), key=found.key,
                         key_plain=found.key_plain, key_correlation=found.key_correlation,
                         chords=found.chords, more_chords=found.more_chords)

