"""Takeover: immediate, pickup and value scaling, move by move."""

from __future__ import annotations

import pytest

from midi.curves import make_curve
from midi.takeover import Takeover

# (mode, parameter's position before the first move, control moves, parameter after each move)
CASES = [
    ("immediate", 0.8, [0.1, 0.2], [0.1, 0.2]),
    ("pickup", None, [0.2, 0.3], [0.2, 0.3]),
    ("pickup", 0.5, [0.1, 0.3, 0.6, 0.7, 0.2], [0.5, 0.5, 0.6, 0.7, 0.2]),
    ("pickup", 0.5, [0.9, 0.8, 0.4], [0.5, 0.5, 0.4]),
    ("pickup", 0.5, [0.2, 0.499], [0.5, 0.499]),
    ("pickup", 0.5, [0.9], [0.5]),
    ("scale", 0.5, [0.2, 0.1, 0.0], [0.5, 0.25, 0.0]),
    ("scale", 0.5, [0.6, 0.8, 1.0], [0.5, 0.75, 1.0]),
    ("scale", 0.5, [0.6, 0.8, 0.7], [0.5, 0.75, 0.7]),  # back across the parameter
    ("scale", 0.5, [0.6, 0.7, 0.65], [0.5, 0.625, 0.625 - 0.05 * 0.625 / 0.7]),
    ("scale", 0.5, [0.4, 0.6, 0.7], [0.5, 0.6, 0.7]),  # crossing locks it to the control
    ("scale", 0.2, [1.0, 1.0], [0.2, 0.2]),  # at the end of the travel: nowhere to go
    ("immediate", None, [0.3], [0.3]),
]


@pytest.mark.parametrize(("mode", "start", "moves", "expected"), CASES)
def test_takeover_moves_the_parameter_as_the_mode_says(mode, start, moves, expected):
    takeover = Takeover(mode)
    current = start
    seen = []
    for position in moves:
        moved = takeover.move(position, current)
        if moved is not None:
            current = moved
        seen.append(current)
    assert seen == pytest.approx(expected)


def test_pickup_lets_go_when_the_parameter_is_moved_elsewhere():
    takeover = Takeover("pickup")
    assert takeover.move(0.5, 0.5) == 0.5
    assert takeover.move(0.6, 0.5) == 0.6
    # Something else (MCP, another knob) set the parameter to 0.1: no jump back.
    assert takeover.move(0.65, 0.1) is None
    assert takeover.move(0.05, 0.1) == 0.05


@pytest.mark.parametrize("mode", ["pickup", "scale"])
@pytest.mark.parametrize(("curve", "low", "high", "start"),
                         [("lin", 200, 2000, 1200), ("exp", 200, 8000, 1800), (-4, 0, 1, 0.3)])
def test_a_knob_turned_all_the_way_keeps_the_param_it_picked_up_to_the_end(
        mode, curve, low, high, start):
    # the param is kept in its units: each move's position is the value mapped back, which
    # a float rounds a hair off where the knob left it (a lin 200..2000 stalled at 73 of 127)
    shape = make_curve(curve, low, high)
    takeover, value = Takeover(mode), float(start)
    for raw in range(128):
        moved = takeover.move(raw / 127, shape.unmap(value))
        if moved is not None:
            value = shape.map(moved)
    assert value == pytest.approx(high)
