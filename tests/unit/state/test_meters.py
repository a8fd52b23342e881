"""One room's levels: the last reading in dBFS and a history of one point a second."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from scorch.state.meters import CEILING_DB, FLOOR_DB, Levels, db


def test_levels_are_dbfs_with_silence_at_the_floor() -> None:
    assert db(1.0) == 0.0
    assert db(0.5) == -6.0
    assert db(0.0) == db(-1.0) == db(math.nan) == FLOOR_DB


def test_the_history_keeps_the_loudest_of_each_second_and_forgets_old_ones() -> None:
    levels = Levels(seconds=3)
    levels.add(100.1, [0.1, 0.5], [0.05, 0.1])
    levels.add(100.9, [0.25, 0.1], [0.2, 0.1])
    levels.add(101.0, [0.0], [0.0])
    assert levels.history(101.5) == [(100, -6.0, -14.0), (101, FLOOR_DB, FLOOR_DB)]
    for second in range(102, 106):
        levels.add(second, [1.0], [1.0])
    assert [point[0] for point in levels.history(105.0)] == [103, 104, 105]
    assert levels.history(105.0, seconds=1) == [(105, 0.0, 0.0)]


def test_a_stale_reading_is_no_reading() -> None:
    levels = Levels()
    levels.add(10.0, [0.5], [0.5])
    assert levels.last(10.5) is not None
    assert levels.last(12.0) is None


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4))
def test_any_amplitude_reads_as_a_bounded_level(values: list[float]) -> None:
    levels = Levels()
    levels.add(1.0, values, values)
    last = levels.last(1.0)
    assert last is not None
    assert all(FLOOR_DB <= v <= CEILING_DB for v in (*last.peak, *last.rms))
