"""Relative encoders: the three common encodings."""

from __future__ import annotations

import pytest

from midi.relative import relative_delta, step

DELTAS = [
    ("twos_complement", 1, 1),
    ("twos_complement", 63, 63),
    ("twos_complement", 127, -1),
    ("twos_complement", 64, -64),
    ("twos_complement", 0, 0),
    ("signed_bit", 1, 1),
    ("signed_bit", 63, 63),
    ("signed_bit", 65, -1),
    ("signed_bit", 127, -63),
    ("signed_bit", 64, 0),
    ("binary_offset", 64, 0),
    ("binary_offset", 65, 1),
    ("binary_offset", 63, -1),
    ("binary_offset", 127, 63),
    ("binary_offset", 0, -64),
]


@pytest.mark.parametrize(("encoding", "value", "delta"), DELTAS)
def test_relative_value_decodes_to_signed_steps(encoding, value, delta):
    assert relative_delta(encoding, value) == delta


@pytest.mark.parametrize(
    ("position", "encoding", "value", "size", "expected"),
    [
        (0.5, "twos_complement", 1, 0.01, 0.51),
        (0.5, "twos_complement", 127, 0.01, 0.49),
        (0.99, "binary_offset", 70, 0.01, 1.0),
        (0.02, "signed_bit", 70, 0.01, 0.0),
    ],
)
def test_relative_steps_move_and_clamp_the_position(position, encoding, value, size, expected):
    assert step(position, encoding, value, size) == pytest.approx(expected)


def test_unknown_encoding_is_an_error():
    with pytest.raises(ValueError, match="unknown relative encoding"):
        relative_delta("gray", 1)
