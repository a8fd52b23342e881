"""SuperCollider's warps: the names ControlSpec accepts, and the curves they draw.

:class:`Warp` computes what ``Warp.map``/``unmap`` compute in sclang (checked
against sclang itself in the tests), without clipping; scenes morph along it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Every name a ControlSpec's warp may be given, to its short name.
WARP_ALIASES = {
    "lin": "lin", "linear": "lin",
    "exp": "exp", "exponential": "exp",
    "sin": "sin", "sine": "sin",
    "cos": "cos", "cosine": "cos",
    "amp": "amp",
    "db": "db",
}


def _dbamp(db: float) -> float:
    return 0.0 if db == -math.inf else 10.0 ** (db / 20.0)


def _ampdb(amp: float) -> float:
    return -math.inf if amp <= 0 else 20.0 * math.log10(amp)


@dataclass(frozen=True)
class Warp:
    """A ControlSpec's warp over its range, as SuperCollider's ``Warp`` classes compute it.

    ``map`` takes a position (0 at ``low``, 1 at ``high``) to a value, ``unmap`` a
    value to its position. Unlike ``ControlSpec.map`` nothing is clipped, so a value
    a little outside the range has a position a little outside 0..1; where a warp
    has no position for a value (exp across 0, sin beyond its range) the result is NaN.
    """

    warp: str
    """A name of :data:`WARP_ALIASES` or a curve number (as text or a number)."""
    low: float
    high: float

    def _curve(self) -> float | None:
        try:
            return float(self.warp)
        except ValueError:
            return None

    def map(self, x: float) -> float:
        """The value at position ``x``."""
        lo, hi, span = self.low, self.high, self.high - self.low
        curve = self._curve()
        if curve is not None:
            if abs(curve) < 0.001:
                return lo + span * x
            grow = math.exp(curve)
            a = span / (1.0 - grow)
            return lo + a - a * grow ** x
        name = WARP_ALIASES[self.warp.lower()]
        if name == "lin":
            return lo + span * x
        if name == "exp":
            return lo * (hi / lo) ** x if lo and hi / lo > 0 else math.nan
        if name == "sin":
            return lo + span * math.sin(math.pi / 2 * x)
        if name == "cos":
            return lo + span * (0.5 - math.cos(math.pi * x) * 0.5)
        if name == "amp":
            return lo + span * (x * x if span >= 0 else 1.0 - (1.0 - x) ** 2)
        alo, aspan = _dbamp(lo), _dbamp(hi) - _dbamp(lo)
        return _ampdb(alo + aspan * (x * x if aspan >= 0 else 1.0 - (1.0 - x) ** 2))

    def unmap(self, value: float) -> float:
        """The position of ``value`` (NaN where the warp has none)."""
        lo, hi, span = self.low, self.high, self.high - self.low
        curve = self._curve()
        try:
            if curve is not None:
                if abs(curve) < 0.001:
                    return (value - lo) / span
                a = span / (1.0 - math.exp(curve))
                return math.log((lo + a - value) / a) / curve
            name = WARP_ALIASES[self.warp.lower()]
            if name == "lin":
                return (value - lo) / span
            if name == "exp":
                return math.log(value / lo) / math.log(hi / lo)
            if name == "sin":
                return math.asin((value - lo) / span) / (math.pi / 2)
            if name == "cos":
                return math.acos(1.0 - 2.0 * (value - lo) / span) / math.pi
            if name == "amp":
                frac = (value - lo) / span
                return math.sqrt(frac) if span >= 0 else 1.0 - math.sqrt(1.0 - frac)
            alo, aspan = _dbamp(lo), _dbamp(hi) - _dbamp(lo)
            frac = (_dbamp(value) - alo) / aspan
            return math.sqrt(frac) if aspan >= 0 else 1.0 - math.sqrt(1.0 - frac)
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.nan

    def between(self, a: float, b: float, position: float, step: float = 0.0) -> float:
        """The value ``position`` (0..1) of the way from ``a`` to ``b`` along this warp.

        Interpolates the two values' positions and maps back, so halfway between 110
        and 440 on an exponential warp is 220. Where the warp has no position for a
        value, the way is a straight line. ``step`` rounds as ``ControlSpec`` does.
        """
        if position <= 0.0:
            return a
        if position >= 1.0:
            return b
        ua, ub = self.unmap(a), self.unmap(b)
        value = self.map(ua + (ub - ua) * position) if math.isfinite(ua + ub) else math.nan
        if not math.isfinite(value):
            value = a + (b - a) * position
        return round(value / step) * step if step > 0 else value
