"""Assemble 14-bit control changes and NRPN/RPN parameters from 7-bit CC messages.

Both are state machines per (port, channel). A 14-bit control n sends its MSB as
CC n and its LSB as CC n+32; as the MIDI spec asks, a new MSB resets the LSB to 0,
so a controller that sends MSB alone still works. NRPN selects a parameter with
CC 99 (MSB) and 98 (LSB) (RPN: 101, 100), then sends its value with data entry
CC 6 (MSB) and 38 (LSB), or steps it with CC 96 (+1) and 97 (-1). RPN 127/127 is
the null parameter that deselects.
"""

from __future__ import annotations

from typing import NamedTuple

NRPN_MSB, NRPN_LSB, RPN_MSB, RPN_LSB = 99, 98, 101, 100
DATA_MSB, DATA_LSB, DATA_INC, DATA_DEC = 6, 38, 96, 97
NRPN_CCS = frozenset({NRPN_MSB, NRPN_LSB, RPN_MSB, RPN_LSB, DATA_MSB, DATA_LSB, DATA_INC, DATA_DEC})


class Cc14:
    """The MSB and LSB of the 32 14-bit controllers of one channel."""

    __slots__ = ("_lsb", "_msb")

    def __init__(self) -> None:
        self._msb = [0] * 32
        self._lsb = [0] * 32

    def feed(self, cc: int, value: int) -> tuple[int, int] | None:
        """Take CC ``cc``; return (controller 0..31, value 0..16383) or None."""
        if cc < 32:
            self._msb[cc] = value
            self._lsb[cc] = 0
            return cc, value << 7
        if cc < 64:
            n = cc - 32
            self._lsb[n] = value
            return n, (self._msb[n] << 7) | value
        return None


class NrpnValue(NamedTuple):
    """A data entry for the selected NRPN or RPN."""

    number: int
    """Parameter number 0..16383."""
    rpn: bool
    """True for a registered parameter (RPN), False for NRPN."""
    value: int
    """14-bit value 0..16383 (MSB << 7 | LSB)."""
    fine: bool
    """True when this entry came from the LSB (CC 38): a 7-bit route ignores it."""


class Nrpn:
    """The NRPN/RPN selection and data entry of one channel."""

    __slots__ = ("_data", "_lsb", "_msb", "_rpn")

    def __init__(self) -> None:
        self._msb: int | None = None
        self._lsb: int | None = None
        self._rpn = False
        self._data = 0

    def feed(self, cc: int, value: int) -> NrpnValue | None:
        """Take CC ``cc``; return the data entry it completes, if any."""
        if cc in (NRPN_MSB, RPN_MSB):
            self._select(cc == RPN_MSB, msb=value)
            return None
        if cc in (NRPN_LSB, RPN_LSB):
            self._select(cc == RPN_LSB, lsb=value)
            return None
        if self._msb is None or self._lsb is None:
            return None  # data entry with nothing selected: ignore
        if self._rpn and self._msb == 127 and self._lsb == 127:
            return None  # the null RPN
        fine = False
        if cc == DATA_MSB:
            self._data = value << 7
        elif cc == DATA_LSB:
            self._data = (self._data & 0x3F80) | value
            fine = True
        elif cc == DATA_INC:
            self._data = min(16383, self._data + 128)
        elif cc == DATA_DEC:
            self._data = max(0, self._data - 128)
        else:
            return None
        return NrpnValue((self._msb << 7) | self._lsb, self._rpn, self._data, fine)

    def _select(self, rpn: bool, msb: int | None = None, lsb: int | None = None) -> None:
        if rpn != self._rpn:
            self._msb = self._lsb = None
            self._rpn = rpn
        if msb is not None:
            self._msb = msb
        if lsb is not None:
            self._lsb = lsb
        self._data = 0
