"""The pattern operation: change one pattern or proxy while it plays, on the beat or the bar."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, Strict

from scorch.api.fields import MAX_CODE, Code, RoomName
from scorch.api.operation import (
    CHANGE,
    CODE,
    PATTERNS,
    SILENCE,
    Action,
    CliForm,
    Result,
    operation,
)
from scorch.values import ParamName, Text

if TYPE_CHECKING:
    from scorch.app import Orchestra

Name = Annotated[Text, Field(min_length=1, max_length=64, description=(
    "Its name, as `playing` lists it (acc for Pdef(\\acc))"))]
NewName = Annotated[str, Strict(), Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$", description=(
    "A new name (acc for Pdef(\\acc))"))]
Kind = Annotated[Literal["Pdef", "Pbindef", "Tdef", "Ndef"] | None, Field(
    description="Needed where two kinds share the name")]
NewKind = Annotated[Literal["Pdef", "Pbindef", "Tdef", "Ndef"], Field(description=(
    "Pdef (a pattern), Pbindef (a Pbind whose keys set changes), Tdef (a routine) or Ndef "
    "(a sound function)"))]
Source = Annotated[Code, Field(max_length=MAX_CODE, description=(
    "SuperCollider code of the source, e.g. Pbind(\\degree, Pseq([0, 2, 4], inf), "
    "\\dur, 0.25) or { SinOsc.ar(220) * 0.1 }"))]
When = Annotated[Literal["next_bar", "next_beat", "now"], Field(
    description="When it lands on the room's clock (default: next_bar)")]
#: Seconds a fade may last.
MAX_FADE = 600.0


class _Change(Action):
    """What every change names: its room, and when it lands."""

    journal = PATTERNS
    instance: RoomName
    at: When = "next_bar"


class _OnePattern(_Change):
    """A change of one pattern or proxy, by name (and kind, where names are shared)."""

    name: Name
    kind: Kind = None


class PatternSource(_OnePattern):
    """Replace its source (a Pbind, a function...)."""

    access = CODE
    action: Literal["source"]
    source: Source


class PatternDefine(_Change):
    """Define a new one and play it (source changes one that exists)."""

    access = CODE
    action: Literal["define"]
    name: NewName
    kind: NewKind
    source: Source
    play: Annotated[bool, Field(strict=True, description=(
        "false: only define it"))] = True


class PatternSet(_Change):
    """Set one key of a Pbindef (a Pdef of a Pbind becomes one)."""

    access = CODE
    action: Literal["set"]
    name: Name
    key: Annotated[ParamName, Field(description="The event key: degree, dur, amp, instrument...")]
    value: Annotated[Code, Field(max_length=4096, description=(
        "SuperCollider code of its value: 0.5, Pseq([0, 3, 5], inf), \\\\bass"))]


class PatternPlay(_OnePattern):
    """Play it again (a Pdef from its start)."""

    access = CHANGE
    action: Literal["play"]


class PatternStop(_OnePattern):
    """Stop it; every other pattern and proxy plays on."""

    access = SILENCE
    action: Literal["stop"]


class PatternMute(_OnePattern):
    """Mute it, playing on silently (a Pdef's events become rests, a Tdef pauses)."""

    access = SILENCE
    action: Literal["mute"]


class PatternUnmute(_Change):
    """Unmute it (no name: every muted one, which ends a solo)."""

    access = CHANGE
    action: Literal["unmute"]
    name: Name | None = None
    kind: Kind = None


class PatternSolo(_OnePattern):
    """Mute every other pattern and proxy in the room (unmute with no name ends it)."""

    access = SILENCE
    action: Literal["solo"]


class PatternFade(_OnePattern):
    """Fade it out over `seconds`, then stop it."""

    access = SILENCE
    action: Literal["fade"]
    seconds: Annotated[float, Field(gt=0, le=MAX_FADE, allow_inf_nan=False, strict=True,
                                    description="How long the fade lasts")]


PatternArgs = Annotated[PatternDefine | PatternSource | PatternSet | PatternPlay | PatternStop
                        | PatternMute | PatternUnmute | PatternSolo | PatternFade,
                        Field(discriminator="action")]


class PatternOutput(Result):
    """One change made or scheduled."""

    instance: str
    action: str
    kind: str | None = Field(description="Pdef, Pbindef, Tdef or Ndef (None: every muted one)")
    name: str | None
    lands_in: float = Field(description="seconds from this answer until it lands (0: now)")

    def text(self) -> str:
        what = f"{self.kind} {self.name}" if self.name else "every muted pattern"
        when = f"in {self.lands_in:.2f} s" if self.lands_in > 0 else "now"
        return f"{self.instance}: {self.action} {what}, {when}"


@operation(cli=CliForm("pattern", ("action", "instance", "name")))
def pattern(orch: Orchestra, args: PatternArgs) -> PatternOutput:
    """Define a Pdef, Pbindef, Tdef or Ndef in a room, or change one while it plays, on the
    next bar (or beat, or now); the others play on. `undo` takes each change back."""
    when = {"next_bar": "bar", "next_beat": "beat", "now": "now"}[args.at]
    if isinstance(args, PatternDefine):
        made = orch.patterns.define(args.instance, args.kind, args.name, args.source,
                                    args.play, when)
        return PatternOutput(instance=made.room, action="define", kind=made.kind,
                             name=made.name, lands_in=round(made.lands_in, 3))
    kind = getattr(args, "kind", None)
    change = orch.patterns.change(
        args.instance, args.action, args.name, kind, when,
        source=getattr(args, "source", None), key=getattr(args, "key", None),
        value=getattr(args, "value", None), seconds=getattr(args, "seconds", 2.0))
    return PatternOutput(instance=change.room, action=change.action, kind=change.kind,
                         name=change.name, lands_in=round(change.lands_in, 3))
