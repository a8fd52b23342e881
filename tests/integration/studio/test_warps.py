"""Warps: scorch's map, unmap and midpoints against sclang's own ControlSpec, case by case."""

from __future__ import annotations

import math
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.sclang.launch import SCLANG_ENV
from scorch.primitives.synthdefs.warps import Warp
from scorch.primitives.system.process import DIE_WITH_PARENT

#: (warp, low, high): every kind of warp, rising and falling.
SPECS = [
    ("lin", -1.0, 1.0), ("exp", 20.0, 20000.0), ("exp", 8.0, 0.125), ("sin", 0.0, 10.0),
    ("cos", 2.0, -2.0), ("amp", 0.0, 1.0), ("amp", 1.0, 0.0), ("db", -60.0, 0.0),
    ("db", 0.0, -40.0), ("4", 0.0, 1.0), ("-4", 100.0, 10.0), ("0", 0.0, 5.0),
]
POSITIONS = [0.0, 0.1, 0.25, 0.5, 0.9, 1.0]
#: Pairs of positions whose values are morphed between, halfway and a quarter.
PAIRS = [(0.2, 0.6), (0.9, 0.1)]


def _sc_warp(warp: str) -> str:
    try:
        return repr(float(warp))
    except ValueError:
        return "\\" + warp


@pytest.fixture(scope="module")
def sclang_says(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """Every figure of the table, as sclang's ControlSpec computes it (one sclang run)."""
    work = tmp_path_factory.mktemp("warps")
    lines = ["(", "var out = List.new, p = { |k, v| out.add(k ++ \" \" ++ v.asStringPrec(17)) };"]
    for i, (warp, low, high) in enumerate(SPECS):
        spec = f"ControlSpec({low!r}, {high!r}, {_sc_warp(warp)})"
        for x in POSITIONS:
            lines.append(f"p.(\"map {i} {x}\", {spec}.map({x!r}));")
            lines.append(f"p.(\"unmap {i} {x}\", {spec}.unmap({spec}.map({x!r})));")
        for j, (x, y) in enumerate(PAIRS):
            for f in (0.25, 0.5):
                lines.append(f"p.(\"between {i} {j} {f}\", {spec}.map({x!r} + (({y!r} - {x!r}) "
                             f"* {f!r})));")
    lines += ['File.use("' + str(work / "out.txt") + '", "w", { |f| out.do { |l| '
              'f.write(l ++ "\\n") } });', "0.exit;", ")"]
    script = work / "warps.scd"
    script.write_text("\n".join(lines))
    env = {**SCLANG_ENV, "XDG_CONFIG_HOME": str(work / "c"), "XDG_DATA_HOME": str(work / "d")}
    subprocess.run(["sclang", str(script)], env=env, cwd=work, capture_output=True,
                   timeout=120, preexec_fn=DIE_WITH_PARENT, check=False)
    figures = {}
    for line in (work / "out.txt").read_text().splitlines():
        key, value = line.rsplit(" ", 1)
        figures[key] = float(value)
    return figures


@pytest.mark.integration
@pytest.mark.parametrize("index", range(len(SPECS)), ids=[f"{w}:{lo:g}..{hi:g}"
                                                          for w, lo, hi in SPECS])
def test_map_unmap_and_morph_midpoints_match_sclangs_control_spec(
        index: int, sclang_says: dict[str, float]) -> None:
    warp = Warp(*SPECS[index])
    for x in POSITIONS:
        assert warp.map(x) == pytest.approx(sclang_says[f"map {index} {x}"], rel=1e-9, abs=1e-9)
        assert warp.unmap(warp.map(x)) == pytest.approx(sclang_says[f"unmap {index} {x}"],
                                                        abs=1e-9)
    for j, (x, y) in enumerate(PAIRS):
        a, b = warp.map(x), warp.map(y)
        for f in (0.25, 0.5):
            assert warp.between(a, b, f) == pytest.approx(
                sclang_says[f"between {index} {j} {f}"], rel=1e-9, abs=1e-9)


def test_halfway_on_an_exponential_warp_is_the_geometric_mean() -> None:
    assert Warp("exp", 20, 20000).between(110, 440, 0.5) == pytest.approx(220)
    assert Warp("lin", 0, 1).between(0.2, 0.4, 0.5) == pytest.approx(0.3)
    assert Warp("amp", 0, 1).between(0.1, 0.4, 0.5) == pytest.approx(0.225)


def test_where_a_warp_has_no_position_the_way_is_a_straight_line() -> None:
    exp = Warp("exp", 20, 20000)
    assert math.isnan(exp.unmap(-5))
    assert exp.between(-5, 15, 0.5) == 5


def test_steps_round_as_control_spec_does_and_the_ends_are_exact() -> None:
    assert Warp("lin", 0, 1).between(0, 1, 0.4, step=1) == 0
    assert Warp("lin", 0, 1).between(0, 1, 0.6, step=1) == 1
    assert Warp("exp", 20, 20000).between(110.1, 440.3, 0.0) == 110.1
    assert Warp("exp", 20, 20000).between(110.1, 440.3, 1.0) == 440.3


warps = st.sampled_from([w for w, _, _ in SPECS] + ["linear", "exponential", "-2.5"])
values = st.floats(-1e6, 1e6, allow_nan=False)


@given(warps, values, values, values, values, st.floats(0, 1))
def test_between_always_gives_a_finite_number_within_reach(
        warp: str, low: float, high: float, a: float, b: float, position: float) -> None:
    value = Warp(warp, low, high).between(a, b, position)
    if math.isfinite(value):
        return
    # only a db warp may give -inf (silence), and only on its way to or from it
    assert warp == "db" and value == -math.inf


def test_sclang_is_where_the_figures_come_from(sclang_says: dict[str, float]) -> None:
    """The reference really ran: every figure is there, and a known one is right."""
    assert len(sclang_says) == len(SPECS) * (2 * len(POSITIONS) + 2 * len(PAIRS))
    assert sclang_says["map 1 0.5"] == pytest.approx(math.sqrt(20 * 20000))
