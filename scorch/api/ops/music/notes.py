"""The notes operation: what the inputs and patterns sound now, what they played, a .mid."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, Strict

from scorch.api.fanout import label
from scorch.api.fields import RoomName, SynthDefName
from scorch.api.operation import (
    CHANGE,
    READ,
    WRITE_OVER,
    Action,
    Answer,
    CliForm,
    Host,
    Patience,
    Result,
    Spread,
    Where,
    operation,
)
from scorch.api.ops.audio import audio_path
from scorch.audio import Figures
from scorch.audio.music import Harmony, harmony_of_notes
from scorch.config import folders
from scorch.errors import (
    AudioFileError,
    CodeFailed,
    InvalidRequest,
    Unavailable,
    UnknownSynthDef,
)
from scorch.notes import Note, pbind, place, text
from scorch.state import Timeline
from scorch.values import Flag, Text

if TYPE_CHECKING:
    from scorch.app import Notes, Orchestra, Span

#: Notes a played range gives as data at most unless told; past it only the text's summary.
MAX_NOTES = 200
#: Seconds the room may take to compile and start a file's Pdef.
PLAY_TIMEOUT = 20.0

Input = Annotated[Text | None, Field(
    description="A MIDI port or a pattern as ROOM/KIND NAME (hall/Pdef acc), or part of a "
    "name (hall/); default: all")]
Bars = Annotated[float | None, Strict(), Field(
    gt=0, le=10_000, allow_inf_nan=False)]
LastSeconds = Annotated[float | None, Strict(), Field(gt=0, le=604_800, allow_inf_nan=False)]
Since = Annotated[float | None, Strict(), Field(
    gt=0, allow_inf_nan=False, description="From this Unix time (s)")]
Until = Annotated[float | None, Strict(), Field(
    gt=0, allow_inf_nan=False, description="Up to this Unix time (s)")]
MidiPath = Annotated[Text | None, Field(
    max_length=4096, description="The .mid: in the state folder's midi/ (default "
    "NAME-<time>.mid) or absolute in an allowed folder")]
Overwrite = Annotated[Flag, Field(description="Write over a file already there")]
#: Where each action's file is (one text for all: a model reads it once).
PATH = ("A .mid to write (default notes-<time>.mid), play or read, in the state folder's midi/; a "
        "recording or audio file to transcribe; or absolute, in an allowed folder")
Budget = Annotated[int, Strict(), Field(
    ge=100, le=100_000, description="Characters the text may take (more notes than fit: a "
    "summary)")]


class NotesSounding(Action):
    """The keys held down now on each MIDI input, with how long so far."""

    access = READ
    action: Literal["sounding"] = "sounding"
    input: Input = None


class _Range(Action):
    input: Input = None
    last_bars: Bars = None
    last_seconds: LastSeconds = None
    since: Since = None
    until: Until = None

    def span(self, notes: Notes) -> Span:
        return notes.span(self.last_bars, self.last_seconds, self.since, self.until)


class NotesPlayed(_Range):
    """The notes of a range (last_bars, last_seconds or since) as text (bar|beat, name,
    length as a fraction of a whole note, velocity) and data; a summary past the budget."""

    access = READ
    action: Literal["played"]
    budget: Budget = 4000
    max_notes: Annotated[int, Strict(), Field(
        ge=0, le=100_000, description="Notes given as data at most (a range with more gives "
        "none)")] = MAX_NOTES


class NotesExport(_Range):
    """Write the notes of a range to a Standard MIDI File at the grid's tempo and meter."""

    access = WRITE_OVER
    action: Literal["export"]
    path: Annotated[MidiPath, Field(description=PATH)] = None
    overwrite: Overwrite = False


class NotesPlay(Action):
    """Play a .mid's notes in a room as a named Pdef on the grid, once or looped: `playing`
    lists it, `pattern` stops or changes it."""

    access = CHANGE
    action: Literal["play"]
    instance: RoomName
    path: Annotated[Text, Field(max_length=4096, description=PATH)]
    synthdef: Annotated[SynthDefName, Field(
        description="The SynthDef of each note; it gets midinote/freq, amp and sustain"
        )] = "pluck"
    name: Annotated[Text | None, Field(
        max_length=64, description="The Pdef's name (default: from the file's name)")] = None
    start: Annotated[Literal["bar", "beat", "now"], Field(
        description="When it starts on the grid")] = "bar"
    quantise: Annotated[float | None, Strict(), Field(
        gt=0, le=4, allow_inf_nan=False,
        description="Snap onsets and ends to this many beats (0.25 = sixteenths)")] = None
    loop: Annotated[bool, Strict(), Field(
        description="Loop it, bar-aligned, until stopped")] = False

    def where(self) -> Where:
        """Where its room is."""
        return Where(rooms=self.instance)


class NotesTranscribe(Action):
    """The notes basic-pitch hears in an audio file (a recording, or the `audio` listen
    returned), in seconds and on the grid."""

    access = READ
    action: Literal["transcribe"]
    path: Annotated[Text, Field(max_length=4096, description=PATH)]
    budget: Budget = 4000


class NotesHarmony(Action):
    """The key and chords of a range's notes (last_bars or last_seconds) or of a .mid
    (`path`), e.g. "D dorian, Am7 - D7"; of sound: listen."""

    access = READ
    action: Literal["harmony"]
    input: Input = None
    last_bars: Bars = None
    last_seconds: LastSeconds = None
    path: Annotated[Text | None, Field(max_length=4096, description=PATH)] = None


NotesArgs = Annotated[NotesSounding | NotesPlayed | NotesExport | NotesPlay | NotesTranscribe
                      | NotesHarmony, Field(discriminator="action")]


class NoteRecord(BaseModel):
    """One note, in seconds and on the grid."""

    onset: float = Field(description="Unix time of the key press")
    duration: float = Field(description="seconds held (sounding: so far)")
    pitch: int = Field(description="MIDI note number, 60 = C4")
    velocity: int
    channel: int = Field(description="MIDI channel, 0 to 15")
    source: str = Field(description="the MIDI input that played it, or ROOM/KIND NAME: the "
                        "pattern (hall/Pdef acc)")
    bar: int = Field(description="bar on the installation's grid, from 1")
    beat: float = Field(description="beat in the bar, from 1")
    name: str = Field(description="scientific pitch name")
    length: str = Field(description="length as a fraction of a whole note")


class NotesOutput(Result):
    """The answer of the notes tool."""

    action: str
    listing: str = Field(description="the notes as compact text, or a summary of them")
    count: int = Field(0, description="notes in the range (sounding: keys down)")
    summarised: bool = Field(False, description="the range held more than the budget or "
                             "max_notes: the listing is a summary, notes is empty")
    notes: list[NoteRecord] = Field(default_factory=list)
    sounding: dict[str, list[NoteRecord]] = Field(
        default_factory=dict, description="keys down now by MIDI input, notes sounding now "
        "by pattern")
    start: float | None = Field(None, description="Unix time the range (export: the file's "
                                "0, a bar line) starts")
    end: float | None = Field(None, description="Unix time the range ends")
    path: str | None = Field(None, description="the .mid written (play: read)")
    pattern: str | None = Field(None, description="play: the Pdef that plays the file")
    bpm: float | None = Field(None, description="the grid's tempo the bars are counted on")
    beats_per_bar: int | None = None
    harmony: Figures[Harmony] = Field(None, description="harmony: the key and chords")

    def text(self) -> str:
        """The listing (and where a .mid went)."""
        if self.action == "export" and self.path:
            return f"{self.listing}\nwritten to {self.path}"
        return self.listing


def _records(notes: list[Note], line: Timeline, offset: float) -> list[NoteRecord]:
    out = []
    for n in sorted(notes):
        where = place(n.onset, line)
        out.append(NoteRecord(
            onset=round(n.onset + offset, 6), duration=round(n.duration, 6), pitch=n.pitch,
            velocity=n.velocity, channel=n.channel, source=n.source, bar=where.bar,
            beat=round(where.beat, 6), name=text.note_name(n.pitch),
            length=text.length_name(n.duration * line.bpm / 60.0)))
    return out


def _listing(notes: list[Note], line: Timeline, budget: int, max_notes: int,
             offset: float) -> tuple[str, bool, list[NoteRecord]]:
    """The text (a summary past the budget), whether it was summarised, and the data."""
    sources = sorted({n.source for n in notes})
    if len(sources) > 1:  # inputs and patterns apart, each under its name
        full = "\n".join(f"{source}:\n" + text.dump([n for n in notes if n.source == source],
                                                     line) for source in sources)
    else:
        full = text.dump(notes, line) if notes else "no notes"
    listing = full if len(full) <= budget else text.render(notes, line, budget)
    summarised = len(notes) > max_notes or listing is not full
    return listing, summarised, [] if summarised else _records(notes, line, offset)


def _hosts_notes(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Every host's notes in onset order, counted together, each host's listing under its name."""
    if len(answers) == 1:
        return merged
    merged["notes"] = sorted(merged.get("notes", []), key=lambda n: float(n["onset"]))
    merged["count"] = sum(int(answer.get("count", 0)) for _, answer in answers)
    merged["summarised"] = any(answer.get("summarised") for _, answer in answers)
    merged["listing"] = "\n".join(f"{label(host)}:\n{answer.get('listing', '')}"
                                  for host, answer in answers)
    return merged


@operation(cli=CliForm("notes", ("action",)), spread=Spread(rooms=None, merge=_hosts_notes),
           patience=Patience(seconds=120.0))
def notes(orch: Orchestra, args: NotesArgs) -> NotesOutput:
    """The notes MIDI inputs and the rooms' patterns play, on the bar|beat grid: what sounds
    now, what was played (text or a .mid); play a .mid; transcribe a recording."""
    component, offset = orch.notes, orch.notes.wall_offset()
    if args.action == "play":
        return _play(orch, args)
    if args.action == "transcribe":
        return _transcribe(orch, args)
    if args.action == "harmony":
        return _harmony(orch, args)
    if args.action == "sounding":
        line = component.line()
        down = component.sounding(args.input)
        sounding = {source: _records(keys, line, offset) for source, keys in down.items()}
        listing = "\n".join(
            f"{source}: " + (", ".join(f"{k.name} ({k.duration:.2f} s, v{k.velocity})"
                                       for k in keys) or "nothing")
            for source, keys in sounding.items()) or "no MIDI input or pattern has played yet"
        return NotesOutput(action="sounding", listing=listing, sounding=sounding,
                           count=sum(len(keys) for keys in down.values()))
    span = args.span(component)
    line = component.line()
    grid = {"bpm": line.bpm, "beats_per_bar": line.beats_per_bar}
    if args.action == "played":
        played = component.played(span, args.input)
        listing, summarised, records = _listing(played, line, args.budget, args.max_notes,
                                                offset)
        return NotesOutput(action="played", listing=listing, count=len(played),
                           summarised=summarised, notes=records, start=span.start + offset,
                           end=span.end + offset, **grid)
    exported = component.export(span, args.input, midi_target(orch, args.path, args.overwrite))
    listing, summarised, records = _listing(exported.notes, line, 4000, MAX_NOTES, offset)
    return NotesOutput(action="export", listing=listing, count=len(exported.notes),
                       summarised=summarised, notes=records, start=exported.start + offset,
                       end=span.end + offset, path=str(exported.path), **grid)


def midi_target(orch: Orchestra, given: str | None, overwrite: bool) -> Path | None:
    """Where a .mid goes: ``given`` inside the allowed folders (relative: in ``midi/``), not
    over a file there unless ``overwrite``; None: a new file of its own in ``midi/``."""
    if not given:
        return None
    return folders(orch.config).file("path", given, [orch.notes.midi_folder()], write=True,
                                     overwrite=overwrite)


def _play(orch: Orchestra, args: NotesPlay) -> NotesOutput:
    """Read the file, lay it out in beats, and define and play its Pdef in the room."""
    found = orch.notes.read_file(
        folders(orch.config).file("path", args.path, [orch.notes.midi_folder()]),
        grid=args.quantise)
    try:
        score = pbind.lay_out(found.notes, found.line)
    except ValueError as err:
        refused = InvalidRequest(f"{args.path}: {err}")
        refused.argument = "path"
        raise refused from None
    name = pbind.pattern_name(args.name or Path(args.path).stem)
    line = orch.notes.line()
    quant = {"bar": float(line.beats_per_bar), "beat": 1.0, "now": 0.0}[args.start]
    code = pbind.pdef_code(score, name, args.synthdef, quant=quant, loop=args.loop)
    result = orch.rooms.execute_one(args.instance, code, timeout=PLAY_TIMEOUT)
    if result.value == pbind.NO_SYNTHDEF:
        raise UnknownSynthDef(f"{args.instance} knows no SynthDef named {args.synthdef!r} (see "
                              "synthdefs, or send it with execute first)", name=args.synthdef,
                              known=orch.rooms.synthdef_names(args.instance))
    if not result.ok:
        why = result.error.message if result.error else "it did not run"
        raise CodeFailed(f"{args.instance} could not play {args.path}: {why}")
    bars = score.beats / found.line.beats_per_bar
    listing = (f"playing {score.notes} notes of {found.line.beats_per_bar}/4 "
               f"({bars:g} bars, {score.beats:g} beats) from {args.path} in {args.instance} as "
               f"Pdef(\\{name}) with {args.synthdef}, "
               f"{'looped, ' if args.loop else ''}from the next {args.start}"
               if args.start != "now" else "now")
    listing += f"; stop it with Pdef(\\{name}).stop"
    return NotesOutput(action="play", listing=listing, count=score.notes, path=args.path,
                       pattern=name, bpm=line.bpm, beats_per_bar=line.beats_per_bar)


def _transcribe(orch: Orchestra, args: NotesTranscribe) -> NotesOutput:
    """Hear the file's notes; lay them on a grid at the installation's tempo from its start."""
    from scorch.notes import transcribe

    path = audio_path(orch, args.path)
    if not path.is_file():
        refused = AudioFileError(f"no audio file at {path}")
        refused.argument = "path"
        raise refused
    why = transcribe.missing()
    if why is not None:
        raise Unavailable(why)
    found = transcribe.transcribe(path, path.name)
    grid = orch.notes.line()
    line = Timeline(bpm=grid.bpm, beats_per_bar=grid.beats_per_bar)  # bar 1 at the file's 0
    listing, summarised, records = _listing(found, line, args.budget, MAX_NOTES, 0.0)
    return NotesOutput(action="transcribe", listing=listing, count=len(found),
                       summarised=summarised, notes=records, start=0.0,
                       end=max((n.end for n in found), default=0.0), path=str(path),
                       bpm=line.bpm, beats_per_bar=line.beats_per_bar)


def _harmony(orch: Orchestra, args: NotesHarmony) -> NotesOutput:
    """The key and chords of the captured notes of a range, or of a .mid's, beat by beat."""
    if args.path is not None:
        if (args.input, args.last_bars, args.last_seconds) != (None, None, None):
            refused = InvalidRequest("notes harmony: give `path` alone, or captured notes "
                                     "(`input`, `last_bars` or `last_seconds`)")
            refused.argument = "path"
            raise refused
        read = orch.notes.read_file(
            folders(orch.config).file("path", args.path, [orch.notes.midi_folder()]))
        notes, line, source = read.notes, read.line, f"file {args.path}"
    else:
        if args.last_bars is None and args.last_seconds is None:
            refused = InvalidRequest("notes harmony needs a range of captured notes "
                                     "(`last_bars` or `last_seconds`), or a .mid `path`")
            refused.argument = "last_bars"
            raise refused
        span = orch.notes.span(args.last_bars, args.last_seconds)
        notes, line = orch.notes.played(span, args.input), orch.notes.line()
        ranged = (f"the last {args.last_bars:g} bars" if args.last_bars is not None
                  else f"the last {args.last_seconds:g} s")
        source = f"{args.input or 'every input'}, {ranged}"
    found = harmony_of_notes([(n.onset, n.duration, n.pitch) for n in notes],
                             (line.time_at(0.0), 60.0 / line.bpm))
    said = found.lines()[0] if found is not None else "harmony: no notes"
    return NotesOutput(action="harmony", listing=f"{said}\n(from {len(notes)} notes of {source})",
                       count=len(notes), harmony=found, path=args.path, bpm=line.bpm,
                       beats_per_bar=line.beats_per_bar)
