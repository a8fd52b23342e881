"""The sweep operation: turn a named node's knob over a range, hear each step, find the value.

Each step sets the node's params (as ``set`` does, so the router and restores keep
them), lets the sound settle, and hears the node alone (``listen`` with ``node``):
the table, a plot, and the step that came closest to a target (a number, or a
reference's figure), and the node is left where asked (the closest, or where it was).
A client that asked for progress is told after each step.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, Strict

from scorch.api import progress
from scorch.api.fields import NodeName, RoomName
from scorch.api.operation import (
    ROOMS_NAMED,
    SET,
    Args,
    CliForm,
    Patience,
    Result,
    operation,
)
from scorch.api.ops.audio import ReferenceName, live_source, reference_named, refused
from scorch.app.studio import Axis, Step, Target, closest, run
from scorch.audio import SoundReport
from scorch.audio.meter import OCTAVE_NAMES
from scorch.errors import NodeNotFound, ScorchError
from scorch.primitives.disk import write_atomically
from scorch.values import Float32, ParamName, Seconds, Text

if TYPE_CHECKING:
    from scorch.app import NodeInfo, Orchestra
    from scorch.audio import Reference

#: The most listening one sweep may take (steps times seconds and settle).
MAX_LISTENING = 300.0
#: The most steps of a grid (two params: the product of their steps).
MAX_GRID = 64

Value = Float32 | None
"""A param's value: one scsynth can hold (a finite float32)."""
Steps = Annotated[int | None, Strict(), Field(ge=1, le=32)]
Figure = Literal["centroid", "pitch", "loudness", "rms", "tilt", "crest", "width", "flatness",
                 "band", "balance"]


def _octave(band: str) -> str:
    """``band`` if it names an octave band (IEC 61260: 31.5 ... 1k ... 16k)."""
    if band not in OCTAVE_NAMES:
        raise ValueError(f"no octave band {band!r}; the bands: {', '.join(OCTAVE_NAMES)}")
    return band


OctaveBand = Annotated[Text, AfterValidator(_octave)]


class SweepArgs(Args):
    """What to vary, over which range, and what to aim at."""

    instance: RoomName
    node: Annotated[NodeName, Field(description="The named node")]
    param: Annotated[ParamName, Field(description="The param to vary")]
    low: Annotated[Value, Field(description="From (default: its spec)")] = None
    high: Annotated[Value, Field(description="To (default: its spec)")] = None
    steps: Annotated[Steps, Field(description=(
        "Values, low to high (default 8; searching: 6)"))] = None
    param2: Annotated[ParamName | None, Field(description=(
        "A second param: a grid, no search"))] = None
    low2: Annotated[Value, Field(description="param2 from")] = None
    high2: Annotated[Value, Field(description="param2 to")] = None
    steps2: Annotated[Steps, Field(description="param2's values (default 5)")] = None
    figure: Annotated[Figure, Field(description=(
        "Read at each step; band: an octave band's dB (give `band`); balance: dB from "
        "the reference's band balance"))] = "centroid"
    band: Annotated[OctaveBand | None, Field(max_length=8, description=(
        "An octave band: 31.5, 63, 125 ... 1k ... 16k"))] = None
    value: Annotated[Value, Field(description="Aim the figure at this value")] = None
    reference: Annotated[ReferenceName | None, Field(description=(
        "Aim the figure at this reference's"))] = None
    refine: Annotated[int, Strict(), Field(ge=0, le=16, description=(
        "Steps narrowing in after the grid"))] = 6
    seconds: Annotated[Seconds, Field(ge=0.3, le=5, description="Heard per step")] = 1.0
    settle: Annotated[float, Strict(), Field(ge=0, le=2, allow_inf_nan=False, description=(
        "Seconds to settle before hearing"))] = 0.25
    leave: Annotated[Literal["closest", "start"] | None, Field(description=(
        "Where to leave the node (default: closest with a target)"))] = None
    leave_at: Annotated[Value, Field(description="Leave param here instead")] = None


class SweepRow(BaseModel):
    """One step."""

    values: dict[str, float]
    figure: float | None
    distance: float | None = Field(description="to the target: octaves for Hz, else units")
    loudness: float | None = Field(description="integrated LUFS")


class SweepOutput(Result):
    """The steps heard, the closest, where the node was left and the plot."""

    instance: str
    node: str
    figure: str
    target: float | None = Field(description="the value aimed at (None: none, or a balance)")
    rows: list[SweepRow] = Field(description="in the order heard")
    closest: dict[str, float] | None
    closest_figure: float | None
    left_at: dict[str, float]
    picture: str

    def images(self) -> list[Path]:
        """The plot."""
        return [Path(self.picture)]

    def text(self) -> str:
        """The table, the closest step and where the node was left."""
        aim = f" toward {self.target:g}" if self.target is not None else ""
        lines = [f"sweep of {self.node} in {self.instance}: {self.figure}{aim}, "
                 f"{len(self.rows)} steps"]
        for row in self.rows:
            values = ", ".join(f"{k} {v:.4g}" for k, v in row.values.items())
            figure = "none" if row.figure is None else f"{row.figure:.4g}"
            off = "" if row.distance is None else f" (off by {row.distance:.3g})"
            lines.append(f"  {values}: {self.figure} {figure}{off}")
        if self.closest is not None:
            lines.append("closest: " + ", ".join(f"{k} = {v:.4g}" for k, v in
                                                self.closest.items())
                         + f" ({self.figure} {self.closest_figure:.4g})")
        lines.append("left at: " + ", ".join(f"{k} = {v:.4g}" for k, v in self.left_at.items()))
        return "\n".join([*lines, f"Plot: {self.picture}"])


@operation(access=SET, cli=CliForm("sweep", ("instance", "node", "param")),
           journal=ROOMS_NAMED, patience=Patience(seconds=MAX_LISTENING + 120.0))
def sweep(orch: Orchestra, args: SweepArgs) -> SweepOutput:
    """Vary a named node's param (or two, as a grid), hearing it at each step, toward a
    target figure (`value`, or a `reference`'s): the table, a plot, the closest value
    (one param: searched); the node is left there, where it started, or at `leave_at`."""
    room, name = args.instance, args.node
    try:
        node = orch.rooms.node(room, name, "sweep")
    except NodeNotFound as err:
        err.argument = "node"
        raise
    axes = [_axis(orch, node, args.param, args.low, args.high, args.steps or None)]
    if args.param2 is not None:
        axes.append(_axis(orch, node, args.param2, args.low2, args.high2, args.steps2 or 5,
                          "param2"))
    elif (args.low2, args.high2, args.steps2) != (None, None, None):
        raise refused("sweep: low2, high2 and steps2 go with param2", "param2")
    target = _target(orch, args)
    searching = target is not None and len(axes) == 1 and args.refine > 0
    if args.steps is None:
        axes[0] = Axis(axes[0].param, axes[0].low, axes[0].high, 6 if searching else 8,
                       axes[0].ratio)
    planned = _grid_size(axes) + (args.refine if searching else 0)
    if _grid_size(axes) > MAX_GRID:
        raise refused(f"sweep: {_grid_size(axes)} steps in the grid; at most {MAX_GRID}",
                      "steps2")
    if planned * (args.seconds + args.settle) > MAX_LISTENING:
        raise refused(f"sweep: {planned} steps of {args.seconds + args.settle:g} s is more "
                      f"than {MAX_LISTENING:g} s of listening; fewer steps or shorter ones",
                      "steps")
    if args.leave_at is not None and (args.leave is not None or len(axes) > 1):
        raise refused("sweep: leave_at goes with one param and without leave", "leave_at")
    started = {axis.param: node.params[axis.param] for axis in axes}
    view = orch.rooms.view(room)
    source = live_source(orch, room, name, 2)

    def set_values(values: dict[str, float]) -> None:
        orch.rooms.set(room, name, values)
        if args.settle:
            time.sleep(args.settle)  # a filter's or a lag's own time, not a wait for readiness

    def hear() -> SoundReport:
        return orch.studio.listen(room, view, source, args.seconds, draw=False).report

    def told(done: int, total: int, step: Step) -> None:
        values = ", ".join(f"{a.param}={v:.4g}" for a, v in zip(axes, step.values, strict=True))
        figure = "none" if step.figure is None else f"{step.figure:.4g}"
        progress.report(done, total, f"{values}: {args.figure} {figure}")

    try:
        steps = run(axes, target, searching, args.refine, set_values, hear, told)
    except BaseException:
        with contextlib.suppress(ScorchError):  # a sweep cut short leaves the node as it was
            orch.rooms.set(room, name, started)
        raise
    leave = args.leave or ("closest" if target is not None else "start")
    best = closest(steps)
    if args.leave_at is not None:
        left = {axes[0].param: args.leave_at}
    elif leave == "closest" and best is not None:
        left = {axis.param: value for axis, value in zip(axes, best.values, strict=True)}
    else:
        left = started
    orch.rooms.set(room, name, left)
    return _output(orch, args, axes, target, steps, best, left)


def _axis(orch: Orchestra, node: NodeInfo, param: str, low: float | None, high: float | None,
          steps: int | None, argument: str = "param") -> Axis:
    """One param's range: as given, else its spec's; in ratio where its spec warps so."""
    if param not in node.params:
        raise refused(f"node's SynthDef {node.synthdef!r} has no param {param!r}; its params: "
                      f"{', '.join(sorted(node.params))}", argument)
    spec = None
    if node.synthdef in orch.library.names():
        spec = next((p for p in orch.library.info(node.synthdef).params if p.name == param),
                    None)
    if (low is None or high is None) and spec is None:
        raise refused(f"sweep: give low and high for {param!r} (no spec says its range)",
                      ("low" if low is None else "high") + argument[5:])
    low = spec.minval if low is None and spec is not None else low
    high = spec.maxval if high is None and spec is not None else high
    assert low is not None and high is not None
    if low == high:
        raise refused(f"sweep: {param!r} from {low:g} to {high:g} is no range",
                      "high" + argument[5:])
    ratio = (spec is not None and spec.warp == "exp") and low > 0 and high > 0
    return Axis(param, low, high, steps or 8, bool(ratio))


def _target(orch: Orchestra, args: SweepArgs) -> Target | None:
    """What the sweep aims at: a value, or the reference's figure; None: nothing."""
    if args.figure == "band" and args.band is None:
        raise refused("sweep: figure band needs `band` (an octave band: 63, 1k...)", "band")
    if args.value is not None and args.reference is not None:
        raise refused("sweep: aim at `value` or at `reference`, not both", "value")
    if args.figure == "balance":
        if args.reference is None:
            raise refused("sweep: figure balance needs `reference` (its band balance)",
                          "reference")
        return Target("balance", None, reference=reference_named(orch, args.reference))
    if args.reference is not None:
        value = _reference_figure(reference_named(orch, args.reference), args)
        return Target(args.figure, value, band=args.band)
    if args.value is not None:
        return Target(args.figure, args.value, band=args.band)
    return None


def _reference_figure(reference: Reference, args: SweepArgs) -> float:
    """The reference's value of the figure swept toward."""
    loudness, balance = reference.loudness, reference.balance
    values = {
        "centroid": reference.centroid_hz,
        "loudness": loudness.integrated_lufs if loudness else None,
        "tilt": balance.tilt_db_per_octave if balance else None,
        "crest": balance.crest_db if balance else None,
        "width": balance.width if balance else None,
        "band": balance.octaves.get(args.band or "") if balance else None,
    }
    value = values.get(args.figure)
    if value is None:
        kept = ", ".join(name for name, v in values.items() if v is not None)
        raise refused(f"reference {reference.name!r} has no {args.figure} figure"
                      f"{' in band ' + args.band if args.band else ''}; it has: "
                      f"{kept or 'none'}", "figure")
    return value


def _grid_size(axes: list[Axis]) -> int:
    size = 1
    for axis in axes:
        size *= axis.steps
    return size


def _output(orch: Orchestra, args: SweepArgs, axes: list[Axis], target: Target | None,
            steps: list[Step], best: Step | None, left: dict[str, float]) -> SweepOutput:
    """The answer, with its plot drawn into the listening folder."""
    from scorch.audio.meter import sweep_plot

    folder = orch.studio.listening
    folder.mkdir(parents=True, exist_ok=True)
    picture = folder / f"sweep-{args.instance}-{args.node}-{time.strftime('%Y%m%d-%H%M%S')}.png"
    aim = target.value if target is not None else None
    write_atomically(picture, sweep_plot(
        [a.param for a in axes], [a.ratio for a in axes],
        [(s.values, s.figure) for s in steps], args.figure if target is None or
        target.figure != "balance" else "balance distance (dB)", aim,
        best.values if best is not None else None,
        f"sweep of {args.node} in {args.instance}"), durable=False)
    rows = [SweepRow(values={a.param: round(v, 6) for a, v in zip(axes, s.values, strict=True)},
                     figure=s.figure, distance=s.distance,
                     loudness=s.report.loudness.integrated_lufs if s.report.loudness else None)
            for s in steps]
    return SweepOutput(
        instance=args.instance, node=args.node, figure=args.figure, target=aim, rows=rows,
        closest=({a.param: v for a, v in zip(axes, best.values, strict=True)}
                 if best is not None else None),
        closest_figure=best.figure if best is not None else None, left_at=left,
        picture=str(picture))
