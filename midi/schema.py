"""Validate the ``[midi]`` section of ``config.toml``: ports, control routes, key routes.

The lead's ``scorch/config/installation.py`` embeds :class:`MidiConfig` as ``midi``; run-time
routes added through the router (or MCP) use the same :class:`ControlRoute` and
:class:`KeyRoute` models, so one set of checks guards both.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from midi.controllers import ControlName
from midi.curves import check_curve
from scorch.values import (
    Float32,
    GroupName,
    HostName,
    NodeName,
    ParamName,
    RouteId,
    SceneName,
    Selector,
    StrictModel,
    SynthDefName,
    Text,
)

Backend = Literal["auto", "alsa", "jack", "coremidi", "winmm"]
Takeover = Literal["immediate", "pickup", "scale"]
Relative = Literal["twos_complement", "signed_bit", "binary_offset"]
Curve = str | float
Zone = Literal["lower", "upper"]
Button = Literal["toggle", "momentary", "velocity"]
PageName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$",
                                description="A page of a controller's mappings")]


PortPattern = Annotated[Text, Field(min_length=1, max_length=200)]


class _Route(StrictModel):
    """What every route has: an id, the port and channel it listens to, where it plays."""

    id: RouteId | None = Field(None, description="Stable name for this route; generated if "
                               "omitted.")
    port: PortPattern = Field(
        "*", description="Case-insensitive substring of the input port's name; '*' is any port."
    )
    channel: int | None = Field(
        None, ge=1, le=16, description="MIDI channel 1-16; omitted means any channel."
    )
    instance: Selector = Field(description="Room name, group name or '*' for every "
                               "room.")
    host: HostName | None = Field(
        None, description="With several hosts: the host the controller is plugged into "
        "(default: the host of the rooms it plays).")


class ControlRoute(_Route):
    """Move one parameter of a named persistent node from a knob, fader or wheel."""

    control: ControlName | None = Field(
        None, description="The control by its name in the profile of the device on port "
        "(midi action 'profiles'), e.g. fader1, knob3, pad9, play; instead of its numbers.")
    cc: int | None = Field(
        None, ge=0, le=127, description="Control change number (0-31 with hires = true)."
    )
    nrpn: int | None = Field(None, ge=0, le=16383, description="NRPN parameter number.")
    pitchbend: bool = Field(False, description="Use the channel's pitch-bend wheel.")
    aftertouch: bool = Field(False, description="Use channel pressure (mono aftertouch).")
    note: int | None = Field(None, ge=0, le=127, description="A button or pad that sends "
                             "this note number.")
    hires: bool = Field(
        False, description="14-bit: CC n is the MSB and CC n+32 the LSB; for NRPN, use the LSB."
    )
    relative: Relative | None = Field(
        None, description="Relative encoder encoding; omitted means an absolute control."
    )
    step: float = Field(
        1 / 127, gt=0, le=1, description="Relative encoders: fraction of the range per tick."
    )
    node: NodeName = Field(description="Name of a persistent node on that room.")
    param: ParamName = Field(description="Control name of that node's SynthDef.")
    range: tuple[Float32, Float32] = Field((0.0, 1.0),
                                           description="[min, max] of the parameter.")
    curve: Curve = Field(
        "lin", description="lin, exp, db, amp, sin, cos (SuperCollider warps) or a curve number."
    )
    takeover: Takeover = Field(
        "pickup",
        description="immediate jumps; pickup waits until the control meets the value; "
        "scale moves the value towards the control's ends without a jump.",
    )
    button: Button | None = Field(
        None, description="A button or pad: toggle flips the param between the range's ends "
        "at each press (the default), momentary holds the top while pressed, velocity sets "
        "it from how hard a pad is hit.")
    page: PageName | None = Field(
        None, description="Acts only while this page is shown on the device ([[midi.pages]]); "
        "omitted: on every page.")

    @model_validator(mode="after")
    def _one_source(self) -> ControlRoute:
        sources = [
            name
            for name, on in (
                ("control", self.control is not None),
                ("cc", self.cc is not None),
                ("nrpn", self.nrpn is not None),
                ("pitchbend", self.pitchbend),
                ("aftertouch", self.aftertouch),
                ("note", self.note is not None),
            )
            if on
        ]
        if len(sources) != 1:
            found = ", ".join(sources) if sources else "none"
            raise ValueError(
                "a control needs exactly one of control, cc, nrpn, pitchbend, aftertouch, "
                f"note (found: {found})"
            )
        if self.hires and (self.note is not None or self.control is not None):
            raise ValueError("hires applies to cc and nrpn only (a named control says its own)")
        if self.hires and self.cc is not None and self.cc > 31:
            raise ValueError(
                f"hires (14-bit) CC uses cc n (MSB) and n+32 (LSB), so cc must be 0-31, "
                f"got {self.cc}"
            )
        if self.hires and (self.pitchbend or self.aftertouch):
            raise ValueError("hires applies to cc and nrpn only (pitch bend is always 14-bit)")
        if self.relative is not None and self.cc is None and self.control is None:
            raise ValueError("relative encodings apply to cc controls only")
        if self.button is not None and self.relative is not None:
            raise ValueError("a relative encoder is not a button: drop button or relative")
        if self.relative is not None and self.hires:
            raise ValueError("a relative encoder sends 7-bit steps: drop hires")
        check_curve(self.curve, self.range)
        return self

    @property
    def kind(self) -> str:
        """Return ``control``, ``cc``, ``nrpn``, ``note``, ``pitchbend`` or ``aftertouch``."""
        if self.control is not None:
            return "control"
        if self.cc is not None:
            return "cc"
        if self.nrpn is not None:
            return "nrpn"
        if self.note is not None:
            return "note"
        return "pitchbend" if self.pitchbend else "aftertouch"


class KeyRoute(_Route):
    """Play a SynthDef on a room from the keys of a keyboard."""

    synthdef: SynthDefName = Field(description="SynthDef with freq, amp and gate controls.")
    notes: tuple[int, int] = Field(
        (0, 127), description="[lowest, highest] note of this split, inclusive."
    )
    transpose: float = Field(0.0, ge=-127, le=127, description="Semitones added to the note.")
    velocity_curve: Curve = Field("lin", description="Curve from velocity to amp.")
    amp: tuple[float, float] = Field((0.0, 1.0), description="amp at velocity 0 and 127.")
    voices: int = Field(
        16, ge=1, le=1024, description="Voices held at once; the oldest is stolen beyond it."
    )
    bend_range: float = Field(
        2.0, ge=0, le=96, description="Semitones of the pitch-bend wheel's full throw."
    )
    sustain: bool = Field(True, description="The sustain pedal (CC 64) holds releases.")
    params: dict[ParamName, Float32] = Field(
        default_factory=dict, description="Other controls sent with every /s_new."
    )
    max_hold: float | None = Field(
        None, gt=0, le=86400,
        description="Seconds after which a voice is released even if its key is still down "
        "(a safety net for a note-off that never comes); omitted: no limit.",
    )
    mpe: Zone | None = Field(
        None,
        description="MPE zone: lower (master channel 1, notes on 2 and up) or upper (master "
        "16, notes on 15 and down). Each note's own pitch bend, pressure and CC 74 reach its "
        "voice as freq, pressure and timbre.",
    )
    mpe_bend_range: float = Field(
        48.0, ge=0, le=96,
        description="MPE: semitones of a note's own pitch bend (bend_range is the master "
        "channel's).",
    )

    @field_validator("notes")
    @classmethod
    def _note_range(cls, notes: tuple[int, int]) -> tuple[int, int]:
        low, high = notes
        if not (0 <= low <= high <= 127):
            raise ValueError(f"notes must be [low, high] with 0 <= low <= high <= 127, got {notes}")
        return notes

    @field_validator("params")
    @classmethod
    def _reserved(cls, params: dict[str, float]) -> dict[str, float]:
        reserved = {"freq", "amp", "gate"} & set(params)
        if reserved:
            raise ValueError(
                f"params {sorted(reserved)} are set by the router from the keys; remove them"
            )
        return params

    @model_validator(mode="after")
    def _velocity_curve(self) -> KeyRoute:
        check_curve(self.velocity_curve, self.amp)
        if self.mpe is not None:
            if self.channel is not None:
                raise ValueError(f"an MPE zone chooses its channels: drop channel = "
                                 f"{self.channel} (mpe = {self.mpe!r})")
            taken = {"pressure", "timbre"} & set(self.params)
            if taken:
                raise ValueError(f"params {sorted(taken)} are set by the router from each MPE "
                                 "note; remove them")
        return self


class ClockOutConfig(StrictModel):
    """One ``[[midi.clock_out]]``: MIDI clock (24 per beat) with transport to an output."""

    port: PortPattern = Field(description="Case-insensitive substring of the output port's "
                              "name.")
    group: GroupName | None = Field(
        None, description="Follow this group's own tempo ([tempo.groups.NAME]); omitted: the "
        "installation's.")
    transport: bool = Field(
        True, description="Send start, stop, continue and song position as well as the clock.")


class SceneRoute(_Route):
    """Recall a scene on a program change, or morph toward it with a control."""

    instance: Selector = Field("*", description="Rooms the scene acts on; '*' (default) is "
                               "every room the scene holds.")
    scene: SceneName = Field(description="A scene saved with the scene tool.")
    program: int | None = Field(
        None, ge=0, le=127, description="Program change number 0-127 that recalls the scene "
        "(many devices show it as 1-128)."
    )
    cc: int | None = Field(
        None, ge=0, le=127, description="Control change whose position (0-127) is the morph "
        "position from the state when it first moved toward the scene (0) to the scene (127)."
    )
    seconds: float = Field(0.0, ge=0, le=3600, description="program: glide to the scene over "
                           "this many seconds instead of at once.")

    @model_validator(mode="after")
    def _one_source(self) -> SceneRoute:
        if (self.program is None) == (self.cc is None):
            raise ValueError("a scene route needs exactly one of program (recall) and cc "
                             "(morph)")
        if self.cc is not None and self.seconds:
            raise ValueError("seconds applies to program (a timed recall); a cc morphs as "
                             "it moves")
        return self


class PageRoute(StrictModel):
    """A button that shows one page of a controller's mappings (``[[midi.pages]]``)."""

    id: RouteId | None = Field(None, description="Stable name for this route; generated if "
                               "omitted.")
    port: PortPattern = Field(description="Case-insensitive substring of the device's input "
                              "port.")
    channel: int | None = Field(None, ge=1, le=16, description="MIDI channel 1-16 (with cc "
                                "or note; default: the profile's, else any).")
    host: HostName | None = Field(None, description="With several hosts: the host the "
                                  "controller is plugged into.")
    control: ControlName | None = Field(None, description="The button by its profile name.")
    cc: int | None = Field(None, ge=0, le=127, description="A button that sends this CC.")
    note: int | None = Field(None, ge=0, le=127, description="A button that sends this note.")
    page: PageName = Field(description="The page it shows: the routes with this page act, "
                           "those of the device's other pages rest, the LEDs are redrawn.")

    @model_validator(mode="after")
    def _one_source(self) -> PageRoute:
        given = [k for k in ("control", "cc", "note") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a page button needs exactly one of control, cc, note (found: "
                             f"{', '.join(given) or 'none'})")
        return self


CueNumber = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$",
                                 description="A cue's number: 1, 2.5, 3A")]


class CueRoute(StrictModel):
    """A button that GOes the cue list (``[[midi.cues]]``): a note, a CC or a program change."""

    id: RouteId | None = Field(None, description="Stable name for this route; generated if "
                               "omitted.")
    port: PortPattern = Field("*", description="Case-insensitive substring of the device's "
                              "input port; '*' is any port.")
    channel: int | None = Field(None, ge=1, le=16, description="MIDI channel 1-16 (default: "
                                "the profile's for a named control, else any).")
    host: HostName | None = Field(None, description="With several hosts: the host the "
                                  "controller is plugged into.")
    control: ControlName | None = Field(None, description="The button by its profile name.")
    note: int | None = Field(None, ge=0, le=127, description="A button that sends this note "
                             "(a note-on presses it).")
    cc: int | None = Field(None, ge=0, le=127, description="A button that sends this CC (a "
                           "value of 64 or more presses it).")
    program: int | None = Field(None, ge=0, le=127, description="A program change 0-127.")
    action: Literal["go", "stop", "standby"] = Field(
        "go", description="go fires the cue on standby (or cue); stop cancels the cues "
        "waiting to fire; standby puts cue on standby.")
    cue: CueNumber | None = Field(None, description="go: fire this cue instead of the one on "
                                  "standby; standby: the cue to put there.")

    @model_validator(mode="after")
    def _one_source(self) -> CueRoute:
        given = [k for k in ("control", "note", "cc", "program") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a cue button needs exactly one of control, note, cc, program "
                             f"(found: {', '.join(given) or 'none'})")
        if self.action == "standby" and self.cue is None:
            raise ValueError("action = 'standby' needs the cue to put on standby")
        if self.action == "stop" and self.cue is not None:
            raise ValueError("action = 'stop' cancels every waiting cue: drop cue")
        return self


class MidiConfig(StrictModel):
    """The ``[midi]`` section: backend, ports, hotplug and routes."""

    enabled: bool = Field(
        True, description="false: scorch opens no MIDI port at all (an installation without MIDI)."
    )
    backend: Backend = Field("auto", description="rtmidi API; auto tries the platform's own.")
    virtual_port: str = Field(
        "scorch", description="Name of scorch's own virtual input port; empty for none."
    )
    inputs: tuple[str, ...] = Field(
        ("*",),
        description="Input ports to open (substrings, '*' = every port); "
        "ports named by routes are opened too.",
    )
    outputs: tuple[str, ...] = Field(
        (), description="Output ports to open at start (substrings); send() opens others."
    )
    rescan_interval: float = Field(
        1.0, gt=0, le=60, description="Seconds between hotplug scans of the port list."
    )
    coalesce_interval: float = Field(
        0.0005,
        ge=0,
        le=0.1,
        description="Seconds between two /n_set of one (node, param); later values wait and "
        "only the newest is sent.",
    )
    capture_notes: int = Field(
        2048, ge=0, le=1_000_000, description="Notes kept per MIDI input for `notes` (a ring "
        "per source, saved in the state directory at stop); 0: no capture.")
    controls: tuple[ControlRoute, ...] = Field((), description="[[midi.controls]] routes.")
    keys: tuple[KeyRoute, ...] = Field((), description="[[midi.keys]] routes.")
    clock_out: tuple[ClockOutConfig, ...] = Field(
        (), description="[[midi.clock_out]]: outputs that get MIDI clock from the tempo.")
    clock_in: PortPattern | None = Field(
        None, description="Input whose MIDI clock drives the installation's tempo (smoothed), "
        "with its start, stop and song position.")
    scenes: tuple[SceneRoute, ...] = Field((), description="[[midi.scenes]] routes.")
    pages: tuple[PageRoute, ...] = Field((), description="[[midi.pages]]: buttons that switch "
                                         "a controller between pages of routes.")
    cues: tuple[CueRoute, ...] = Field((), description="[[midi.cues]]: buttons that GO the "
                                       "cue list.")
    feedback: bool = Field(True, description="Send each controller with a profile what its "
                           "mapped params are (LEDs, rings, motor faders).")

    def buttons_on(self, host: str | None) -> dict[str, tuple[PageRoute | CueRoute, ...]]:
        """The page and cue buttons of the controllers on ``host`` (or on no host named)."""
        return {"pages": tuple(r for r in self.pages if r.host in (None, host)),
                "cues": tuple(r for r in self.cues if r.host in (None, host))}

    @model_validator(mode="after")
    def _unique_ids(self) -> MidiConfig:
        routes: tuple[ControlRoute | KeyRoute | SceneRoute | PageRoute | CueRoute, ...] = (
            *self.controls, *self.keys, *self.scenes, *self.pages, *self.cues)
        ids = [r.id for r in routes if r.id is not None]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"route ids must be unique, repeated: {dupes}")
        ports = [c.port.lower() for c in self.clock_out]
        twice = sorted({p for p in ports if ports.count(p) > 1})
        if twice:
            raise ValueError(f"[[midi.clock_out]] names the port {twice[0]!r} twice: one clock "
                             "per output")
        return self
