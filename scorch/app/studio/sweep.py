"""Sweeps: vary one or two params, hear each step, and find the value that comes closest.

The sweep itself knows no room: it is given how to set the values (``set_values``)
and how to hear the result (``hear``), so a test drives it with plain functions.

- A grid: every combination of each axis's values (linear, or evenly spaced in ratio
  for a frequency-like axis), heard in turn.
- A search, toward a target on one axis: a coarse grid first, then the bracket around
  the best step is narrowed: by bisection where the figure crosses the target between
  two neighbours (a monotone knob: a filter's cutoff and the brightness it gives), by
  golden-section search of the distance otherwise.

A figure is read from each step's :class:`~scorch.audio.report.SoundReport`; a
frequency figure's distance to its target is in octaves, others in their own units,
and ``balance`` is the RMS of the octave bands' level-matched differences (dB) from a
reference's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from scorch.audio import Reference, SoundReport, compare

#: What a sweep can aim at, and whether its distance is in octaves.
FIGURES: dict[str, bool] = {
    "centroid": True, "pitch": True, "loudness": False, "rms": False, "tilt": False,
    "crest": False, "width": False, "flatness": False, "band": False, "balance": False,
}
_GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass(frozen=True)
class Axis:
    """One param swept from ``low`` to ``high`` in ``steps`` values."""

    param: str
    low: float
    high: float
    steps: int
    ratio: bool
    """Evenly spaced in ratio (a frequency, a time) rather than in difference."""

    def values(self) -> list[float]:
        """The grid's values, ``low`` first."""
        if self.steps == 1:
            return [self.low]
        return [self.at(i / (self.steps - 1)) for i in range(self.steps)]

    def at(self, share: float) -> float:
        """The value ``share`` (0 to 1) of the way from low to high."""
        if self.ratio:
            return self.low * (self.high / self.low) ** share
        return self.low + (self.high - self.low) * share

    def share(self, value: float) -> float:
        """How far ``value`` is from low to high, 0 to 1."""
        if self.ratio:
            return math.log(value / self.low) / math.log(self.high / self.low)
        return (value - self.low) / (self.high - self.low)


@dataclass(frozen=True)
class Target:
    """What a sweep aims at: ``figure`` reaching ``value`` (or, for ``balance``, a band set)."""

    figure: str
    value: float | None
    band: str | None = None
    """The octave band of figure ``band`` (its level, dB)."""
    reference: Reference | None = None
    """The reference whose octave balance ``balance`` aims at."""


class Step(NamedTuple):
    """One step of a sweep: the values set, the figure heard and its distance to the target."""

    values: tuple[float, ...]
    figure: float | None
    distance: float | None
    report: SoundReport


def figure(report: SoundReport, target: Target) -> float | None:
    """The figure ``target`` names, read from ``report`` (None: not measured there)."""
    name, balance = target.figure, report.balance
    if name == "balance":
        if target.reference is None:
            return None
        bands = compare(report, target.reference).octaves
        return math.sqrt(sum(db * db for db in bands.values()) / len(bands)) if bands else None
    if name == "band":
        return None if balance is None or target.band is None else balance.octaves.get(
            target.band)
    values = {
        "centroid": report.centroid_hz, "pitch": report.fundamental_hz,
        "loudness": report.loudness.integrated_lufs if report.loudness else None,
        "rms": report.rms_dbfs, "flatness": report.spectral_flatness,
        "tilt": balance.tilt_db_per_octave if balance else None,
        "crest": balance.crest_db if balance else None,
        "width": balance.width if balance else None,
    }
    return values[name]


def distance(value: float | None, target: Target) -> float | None:
    """How far a figure is from the target: octaves for frequencies, else its own units."""
    if value is None:
        return None
    if target.figure == "balance":
        return value
    if target.value is None:
        return None
    if FIGURES[target.figure]:
        return abs(math.log2(value / target.value)) if value > 0 and target.value > 0 else None
    return abs(value - target.value)


def run(axes: Sequence[Axis], target: Target | None, search: bool, refine: int,
        set_values: Callable[[dict[str, float]], None], hear: Callable[[], SoundReport],
        on_step: Callable[[int, int, Step], None] | None = None) -> list[Step]:
    """Set each step's values, hear it and measure it; the steps in the order heard."""
    steps: list[Step] = []
    grid = [()] if not axes else _product([axis.values() for axis in axes])
    planned = len(grid) + (refine if search else 0)
    measure = target or Target("centroid", None)

    def step(values: tuple[float, ...]) -> Step:
        set_values({axis.param: value for axis, value in zip(axes, values, strict=True)})
        report = hear()
        found = figure(report, measure)
        done = Step(values, found, distance(found, measure), report)
        steps.append(done)
        if on_step is not None:
            on_step(len(steps), planned, done)
        return done

    for values in grid:
        step(values)
    if search and target is not None and len(axes) == 1 and refine > 0:
        _narrow(axes[0], target, steps, step, refine)
    return steps


def _narrow(axis: Axis, target: Target, steps: list[Step],
            step: Callable[[tuple[float, ...]], Step], refine: int) -> None:
    """Narrow the bracket around the best grid step: bisection where the figure crosses
    the target between it and a neighbour, golden-section search of the distance else."""
    ordered = sorted(steps, key=lambda s: s.values[0])
    best = min(range(len(ordered)), key=lambda i: _key(ordered[i]))
    if target.value is not None and target.figure != "balance":
        for neighbour in (best - 1, best + 1):
            if 0 <= neighbour < len(ordered) and _crosses(ordered[best], ordered[neighbour],
                                                           target.value):
                low, high = sorted((ordered[best], ordered[neighbour]),
                                   key=lambda s: s.values[0])
                for _ in range(refine):
                    middle = step((axis.at((axis.share(low.values[0])
                                            + axis.share(high.values[0])) / 2),))
                    if _crosses(low, middle, target.value):
                        high = middle
                    else:
                        low = middle
                return
    start = axis.share(ordered[max(0, best - 1)].values[0])
    end = axis.share(ordered[min(len(ordered) - 1, best + 1)].values[0])
    if refine < 2 or end <= start:
        return
    a, b = end - _GOLDEN * (end - start), start + _GOLDEN * (end - start)
    at_a, at_b = step((axis.at(a),)), step((axis.at(b),))
    for _ in range(refine - 2):
        if _key(at_a) <= _key(at_b):  # the least lies in [start, b]
            end, b, at_b = b, a, at_a
            a = end - _GOLDEN * (end - start)
            at_a = step((axis.at(a),))
        else:  # in [a, end]
            start, a, at_a = a, b, at_b
            b = start + _GOLDEN * (end - start)
            at_b = step((axis.at(b),))


def _crosses(a: Step, b: Step, value: float) -> bool:
    return (a.figure is not None and b.figure is not None
            and (a.figure - value) * (b.figure - value) <= 0)


def _key(step: Step) -> float:
    return math.inf if step.distance is None else step.distance


def closest(steps: Sequence[Step]) -> Step | None:
    """The step nearest the target (None when none was measured)."""
    measured = [s for s in steps if s.distance is not None]
    return min(measured, key=_key) if measured else None


def _product(lists: list[list[float]]) -> list[tuple[float, ...]]:
    combos: list[tuple[float, ...]] = [()]
    for values in lists:
        combos = [(*combo, value) for combo in combos for value in values]
    return combos
