"""The tempo operation: read and set the installation's beat grid (or a group's own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, Strict

from scorch.api import compact
from scorch.api.operation import (
    CHANGE,
    Args,
    Changes,
    CliForm,
    Result,
    Spread,
    operation,
)
from scorch.state import MAX_BPM, MIN_BPM
from scorch.values import Selector

if TYPE_CHECKING:
    from scorch.app import Orchestra


class TempoArgs(Args):
    """What to read or change; nothing given reads."""

    bpm: Annotated[float | None, Strict(), Field(
        ge=MIN_BPM, le=MAX_BPM, allow_inf_nan=False,
        description="Beats per minute; the beat runs on without a jump")] = None
    beat: Annotated[float | None, Strict(), Field(
        ge=0, le=1e9, allow_inf_nan=False,
        description="Move the grid so that this beat is now (bar phase = beat mod "
        "beats_per_bar)")] = None
    transport: Annotated[Literal["start", "stop", "continue"] | None, Field(
        description="MIDI clock devices: start (from the top, on the next bar), stop, "
        "continue (on the next sixteenth)")] = None
    group: Annotated[Selector | None, Field(
        description="A group with its own tempo, or a room in one (default: the "
        "installation's)")] = None


class TempoOutput(Result):
    """The beat grid now."""

    scope: str = Field(description="installation, or the group whose own tempo this is")
    bpm: float
    beat: float = Field(description="beats since scorch started (or since the grid moved)")
    bar: int = Field(description="the bar the beat is in, from 1")
    bar_phase: float = Field(description="beats into the bar, 0 <= bar_phase < beats_per_bar")
    beats_per_bar: int
    playing: bool = Field(description="the transport MIDI clock devices follow")
    song_position: float = Field(description="the transport's position in beats")
    rooms: list[str] = Field(description="the rooms that play at this tempo")
    source: str = Field(description="who sets it: scorch, link, midi clock in, or group")
    link: dict[str, Any] | None = Field(
        None, description="with [tempo] link: peers (Link applications besides scorch's "
        "rooms; null before the first read) and rooms_on_link")
    clock_in: dict[str, Any] | None = Field(
        None, description="with [midi] clock_in: the port, its tempo and transport")

    def text(self) -> str:
        lines = [f"{self.scope}: {self.bpm:g} bpm, bar {self.bar} beat "
                 f"{self.bar_phase + 1:.2f} of {self.beats_per_bar} (beat {self.beat:.2f}), set "
                 f"by {self.source}; transport {'playing' if self.playing else 'stopped'} at "
                 f"{self.song_position:g}; rooms: {', '.join(self.rooms) or 'none'}"]
        if self.link is not None:
            lines.append(f"link: {compact.render(self.link)}".replace("\n", "; "))
        if self.clock_in is not None:
            lines.append(f"clock in: {compact.render(self.clock_in)}".replace("\n", "; "))
        return "\n".join(lines)


@operation(access=CHANGE, cli=CliForm("tempo", ("bpm",)), spread=Spread(rooms="group"),
           journal=Changes(rooms=None, tempo=True, given="bpm"))
def tempo(orch: Orchestra, args: TempoArgs) -> TempoOutput:
    """The installation's tempo: read it (bpm, beat and bar phase, transport, Link peers),
    set the bpm, move the beat, or start, stop or continue MIDI clock devices. Every room's
    TempoClock.default plays on this grid."""
    if args.bpm is None and args.beat is None and args.transport is None:
        state = orch.tempo.state(args.group)
    else:
        state = orch.tempo.set(args.group, args.bpm, args.beat, args.transport)
    return TempoOutput(**state)
