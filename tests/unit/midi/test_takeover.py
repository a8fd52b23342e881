"""Takeover: immediate, pickup and value scaling, move by move."""

from __future__ import annotations

import pytest

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
