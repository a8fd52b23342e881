"""The sweep's plan and search, driven by plain functions instead of a room."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.app.studio.sweep import Axis, Target, closest, distance, figure, run
from scorch.audio.analysis import analyse
from scorch.audio.reference import Reference

BASE = analyse(np.zeros(4800), 48000)


class Knob:
    """A fake node: the centroid it gives is a function of its params."""

    def __init__(self, sound) -> None:
        self.sound = sound
        self.values: dict[str, float] = {}
        self.heard: list[dict[str, float]] = []

    def set(self, values: dict[str, float]) -> None:
        self.values.update(values)

    def hear(self):
        self.heard.append(dict(self.values))
        return BASE.model_copy(update={"centroid_hz": self.sound(**self.values)})


def test_an_axis_spaces_its_values_evenly_in_ratio_or_in_difference() -> None:
    assert Axis("cutoff", 100, 10000, 3, True).values() == pytest.approx([100, 1000, 10000])
    assert Axis("amp", 0, 1, 5, False).values() == [0, 0.25, 0.5, 0.75, 1.0]
    axis = Axis("cutoff", 100, 6400, 7, True)
    assert axis.share(axis.at(0.3)) == pytest.approx(0.3)


def test_a_grid_of_two_params_hears_every_combination_in_order() -> None:
    knob = Knob(lambda cutoff, res: cutoff * (1 + res))
    told = []
    steps = run([Axis("cutoff", 100, 400, 2, True), Axis("res", 0, 1, 3, False)], None, False,
                6, knob.set, knob.hear, lambda done, total, step: told.append((done, total)))
    assert [s.values for s in steps] == [(100, 0), (100, 0.5), (100, 1), (400, 0), (400, 0.5),
                                         (400, 1)]
    assert [s.figure for s in steps] == [100, 150, 200, 400, 600, 800]
    assert told == [(i, 6) for i in range(1, 7)]
    assert closest(steps) is None  # no target: nothing is closest


@settings(max_examples=40, deadline=None)
@given(known=st.floats(150, 4500), slope=st.floats(0.5, 3.0), floor=st.floats(0, 400))
def test_a_search_finds_a_monotone_knobs_value_within_two_percent(known: float, slope: float,
                                                                  floor: float) -> None:
    knob = Knob(lambda cutoff: floor + slope * cutoff)
    steps = run([Axis("cutoff", 100, 5000, 6, True)], Target("centroid", floor + slope * known),
                True, 6, knob.set, knob.hear)
    best = closest(steps)
    assert best is not None and len(steps) == 12
    assert abs(best.values[0] / known - 1) < 0.02


def test_a_search_of_a_distance_with_one_least_narrows_in_on_it() -> None:
    # Not monotone: the figure peaks at 1234 and never reaches the target, so the least
    # distance is searched for (golden section).
    knob = Knob(lambda cutoff: 5000 - abs(math.log2(cutoff / 1234)) * 1000)
    steps = run([Axis("cutoff", 100, 8000, 6, True)], Target("centroid", 6000), True, 8,
                knob.set, knob.hear)
    best = closest(steps)
    assert best is not None and abs(best.values[0] / 1234 - 1) < 0.05
    assert len(steps) == 14


def test_figures_and_distances() -> None:
    report = analyse(np.sin(2 * np.pi * 440 * np.arange(48000) / 48000) * 0.5, 48000)
    assert figure(report, Target("pitch", None)) == pytest.approx(440, abs=0.5)
    assert distance(880.0, Target("pitch", 440.0)) == pytest.approx(1.0)  # an octave
    assert distance(-20.0, Target("loudness", -14.0)) == pytest.approx(6.0)
    assert distance(None, Target("loudness", -14.0)) is None
    assert figure(report, Target("band", None, band="500")) == report.balance.octaves["500"]
    same = Reference.of("r", "a test", 0.0, report)
    assert figure(report, Target("balance", None, reference=same)) == pytest.approx(0.0)
