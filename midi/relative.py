"""Decode relative (endless) encoders: one CC value is a signed number of steps.

The three encodings are the ones controllers ship with (names as in Ableton Live's
MIDI map): ``twos_complement`` (1..63 up, 127..64 down: -1..-64),
``signed_bit`` (bit 6 is the sign: 1..63 up, 65..127 down: -1..-63) and
``binary_offset`` (64 is no move: 65.. up, 63.. down).
"""

from __future__ import annotations


def relative_delta(encoding: str, value: int) -> int:
    """Return the signed step count a relative encoder sent as CC ``value`` (0..127)."""
    if encoding == "twos_complement":
        return value if value < 64 else value - 128
    if encoding == "signed_bit":
        return value if value < 64 else -(value - 64)
    if encoding == "binary_offset":
        return value - 64
    raise ValueError(f"unknown relative encoding {encoding!r}")


def step(position: float, encoding: str, value: int, size: float) -> float:
    """Return ``position`` (0..1) moved by the encoder's steps of ``size``, clamped."""
    moved = position + relative_delta(encoding, value) * size
    return 0.0 if moved < 0.0 else 1.0 if moved > 1.0 else moved
