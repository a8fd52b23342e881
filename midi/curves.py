"""Map a control's position 0..1 onto a parameter range, as SuperCollider's warps do.

Names follow ``Warp.warps`` in SuperCollider's ``ControlSpec``: ``lin`` (``linear``),
``exp`` (``exponential``), ``sin`` (``sine``), ``cos`` (``cosine``), ``amp``
(fader: squared), ``db`` (fader in decibels: the range is in dB and so is the
result), and a number for ``CurveWarp`` (0 is linear, positive bends towards the
end, negative towards the start). Every curve has an exact inverse (``unmap``),
which takeover needs to place a parameter's value on the control's travel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from scorch.primitives.synthdefs import WARP_ALIASES


def _dbamp(db: float) -> float:
    return 0.0 if db == -math.inf else 10.0 ** (db / 20.0)


def _ampdb(amp: float) -> float:
    return -math.inf if amp <= 0 else 20.0 * math.log10(amp)


def _clip(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def _float_curve(value: str | float) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except ValueError:
        return None


def check_curve(curve: str | float, bounds: tuple[float, float]) -> None:
    """Raise ValueError with a readable reason if ``curve`` cannot map ``bounds``."""
    low, high = bounds
    if math.isnan(low) or low == math.inf or not math.isfinite(high):
        raise ValueError(f"range must be finite numbers, got {list(bounds)}")
    number = _float_curve(curve)
    if number is not None:
        if not math.isfinite(number):
            raise ValueError(f"a numeric curve must be finite, got {curve}")
        return
    name = WARP_ALIASES.get(str(curve).lower())
    if name is None:
        raise ValueError(
            f"unknown curve {curve!r}: use one of {sorted(set(WARP_ALIASES))} or a number"
        )
    if name == "exp" and (low == 0 or high == 0 or (low > 0) != (high > 0)):
        raise ValueError(
            f"curve 'exp' needs a range that does not cross or touch 0, got {list(bounds)}"
        )
    if name != "db" and not math.isfinite(low):
        raise ValueError(f"range must be finite numbers, got {list(bounds)}")


@dataclass(frozen=True, slots=True)
class Curve:
    """A curve bound to a range: ``map`` 0..1 -> value, ``unmap`` value -> 0..1."""

    map: Callable[[float], float]
    unmap: Callable[[float], float]


def make_curve(curve: str | float, low: float, high: float) -> Curve:
    """Return the :class:`Curve` for a warp name or number over ``[low, high]``."""
    check_curve(curve, (low, high))
    span = high - low
    number = _float_curve(curve)
    if number is not None and abs(number) >= 0.001:
        grow = math.exp(number)
        a = span / (1.0 - grow)
        b = low + a
        return Curve(
            lambda x: b - a * grow ** _clip(x),
            lambda v: _clip(math.log((b - v) / a) / number) if (b - v) / a > 0 else 0.0,
        )
    name = "lin" if number is not None else WARP_ALIASES[str(curve).lower()]

    def unlin(v: float) -> float:
        return _clip((v - low) / span) if span else 0.0

    if name == "lin":
        return Curve(lambda x: low + span * _clip(x), unlin)
    if name == "exp":
        ratio = high / low
        return Curve(
            lambda x: low * ratio ** _clip(x),
            lambda v: _clip(math.log(v / low) / math.log(ratio)) if v / low > 0 else 0.0,
        )
    if name == "sin":
        return Curve(
            lambda x: low + span * math.sin(math.pi / 2 * _clip(x)),
            lambda v: math.asin(unlin(v)) / (math.pi / 2),
        )
    if name == "cos":
        return Curve(
            lambda x: low + span * (0.5 - math.cos(math.pi * _clip(x)) * 0.5),
            lambda v: math.acos(1.0 - 2.0 * unlin(v)) / math.pi,
        )
    if name == "amp":
        if span >= 0:
            return Curve(
                lambda x: _clip(x) ** 2 * span + low, lambda v: math.sqrt(unlin(v))
            )
        return Curve(
            lambda x: (1.0 - (1.0 - _clip(x)) ** 2) * span + low,
            lambda v: 1.0 - math.sqrt(1.0 - unlin(v)),
        )
    # db: a fader whose travel is squared in amplitude, expressed in dB both ways.
    alow, ahigh = _dbamp(low), _dbamp(high)
    aspan = ahigh - alow

    def unamp(v: float) -> float:
        return _clip((_dbamp(v) - alow) / aspan) if aspan else 0.0

    if aspan >= 0:
        return Curve(
            lambda x: _ampdb(_clip(x) ** 2 * aspan + alow), lambda v: math.sqrt(unamp(v))
        )
    return Curve(
        lambda x: _ampdb((1.0 - (1.0 - _clip(x)) ** 2) * aspan + alow),
        lambda v: 1.0 - math.sqrt(1.0 - unamp(v)),
    )


def midicps(note: float) -> float:
    """Return the frequency in Hz of a (fractional) MIDI note number."""
    return 440.0 * 2.0 ** ((note - 69.0) / 12.0)
