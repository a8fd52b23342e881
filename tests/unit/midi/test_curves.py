"""Curves: SuperCollider's warps over a range, and their inverses."""

from __future__ import annotations

import math

import pytest

from midi.curves import check_curve, make_curve

# (curve, range, position, expected value): figures from SuperCollider's ControlSpec.map
MAPS = [
    ("lin", (0.0, 10.0), 0.5, 5.0),
    ("linear", (10.0, 0.0), 0.25, 7.5),
    ("exp", (20.0, 20000.0), 0.5, math.sqrt(20.0 * 20000.0)),
    ("exp", (20.0, 20000.0), 0.0, 20.0),
    ("exp", (20.0, 20000.0), 1.0, 20000.0),
    ("exponential", (-1.0, -100.0), 0.5, -10.0),
    ("amp", (0.0, 1.0), 0.5, 0.25),
    ("amp", (1.0, 0.0), 0.5, 0.25),
    ("db", (-math.inf, 0.0), 0.5, 20 * math.log10(0.25)),
    ("db", (-math.inf, 0.0), 1.0, 0.0),
    ("db", (-math.inf, 0.0), 0.0, -math.inf),
    ("sin", (0.0, 1.0), 0.5, math.sin(math.pi / 4)),
    ("cos", (0.0, 1.0), 0.25, 0.5 - math.cos(math.pi / 4) / 2),
    ("cos", (0.0, 1.0), 0.5, 0.5),
    (4, (0.0, 1.0), 0.5, 0.11920292),
    (-4, (0.0, 1.0), 0.5, 0.88079708),
    ("4", (0.0, 1.0), 0.5, 0.11920292),
    (0, (0.0, 2.0), 0.5, 1.0),
    ("lin", (0.0, 10.0), 1.5, 10.0),  # positions are clipped to the travel
    ("lin", (0.0, 10.0), -1.0, 0.0),
]


@pytest.mark.parametrize(("curve", "bounds", "position", "expected"), MAPS)
def test_curve_maps_a_position_as_supercollider_does(curve, bounds, position, expected):
    assert make_curve(curve, *bounds).map(position) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize(
    ("curve", "bounds"),
    [
        ("lin", (0.0, 10.0)),
        ("exp", (20.0, 20000.0)),
        ("amp", (0.0, 1.0)),
        ("amp", (1.0, 0.0)),
        ("db", (-60.0, 6.0)),
        ("db", (0.0, -60.0)),
        ("sin", (0.0, 1.0)),
        ("cos", (100.0, 200.0)),
        (3.5, (0.0, 1.0)),
        (-2, (10.0, -10.0)),
    ],
)
def test_unmap_inverts_map_over_the_whole_travel(curve, bounds):
    c = make_curve(curve, *bounds)
    for i in range(101):
        x = i / 100
        assert c.unmap(c.map(x)) == pytest.approx(x, abs=1e-6)


@pytest.mark.parametrize(
    ("curve", "bounds", "message"),
    [
        ("exp", (0.0, 1.0), "does not cross or touch 0"),
        ("exp", (-1.0, 1.0), "does not cross or touch 0"),
        ("wobble", (0.0, 1.0), "unknown curve 'wobble'"),
        ("lin", (0.0, math.inf), "finite"),
        ("lin", (-math.inf, 0.0), "finite"),
        (math.nan, (0.0, 1.0), "finite"),
    ],
)
def test_impossible_curves_are_refused_with_the_reason(curve, bounds, message):
    with pytest.raises(ValueError, match=message):
        check_curve(curve, bounds)
