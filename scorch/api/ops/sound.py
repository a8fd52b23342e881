"""Operations on sound: the SynthDef library, and named nodes to play, set and release."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from scorch.api.fields import (
    NodeName,
    Params,
    RoomName,
    Selector,
    SynthDefName,
    TimedArgs,
)
from scorch.api.operation import (
    CHANGE,
    DESTROY,
    READ,
    ROOMS_NAMED,
    SET,
    Action,
    Changes,
    CliForm,
    Result,
    Spread,
    operation,
)
from scorch.errors import InvalidRequest
from scorch.primitives.synthdefs import ParamSpec, SynthDefInfo
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app import Orchestra


class Param(BaseModel):
    """A SynthDef control with its useful range."""

    name: str
    default: float
    min: float
    max: float
    warp: str
    step: float
    units: str
    description: str

    @classmethod
    def of(cls, spec: ParamSpec) -> Param:
        """The API form of a library param spec."""
        return cls(name=spec.name, default=spec.default, min=spec.minval, max=spec.maxval,
                   warp=spec.warp, step=spec.step, units=spec.units,
                   description=spec.description)


class SynthDefOut(BaseModel):
    """A library SynthDef."""

    name: str
    description: str
    category: str
    sustained: bool = Field(description="holds until released (has a gate)")
    pitched: bool = Field(description="has a freq control")
    params: list[Param] = Field(description="each control with its range (empty in the "
                                "compact list: see controls, and describe for the ranges)")
    controls: list[str] = Field(default_factory=list, description="its controls' names")

    @classmethod
    def of(cls, info: SynthDefInfo, full: bool = True) -> SynthDefOut:
        """The API form of a library SynthDef (without its params' specs unless ``full``)."""
        return cls(name=info.name, description=info.description, category=info.category,
                   sustained=info.sustained, pitched=info.pitched,
                   params=[Param.of(p) for p in info.params] if full else [],
                   controls=[p.name for p in info.params])


class SynthDefsList(Action):
    """List the library."""

    access = READ
    action: Literal["list"] = "list"
    full: Annotated[Flag, Field(description="Every param's range, units and description "
                                "too (by default: names and controls; describe one for its "
                                "ranges)")] = False


class SynthDefsDescribe(Action):
    """Describe one SynthDef: its params with range, units and default."""

    access = READ
    action: Literal["describe"]
    name: Annotated[SynthDefName, Field(description="The SynthDef")]


class SynthDefsLoad(Action):
    """Load one SynthDef into rooms (to use it from your own code)."""

    access = SET
    action: Literal["load"]
    name: Annotated[SynthDefName, Field(description="The SynthDef")]
    instance: Annotated[Selector, Field(description='Where: a name, a group or "*"')]


SynthDefsArgs = Annotated[SynthDefsList | SynthDefsDescribe | SynthDefsLoad,
                          Field(discriminator="action")]


class SynthDefsOutput(Result):
    """The answer of the synthdefs tool."""

    action: str
    synthdefs: list[SynthDefOut] = Field(default_factory=list)
    loaded_on: list[str] = Field(default_factory=list, description="rooms it was loaded on")

    def text(self) -> str:
        if self.action != "list":
            lines = [line for d in self.synthdefs for line in _described(d)]
            if self.loaded_on:
                lines.append(f"loaded on {', '.join(self.loaded_on)}")
            return "\n".join(lines)
        lines = [f"{d.name} ({d.category}{', sustained' if d.sustained else ''}): "
                 f"{d.description} [{', '.join(d.controls)}]" for d in self.synthdefs]
        if self.synthdefs and not self.synthdefs[0].params:
            lines.append("synthdefs(action='describe', name=...) gives one's ranges and "
                         "units; action='list' with full=true gives them all")
        return "\n".join(lines)


def _described(d: SynthDefOut) -> list[str]:
    """A SynthDef and a line a param: ``freq 440 (20..20000 Hz, exp): Pitch``."""
    kind = ", ".join([d.category, *(["sustained"] if d.sustained else []),
                      *(["pitched"] if d.pitched else [])])
    lines = [f"{d.name} ({kind}): {d.description}"]
    for p in d.params:
        units = f" {p.units}" if p.units else ""
        step = f", step {p.step:g}" if p.step else ""
        lines.append(f"  {p.name} {p.default:g} ({p.min:g}..{p.max:g}{units}, {p.warp}{step})"
                     + (f": {p.description}" if p.description else ""))
    return lines


@operation(cli=CliForm("synthdefs", ("action", "name")), spread=Spread(any_host=True))
def synthdefs(orch: Orchestra, args: SynthDefsArgs) -> SynthDefsOutput:
    """The SynthDef library: ready-made sounds with their params' range, units and default.
    play loads one by itself; load it to use it from your own code."""
    if args.action == "list":
        return SynthDefsOutput(action="list", synthdefs=[
            SynthDefOut.of(i, full=args.full) for i in orch.rooms.synthdefs()])
    described = [SynthDefOut.of(orch.library.info(args.name))]
    if args.action == "describe":
        return SynthDefsOutput(action="describe", synthdefs=described)
    loaded = orch.rooms.load_synthdef(args.instance, args.name)
    return SynthDefsOutput(action="load", synthdefs=described, loaded_on=loaded)


class PlayArgs(TimedArgs):
    """A SynthDef to start, where, with which values."""

    instance: RoomName
    synthdef: Annotated[SynthDefName, Field(description=(
        "A library SynthDef (see synthdefs), or one this room's code added"))]
    params: Params | None = None
    node: Annotated[NodeName | None, Field(
        description="Its name (reusing one replaces that node)")] = None
    target: Annotated[NodeName | None, Field(description=(
        "A named node to go before or after (an effect after its source)"))] = None
    add_action: Annotated[Literal["head", "tail", "before", "after"] | None, Field(
        description="head or tail of the default group (default tail), or before or "
        "after target (default after)")] = None

    @model_validator(mode="before")
    @classmethod
    def _deprecated_name(cls, data: Any) -> Any:
        """``name``, the node's old argument name, stands for ``node`` (deprecated)."""
        if isinstance(data, dict) and "name" in data and "node" not in data:
            data = {("node" if k == "name" else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _placed(self) -> PlayArgs:
        if self.target is None and self.add_action in ("before", "after"):
            raise ValueError(f"add_action {self.add_action!r} needs a target (a named node)")
        if self.target is not None and self.add_action in ("head", "tail"):
            raise ValueError(f"add_action {self.add_action!r} is in the default group: "
                             "give before or after with a target")
        return self

    def placed(self) -> str:
        """Where it goes: head, tail, before or after."""
        return self.add_action or ("after" if self.target is not None else "tail")


class PlayOutput(Result):
    """A synth that started."""

    instance: str
    synthdef: str
    node: str | None = Field(description="the persistent node's name, when named")
    node_id: int | None = None
    params: dict[str, float]
    warnings: list[str] = Field(description="values outside the param's spec range")
    at: float | None = Field(None, description="the Unix time scsynth starts it; null: now")

    def text(self) -> str:
        what = f"node {self.node} (#{self.node_id})" if self.node else f"#{self.node_id}"
        return (f"{self.instance}: {self.synthdef} {what} {_when('plays', self.at)}"
                f"{_values(self.params)}{_warned(self.warnings)}")


def _when(verb: str, at: float | None) -> str:
    """``plays now``, or ``plays at 12:00:01.250``."""
    if at is None:
        return f"{verb} now"
    return f"{verb} at {time.strftime('%H:%M:%S', time.localtime(at))}.{int(at % 1 * 1000):03d}"


def _values(params: dict[str, float]) -> str:
    return (": " + ", ".join(f"{k} {v:g}" for k, v in params.items())) if params else ""


def _warned(warnings: list[str]) -> str:
    return "".join(f"\nwarning: {w}" for w in warnings)


@operation(access=CHANGE, cli=CliForm("play", ("instance", "synthdef")),
           journal=Changes(given="node"))
def play(orch: Orchestra, args: PlayArgs) -> PlayOutput:
    """Start a synth in a room. Name it (node) to change it later with set, release or
    listen: a named node survives crashes and restarts, in its place; unnamed synths are
    fire-and-forget. With at or delay it starts then, sample-accurately."""
    orch.rooms.view(args.instance)
    params = dict(args.params or {})
    warnings = (_check_params(orch.library.info(args.synthdef), params)
                if args.synthdef in orch.library else [])
    when = orch.tempo.when(args.at, args.delay, args.instance)
    played = orch.rooms.play(args.instance, args.synthdef, params, args.node, at=when,
                             target=args.target, add_action=args.placed())
    return PlayOutput(instance=args.instance, synthdef=args.synthdef, node=args.node,
                      node_id=played.get("node_id"), params=played["params"],
                      warnings=warnings, at=when)


class SetArgs(TimedArgs):
    """New values for a named node."""

    instance: RoomName
    node: NodeName
    params: Annotated[Params, Field(min_length=1)]


class SetOutput(Result):
    """A named node's values after the change."""

    instance: str
    node: str
    params: dict[str, float]
    warnings: list[str]
    at: float | None = Field(None, description="the Unix time scsynth sets them; null: now")

    def text(self) -> str:
        return (f"{self.instance}: node {self.node} {_when('set', self.at)}"
                f"{_values(self.params)}{_warned(self.warnings)}")


@operation(access=SET, name="set", cli=CliForm("set", ("instance", "node")), journal=ROOMS_NAMED)
def set_params(orch: Orchestra, args: SetArgs) -> SetOutput:
    """Change params of a named node while it plays; the values are kept for restarts.
    With at or delay scsynth sets them then."""
    node = orch.rooms.node(args.instance, args.node, "set")
    warnings = (_check_params(orch.library.info(node.synthdef), args.params)
                if node.synthdef in orch.library else [])
    when = orch.tempo.when(args.at, args.delay, args.instance)
    values = orch.rooms.set(args.instance, args.node, dict(args.params), at=when)
    return SetOutput(instance=args.instance, node=args.node, params=values, warnings=warnings,
                     at=when)


class ReleaseArgs(TimedArgs):
    """A named node to release."""

    instance: RoomName
    node: NodeName


class ReleaseOutput(Result):
    """A released named node."""

    instance: str
    node: str
    released: bool
    at: float | None = Field(None, description="the Unix time its fade begins; null: now")

    def text(self) -> str:
        return f"{self.instance}: node {self.node} released, its fade {_when('begins', self.at)}"


@operation(access=DESTROY, cli=CliForm("release", ("instance", "node")), journal=ROOMS_NAMED)
def release(orch: Orchestra, args: ReleaseArgs) -> ReleaseOutput:
    """Release a named node: it fades out over its release time and is forgotten.
    With at or delay the fade begins then."""
    when = orch.tempo.when(args.at, args.delay, args.instance)
    orch.rooms.release(args.instance, args.node, at=when)
    return ReleaseOutput(instance=args.instance, node=args.node, released=True, at=when)


def _check_params(info: SynthDefInfo, params: dict[str, float]) -> list[str]:
    """Refuse params the SynthDef lacks; warn about values outside their spec."""
    known = {p.name: p for p in info.params}
    unknown = [name for name in params if name not in known]
    if unknown:
        raise InvalidRequest(f"SynthDef {info.name!r} has no param "
                             f"{', '.join(map(repr, unknown))}; its params: {', '.join(known)}")
    return [f"{name}={value:g} is outside {spec.minval:g}..{spec.maxval:g} {spec.units}".rstrip()
            for name, value in params.items()
            if not (spec := known[name]).minval <= value <= spec.maxval]
