"""Operations that hear what the rooms play: record, listen and render.

Recording and capturing happen inside scsynth (DiskOut), never by copying audio
through Python; listening and rendering answer with a picture (waveform over a
log-frequency spectrogram), the numbers of :class:`~scorch.audio.report.SoundReport`
and one sentence.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fields import Code, NodeName, Params, RoomName, SynthDefName
from scorch.api.operation import (
    CHANGE,
    CODE,
    READ,
    WRITE,
    Action,
    Args,
    CliForm,
    Patience,
    Result,
    Tool,
    operation,
)
from scorch.app.studio import AUDIO_BUSES, MAX_RENDER, MAX_SECONDS, Source
from scorch.audio import Comparison, Figures, Reference, SoundReport, compare
from scorch.audio.meter import Masking
from scorch.audio.meter.masking import masking
from scorch.config import folders, sclang_guard
from scorch.errors import InvalidRequest, ScorchError
from scorch.primitives.synthdefs import MAX_CHANNELS
from scorch.values import Flag, Seconds, Text

if TYPE_CHECKING:
    from scorch.app import Orchestra
    from scorch.app.studio import Heard, Rendered

Format = Annotated[Literal["wav", "aiff", "flac"], Field(
    description="wav (32-bit float), aiff (32-bit float) or flac (24-bit)")]
Channels = Annotated[int, Field(strict=True, ge=1, le=MAX_CHANNELS,
                                description="How many channels, from the bus up")]
#: A reference sound's name, as listen and render compare against it.
ReferenceName = Annotated[Text, Field(max_length=64, description=(
    "A reference sound's name (see reference): compare with it"))]
Bus = Annotated[int, Field(strict=True, ge=0, le=AUDIO_BUSES - 1, description=(
    "The first audio bus; 0 is the main outputs (the default)"))]


# --- record ----------------------------------------------------------------------


class RecordList(Action):
    """List every recording with its path, room, state, length and size."""

    access = READ
    action: Literal["list"] = "list"
    full: Annotated[Flag, Field(description="Every recording, however many (by default the "
                                "last by file name that fit the answer's size budget)")] = False


class RecordStart(Action):
    """Start recording a room to a file."""

    access = WRITE
    action: Literal["start"]
    instance: RoomName
    bus: Bus | None = None
    channels: Channels = 2
    seconds: Annotated[Seconds | None, Field(
        ge=0.1, le=MAX_SECONDS, description="Stop by itself after this long")] = None
    format: Format = "wav"
    name: Annotated[Text | None, Field(
        max_length=100, description="The file's name without extension (default "
        "ROOM-DATE-TIME)")] = None


class RecordStop(Action):
    """Stop a room's recordings (instance), or one recording (name)."""

    access = CHANGE
    action: Literal["stop"]
    instance: RoomName | None = None
    name: Annotated[Text | None, Field(max_length=100)] = None


RecordArgs = Annotated[RecordList | RecordStart | RecordStop, Field(discriminator="action")]


class RecordingOut(BaseModel):
    """One recording file."""

    name: str
    path: str = Field(description="absolute path of the audio file")
    instance: str | None = Field(description="the room it recorded")
    state: str = Field(description="recording, done, stopped (ended early: see note), "
                       "cut short (scsynth or scorch died: the file was repaired), unreadable")
    seconds: float | None = Field(description="audio in the file (while recording: written "
                                  "so far, up to 0.34 s behind)")
    frames: int | None
    size: int | None = Field(description="bytes")
    format: str
    channels: int | None
    sample_rate: int | None
    bus: int | None = Field(description="the first bus recorded")
    started_at: float | None = Field(description="Unix time")
    ended_at: float | None
    note: str | None = Field(description="why it ended early, or what was repaired")


class RecordOutput(Result):
    """The recordings that started, stopped, or are in the folder."""

    action: str
    folder: str = Field(description="where recordings are kept")
    recordings: list[RecordingOut]
    more: int = Field(0, description="list: earlier recordings left out (the size budget): "
                      "full=true returns them")

    def text(self) -> str:
        rows = [f"{r.name}  {r.state}  {r.instance or '?'}  "
                f"{'?' if r.seconds is None else f'{r.seconds:g}'} s  {size(r.size)}  "
                f"{r.format}{'' if r.channels is None else f' {r.channels} ch'}"
                f"{'' if r.sample_rate is None else f' {r.sample_rate} Hz'}  {r.path}"
                + (f"  ({r.note})" if r.note else "") for r in self.recordings]
        return budget.lines(rows, self.more, "earlier recordings",
                            "record(action='list', full=true)", f"no recordings in {self.folder}")


def size(count: int | None) -> str:
    """A file's size as people read it: 812 B, 1.4 MB, 2.1 GB (? when unknown)."""
    if count is None:
        return "? B"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


@operation(cli=CliForm("record", ("action", "instance")))
def record(orch: Orchestra, args: RecordArgs) -> RecordOutput:
    """Record a room to a file (inside scsynth, with DiskOut); a recording that a crash cut
    short is repaired, and listed so."""
    recorder = orch.studio.recorder
    if args.action == "start":
        orch.rooms.view(args.instance)
        started = recorder.start(args.instance, Source(channels=args.channels, bus=args.bus or 0),
                                 args.format, args.seconds, args.name)
        names = {Path(started.path).name}
    elif args.action == "stop":
        if args.instance is None and args.name is None:
            raise InvalidRequest("record stop needs `instance` (all of its recordings) or "
                                 "`name` (one recording)")
        if args.instance is not None:
            orch.rooms.view(args.instance)
        names = {Path(r.path).name for r in recorder.stop(args.instance, args.name)}
    else:
        names = None
    rows = []
    for recording, facts in recorder.list():
        if names is not None and Path(recording.path).name not in names:
            continue
        facts = facts or {}
        rows.append(RecordingOut(
            name=recording.name, path=recording.path, instance=recording.room,
            state=recording.state, seconds=_round(facts.get("seconds")),
            frames=facts.get("frames"), size=facts.get("size"), format=recording.format,
            channels=facts.get("channels"), sample_rate=facts.get("sample_rate"),
            bus=recording.bus, started_at=recording.started_at, ended_at=recording.ended_at,
            note=recording.note))
    kept, more = budget.listing(rows, budget.json_size, getattr(args, "full", True), latest=True)
    return RecordOutput(action=args.action, folder=str(recorder.folder), recordings=kept,
                        more=more)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# --- listen ----------------------------------------------------------------------


class HeardOutput(Result, SoundReport):
    """What was heard: the numbers, where the picture and the audio are, and one sentence."""

    heard: str = Field(description="what was listened to")
    picture: str = Field(description="the PNG (also sent as image content): waveform over "
                         "a log-frequency spectrogram")
    audio: str = Field(description="the audio file that was analysed")
    remark: str | None = Field(None, description="anything to know about how it was heard")
    compared: Figures[Comparison] = Field(None, description="against the reference asked for")
    masking: Figures[Masking] = Field(None, description="with the sound asked for (versus)")

    @classmethod
    def of(cls, heard: Heard, compared: Figures[Comparison] = None,
           masking: Figures[Masking] = None) -> HeardOutput:
        """The API form of a listen."""
        return cls(**heard.report.model_dump(), heard=heard.label, picture=str(heard.picture),
                   audio=str(heard.audio), remark=heard.remark, compared=compared,
                   masking=masking)

    def images(self) -> list[Path]:
        """The picture."""
        return [Path(self.picture)]

    def text(self) -> str:
        """The sentence, the key numbers, and where the picture is."""
        remark = f" ({self.remark})" if self.remark else ""
        return f"{self.summary}{remark}\n{numbers(self)}{self.extra()}\nPicture: {self.picture}"

    def extra(self) -> str:
        """The comparison and the masking, as lines after the numbers."""
        lines = [*(self.compared.lines() if self.compared else []),
                 *(self.masking.lines() if self.masking else [])]
        return "".join(f"\n{line}" for line in lines)


def numbers(report: SoundReport) -> str:
    """The key numbers of a report as lines of text (all some clients show a model)."""
    def db(value: float | None, unit: str) -> str:
        return "-inf" if value is None else f"{value:.1f} {unit}"

    lines = [f"level: peak {db(report.peak_dbfs, 'dBFS')}, RMS {db(report.rms_dbfs, 'dBFS')}, "
             f"clipped samples {report.clipped_samples}"]
    for figures in (report.loudness, report.balance, report.rhythm, report.harmony):
        if figures is not None:
            lines += figures.lines()
    if report.centroid_hz is not None:
        lines.append(f"spectrum: centroid {report.centroid_hz:.0f} Hz, flatness "
                     f"{report.spectral_flatness}")
    if report.fundamental_hz is not None:
        lines.append(f"fundamental: {report.fundamental_hz:.2f} Hz ({report.note} "
                     f"{report.cents:+d} cents), confidence {report.pitch_confidence}")
    if report.partials:
        lines.append("partials: " + ", ".join(f"{p.hz:.1f} Hz {p.note} {p.db:.0f} dB"
                                              for p in report.partials))
    if report.held is not None:
        lines.append(f"held through: {report.held.hz:.1f} Hz {report.held.note} "
                     f"{report.held.db:.0f} dB")
    if report.onsets:
        shown = ", ".join(f"{t:.3f} s {n or 'unpitched'}"
                          for t, n in zip(report.onsets[:24], report.onset_notes, strict=False))
        more = f" and {len(report.onsets) - 24} more" if len(report.onsets) > 24 else ""
        lines.append(f"onsets ({len(report.onsets)}): {shown}{more}")
    return "\n".join(lines)


class ListenArgs(Args):
    """What to listen to: a room's live sound (its outputs, a bus or one node), or a file."""

    instance: Annotated[RoomName | None, Field(
        description="The room to listen to (or give `path` instead)")] = None
    seconds: Annotated[Seconds, Field(
        ge=0.2, le=30, description="How long to listen, 0.2 to 30 s")] = 3.0
    bus: Annotated[Bus | None, Field(description=(
        "Listen to this bus instead of the main outputs (bus 0)"))] = None
    node: Annotated[NodeName | None, Field(description=(
        "Listen to this named node alone (from play); the room still hears it"))] = None
    channels: Channels = 2
    path: Annotated[Text | None, Field(
        max_length=4096, description="An audio file to hear instead of a room (WAV, AIFF, "
        "FLAC...): a recording's name, a path in recordings/, or absolute in an allowed "
        "folder")] = None
    reference: ReferenceName | None = None
    versus: Annotated[Text | None, Field(max_length=100, description=(
        "Hear this too and say where the two mask: another node (with `node`) or room"))] = None


def audio_path(orch: Orchestra, given: str) -> Path:
    """An audio file given as a path (relative: in the recordings folder), a recording's file
    name, or its name alone; inside the folders the installation allows (PathRefused else)."""
    allowed, recordings = folders(orch.config), [orch.studio.recorder.folder]
    path = allowed.file("path", given, recordings)
    if not path.exists() and not path.suffix:  # a recording's name, as record returned it
        found = sorted(path.parent.glob(f"{glob.escape(path.name)}.*"))
        audio = [p for p in found if p.suffix in (".wav", ".aiff", ".flac")]
        path = allowed.file("path", str(audio[0]), recordings) if audio else path
    return path


@operation(access=READ, cli=CliForm("listen", ("instance",)),
           patience=Patience(seconds=100.0, argument="seconds"), tool=Tool(panel="show"))
def listen(orch: Orchestra, args: ListenArgs) -> HeardOutput:
    """Hear what a room plays now (or an audio file): a picture (waveform over a
    spectrogram), the numbers (levels, EBU R 128 loudness, octave balance, tilt, crest,
    stereo per band, pitch, partials, onsets, tempo and grid offsets, key and chords)
    and one sentence."""
    if args.path is not None:
        if args.instance is not None or args.node is not None or args.bus is not None \
                or args.versus is not None:
            raise InvalidRequest("listen: give `path` alone, or `instance` (with `bus` or "
                                 "`node`, `versus`), not both")
        file = orch.studio.listen_file(audio_path(orch, args.path), orch.tempo.grid())
        return HeardOutput.of(file, compared_with(orch, file.report, args.reference))
    if args.instance is None:
        raise InvalidRequest("listen needs `instance` (a room) or `path` (an audio file)")
    if args.node is not None and args.bus is not None:
        raise InvalidRequest("listen: give `bus` or `node`, not both")
    sources = [(args.instance, args.node if args.node is not None else args.bus)]
    if args.versus is not None and args.versus in (args.node, args.instance):
        raise refused(f"listen: versus {args.versus!r} is what is listened to already; name "
                      "another node of the room (with `node`) or another room", "versus")
    if args.versus is not None:
        sources.append((args.instance, args.versus) if args.node is not None
                       else (args.versus, None))
    scope = orch.config.tempo_scope(args.instance)
    whose = f"group {scope}'s" if scope else "the installation's"
    heard = orch.studio.listen_together([
        (room, orch.rooms.view(room), live_source(orch, room, what, args.channels))
        for room, what in sources], args.seconds, orch.tempo.grid(scope), whose)
    masked = None
    if args.versus is not None:
        a, b = (h.report.balance for h in heard)
        masked = masking(args.node or args.instance, a.thirds if a else {}, args.versus,
                         b.thirds if b else {})
    return HeardOutput.of(heard[0], compared_with(orch, heard[0].report, args.reference),
                          masked)


def live_source(orch: Orchestra, room: str, what: str | int | None, channels: int) -> Source:
    """What to capture in ``room``: a named node alone (a name), a bus (a number), or its
    main outputs (None)."""
    if isinstance(what, str):
        node = orch.rooms.node(room, what, "listen")
        return Source(channels=channels, node=what, node_id=node.node_id)
    return Source(channels=channels, bus=what or 0)


def compared_with(orch: Orchestra, report: SoundReport, name: str | None) -> Comparison | None:
    """``report`` against reference ``name`` (None: no comparison asked for)."""
    return None if name is None else compare(report, reference_named(orch, name))


def reference_named(orch: Orchestra, name: str, argument: str = "reference") -> Reference:
    """The reference ``name``; its error names ``argument``."""
    try:
        return orch.studio.references.get(name)
    except ScorchError as err:
        err.argument = argument
        raise


def refused(message: str, argument: str) -> InvalidRequest:
    """An InvalidRequest naming the argument at fault."""
    err = InvalidRequest(message)
    err.argument = argument
    return err


# --- render ----------------------------------------------------------------------


class RenderArgs(Args):
    """What to render offline: a library SynthDef with params, or an sclang Score."""

    synthdef: Annotated[SynthDefName | None, Field(
        description="A library SynthDef to play (or give `code`)")] = None
    params: Params | None = None
    duration: Annotated[Seconds | None, Field(
        le=MAX_RENDER, description="Seconds a SynthDef plays (default 2, then its tail), or "
        "where a Score ends (default: its last event)")] = None
    code: Annotated[Code | None, Field(description=(
        "sclang code whose value is a Score, or an array of [time, [command...]] events, "
        "e.g. [[0, [\\s_new, \\sine, 1000, 0, 0, \\freq, 330]], [1, [\\n_set, 1000, \\gate, 0]]]; "
        "the library's SynthDefs are loaded; put your own as [0, [\\d_recv, def.asBytes]]"))
    ] = None
    format: Format = "wav"
    channels: Channels = 2
    reference: ReferenceName | None = None


class RenderOutput(HeardOutput):
    """A rendered file and what is in it."""

    cached: bool = Field(description="true when the same render was already on disk")
    render_seconds: float = Field(description="how long scsynth -N took (0 when cached)")
    warnings: list[str]

    def text(self) -> str:
        """The sentence, the file, and where the picture is."""
        cached = " (from the cache)" if self.cached else ""
        return (f"{self.summary}\n{numbers(self)}{self.extra()}\nFile: {self.audio}{cached}\n"
                f"Picture: {self.picture}")

    @classmethod
    def rendered(cls, rendered: Rendered, orch: Orchestra, reference: str | None,
                 ) -> RenderOutput:
        """The API form of a render (compared with ``reference``, if given)."""
        return cls(**rendered.report.model_dump(), heard=rendered.label,
                   picture=str(rendered.picture), audio=str(rendered.path),
                   cached=rendered.cached, render_seconds=round(rendered.render_seconds, 4),
                   warnings=rendered.warnings,
                   compared=compared_with(orch, rendered.report, reference))


@operation(access=CODE, cli=CliForm("render", ("synthdef",)), patience=Patience(seconds=150.0))
def render(orch: Orchestra, args: RenderArgs) -> RenderOutput:
    """Render offline with scsynth -N, no room needed: a library SynthDef with params for
    `duration` seconds, or an sclang Score (`code`). Returns the file's path and the same
    picture and numbers as listen."""
    if (args.synthdef is None) == (args.code is None):
        raise InvalidRequest("render needs `synthdef` (with `params` and `duration`) or "
                             "`code` (a Score), one of them")
    renderer = orch.studio.renderer
    if args.synthdef is not None:
        info = orch.library.info(args.synthdef)
        params = dict(args.params or {})
        unknown = [p for p in params if p not in {spec.name for spec in info.params}]
        if unknown:
            raise InvalidRequest(f"SynthDef {info.name!r} has no param "
                                 f"{', '.join(map(repr, unknown))}; its params: "
                                 f"{', '.join(p.name for p in info.params)}")
        duration = args.duration if args.duration is not None else 2.0
        return RenderOutput.rendered(renderer.synthdef(args.synthdef, params, duration,
                                                       args.format, args.channels),
                                     orch, args.reference)
    if args.params:
        raise InvalidRequest("render: `params` go with `synthdef`; a Score sets its own")
    assert args.code is not None
    return RenderOutput.rendered(renderer.code(args.code, args.duration, args.format,
                                               args.channels, guard=sclang_guard(orch.config)),
                                 orch, args.reference)
