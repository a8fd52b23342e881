"""Operations on sound: the SynthDef library, and named nodes to play, set and release."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from scorch.api.fields import (
    InstanceName,
    NodeName,
    Params,
    Selector,
    SynthDefName,
    TimedArgs,
)
from scorch.api.operation import CHANGE, DESTROY, READ, SET, Action, Result, operation
from scorch.errors import InvalidRequest
from scorch.primitives.synthdefs.library import ParamSpec, SynthDefInfo
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


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
    """Load one SynthDef into instances (to use it from your own code)."""

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
    loaded_on: list[str] = Field(default_factory=list, description="instances it was loaded on")

    def text(self) -> str:
        if self.action != "list":
            return super().text()
        lines = [f"{d.name} ({d.category}{', sustained' if d.sustained else ''}): "
                 f"{d.description} [{', '.join(d.controls)}]" for d in self.synthdefs]
        if self.synthdefs and not self.synthdefs[0].params:
            lines.append("synthdefs(action='describe', name=...) gives one's ranges and "
                         "units; action='list' with full=true gives them all")
        return "\n".join(lines)


@operation(command="synthdefs", positional=("action", "name"), any_host=True)
def synthdefs(orch: Orchestra, args: SynthDefsArgs) -> SynthDefsOutput:
    """The SynthDef library: ready-made sounds with descriptions and param specs (range,
    units, default). Load one to use it from your own code; play loads it by itself."""
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

    instance: InstanceName
    synthdef: Annotated[SynthDefName, Field(description=(
        "A library SynthDef (see synthdefs), or one this room's code added"))]
    params: Params | None = None
    node: Annotated[NodeName | None, Field(
        description="A name to change it later with set, release or listen (reusing a "
        "name replaces that node)")] = None
    target: Annotated[NodeName | None, Field(description=(
        "A named node to place this one before or after (an effect after its source); "
        "the place is kept through restarts"))] = None
    add_action: Annotated[Literal["head", "tail", "before", "after"] | None, Field(
        description="head or tail of the default group (default tail), or before or "
        "after target (default after, when target is given)")] = None

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


@operation(access=CHANGE, command="play", positional=("instance", "synthdef"))
def play(orch: Orchestra, args: PlayArgs) -> PlayOutput:
    """Start a synth in a room: a library SynthDef, or one your code added. Name it (node)
    to change it later with set or release: a named node survives crashes and restarts, in
    its place; unnamed synths are fire-and-forget. With at or delay it starts then,
    sample-accurately."""
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

    instance: InstanceName
    node: NodeName
    params: Annotated[Params, Field(min_length=1)]


class SetOutput(Result):
    """A named node's values after the change."""

    instance: str
    node: str
    params: dict[str, float]
    warnings: list[str]
    at: float | None = Field(None, description="the Unix time scsynth sets them; null: now")


@operation(name="set", access=SET, command="set", positional=("instance", "node"))
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

    instance: InstanceName
    node: NodeName


class ReleaseOutput(Result):
    """A released named node."""

    instance: str
    node: str
    released: bool
    at: float | None = Field(None, description="the Unix time its fade begins; null: now")


@operation(access=DESTROY, command="release", positional=("instance", "node"))
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
