"""The partner operation: continue or fill in what a MIDI input played, or answer it live."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, Strict

from scorch.api.fields import RoomName, SynthDefName
from scorch.api.operation import (
    CHANGE,
    READ,
    WRITE_OVER,
    Action,
    CliForm,
    Result,
    Spread,
    Where,
    operation,
)
from scorch.api.ops.music.notes import (
    Bars,
    Input,
    LastSeconds,
    MidiPath,
    NoteRecord,
    Overwrite,
    Since,
    Until,
    _records,
    midi_target,
)
from scorch.errors import InvalidRequest
from scorch.notes import DEFAULT_ORDER, MAX_ORDER, Note, place, text
from scorch.values import Text

if TYPE_CHECKING:
    from scorch.app import Controls, Orchestra, Span
    from scorch.notes import Phrase

Order = Annotated[int | None, Strict(), Field(
    ge=0, le=MAX_ORDER, description=f"Notes of context (default {DEFAULT_ORDER}): lower is "
    "freer")]
Temperature = Annotated[float, Strict(), Field(
    ge=0, le=10, allow_inf_nan=False, description="0: the likeliest note; 1: as played; "
    "above 1: rarer ones more")]
Key = Annotated[Text | None, Field(
    max_length=24, description="Keep to a key: 'F# minor', 'Bb', 'Am'")]
Density = Annotated[float, Strict(), Field(
    gt=0, le=8, allow_inf_nan=False, description="Above 1 busier, below 1 sparser")]
Seed = Annotated[int | None, Strict(), Field(
    ge=0, le=2**31, description="Random seed")]
Notes = Annotated[int | None, Strict(), Field(ge=1, le=512, description=(
    "Notes to make (answer_on: per answer)"))]
#: The room the notes play in, for every action that makes them.
Room = Annotated[RoomName | None, Field(
    description="The room that plays them")]
#: The SynthDef that plays them there.
Sound = Annotated[SynthDefName, Field(
    description="Their SynthDef")]


class _Make(Action):
    input: Input = None
    last_bars: Bars = None
    last_seconds: LastSeconds = None
    since: Since = None
    until: Until = None
    order: Order = None
    temperature: Temperature = 1.0
    key: Key = None
    density: Density = 1.0
    seed: Seed = None
    instance: Room = None
    synthdef: Sound = "pluck"
    name: Annotated[Text | None, Field(
        max_length=64, description="The Pdef's name (default: partner)")] = None
    save: Annotated[bool, Strict(), Field(description="Write the notes to a .mid")] = False
    path: MidiPath = None
    overwrite: Overwrite = False

    def where(self) -> Where | None:
        """The room it plays in, when it plays."""
        return Where(rooms=self.instance) if self.instance else None

    def span(self, orch: Orchestra) -> Span | None:
        if self.last_bars is None and self.last_seconds is None and self.since is None:
            if self.until is not None:
                raise InvalidRequest("until goes with since")
            return None
        return orch.notes.span(self.last_bars, self.last_seconds, self.since, self.until)

    def controls(self) -> Controls:
        from scorch.app import Controls
        return Controls(self.order, self.temperature, self.key, self.density, self.seed)


class PartnerContinue(_Make):
    """Continue a range (default: the last notes) for `notes` notes or `bars` bars
    (default 2), as a Pdef in a room and/or a .mid."""

    access = WRITE_OVER
    action: Literal["continue"] = "continue"
    notes: Notes = None
    bars: Annotated[float | None, Strict(), Field(gt=0, le=64, allow_inf_nan=False)] = None


class PartnerInfill(_Make):
    """Fill the gap in a range (at `split`, a Unix time, or its longest silence) with notes
    leading into what follows."""

    access = WRITE_OVER
    action: Literal["infill"]
    notes: Notes = None
    split: Annotated[float | None, Strict(), Field(
        gt=0, allow_inf_nan=False)] = None


class PartnerAnswerOn(Action):
    """When the player pauses `pause_beats` beats, answer in their style, in a room or on a
    MIDI output, until they play again."""

    access = CHANGE
    action: Literal["answer_on"]
    input: Input = None
    instance: Room = None
    synthdef: Sound = "sine"
    output: Annotated[Text | None, Field(
        description="A MIDI output (part of its name)")] = None
    channel: Annotated[int, Strict(), Field(ge=1, le=16, description="Its MIDI channel")] = 1
    pause_beats: Annotated[float, Strict(), Field(ge=0.25, le=64, allow_inf_nan=False)] = 2.0
    notes: Annotated[Notes, Field(le=32)] = None
    order: Order = None
    temperature: Temperature = 1.0
    key: Key = None
    density: Density = 1.0
    seed: Seed = None

    def where(self) -> Where | None:
        """The room the answers sound in."""
        return Where(rooms=self.instance) if self.instance else None


class PartnerAnswerOff(Action):
    """Stop answering an input."""

    access = CHANGE
    action: Literal["answer_off"]
    input: Input = None


class PartnerAnswering(Action):
    """Which inputs it answers, and its last answers' timing."""

    access = READ
    action: Literal["answering"]


PartnerArgs = Annotated[PartnerContinue | PartnerInfill | PartnerAnswerOn | PartnerAnswerOff
                        | PartnerAnswering, Field(discriminator="action")]


class AnswerFigures(Result):
    """One live answer."""

    heard: int = Field(description="notes of the phrase it answered")
    sent: int = Field(description="notes it started")
    late: float | None = Field(None, description="seconds its first note went out after the "
                               "beat it was due on")
    cut_after: float | None = Field(None, description="seconds from the performer's key "
                                    "press to its voices freed (None: it played to its end)")


class PartnerOutput(Result):
    """The answer of the partner tool."""

    action: str
    listing: str = Field(description="what it made, as compact text")
    count: int = 0
    notes: list[NoteRecord] = Field(default_factory=list)
    orders: list[int] = Field(default_factory=list, description="the context order each "
                              "note was chosen at (-1: invented to fit the key)")
    join: int | None = Field(None, description="infill: the order at which it leads into the "
                             "right phrase (0: none found)")
    pattern: str | None = Field(None, description="the Pdef playing it")
    path: str | None = Field(None, description="the .mid written")
    answering: dict[str, list[AnswerFigures]] = Field(
        default_factory=dict, description="inputs answered, with their last answers")


def _made(orch: Orchestra, args: PartnerContinue | PartnerInfill, source: str, made: Phrase,
          what: str, target: Path | None, join: int | None = None) -> PartnerOutput:
    line, offset = orch.notes.line(), orch.notes.wall_offset()
    notes: list[Note] = [n._replace(source=f"partner:{source}") for n in made.notes]
    pattern = path = None
    where = ""
    if notes and args.instance:
        # the notes as they play in the room, from its next bar (not after the seed)
        pattern, notes = orch.partner.play(args.instance, notes, args.synthdef,
                                           args.name or "partner")
        where = (f"\nplaying in {args.instance} as Pdef(\\{pattern}) from bar "
                 f"{place(notes[0].onset, line).bar}, where the notes above are placed")
    listing = f"{what} ({len(notes)} notes in the style of {source})\n" + (
        text.render(notes, line, 4000) if notes else "no notes") + where
    if notes and (args.save or args.path):
        path = str(orch.partner.save(notes, target))
        listing += f"\nwritten to {path}"
    return PartnerOutput(action=args.action, listing=listing, count=len(notes),
                         notes=_records(notes, line, offset), orders=made.orders, join=join,
                         pattern=pattern, path=path)


@operation(cli=CliForm("partner", ("action",)), spread=Spread(rooms=None))
def partner(orch: Orchestra, args: PartnerArgs) -> PartnerOutput:
    """Play in an input's style, learnt as it plays (a variable-order Markov model, as
    Pachet's Continuator): continue it, fill a gap, or answer it live."""
    if isinstance(args, PartnerAnswering):
        return _answering(orch)
    target = None  # where a .mid goes: refused before anything is made
    if isinstance(args, PartnerContinue | PartnerInfill) and (args.save or args.path):
        target = midi_target(orch, args.path, args.overwrite)
    source = orch.partner.source(args.input)
    if isinstance(args, PartnerAnswerOff):
        orch.partner.answer_off(source)
        return PartnerOutput(action=args.action, listing=f"no longer answering {source}")
    if isinstance(args, PartnerAnswerOn):
        from scorch.app import Controls
        controls = Controls(args.order, args.temperature, args.key, args.density, args.seed)
        controls.allowed()
        if (args.instance is None) == (args.output is None):
            raise InvalidRequest("say where the answers sound: instance (a room) or output "
                                 "(a MIDI output), one of them")
        voices = (orch.partner.room_voices(args.instance, args.synthdef) if args.instance
                  else orch.partner.midi_voices(str(args.output), args.channel))
        orch.partner.answer_on(source, voices, args.pause_beats, args.notes, controls)
        where = (f"{args.instance} with {args.synthdef}" if args.instance
                 else f"MIDI output {args.output} channel {args.channel}")
        return PartnerOutput(action=args.action, listing=(
            f"answering {source} in {where} whenever it pauses {args.pause_beats:g} beats"))
    controls = args.controls()
    span = args.span(orch)
    if isinstance(args, PartnerContinue):
        if args.notes is not None and args.bars is not None:
            raise InvalidRequest("say notes or bars, not both")
        seed = orch.partner.seed(source, span)
        bars = args.bars if args.bars is not None or args.notes is not None else 2.0
        made = orch.partner.continue_(source, seed, args.notes, bars, controls)
        return _made(orch, args, source, made, f"continued {len(seed)} notes", target)
    if span is None:
        raise InvalidRequest("say the range holding both phrases: last_bars, last_seconds "
                             "or since")
    passage = orch.partner.seed(source, span)
    split = None if args.split is None else args.split - orch.notes.wall_offset()
    made, left, right = orch.partner.infill(source, passage, split, args.notes, controls)
    return _made(orch, args, source, made,
                 f"filled between {len(left)} and {len(right)} notes", target, made.join)


def _answering(orch: Orchestra) -> PartnerOutput:
    out: dict[str, list[AnswerFigures]] = {}
    for source, answerer in orch.partner.answering().items():
        out[source] = [AnswerFigures(
            heard=len(p.heard), sent=p.sent,
            late=None if p.began is None else round(p.began - p.start, 6),
            cut_after=None if p.cut is None or p.cut_by is None else round(p.cut - p.cut_by, 6))
            for p in answerer.played]
    listing = "\n".join(f"{source}: {len(answers)} answers" for source, answers in out.items())
    return PartnerOutput(action="answering", listing=listing or "answering no input",
                         answering=out)
