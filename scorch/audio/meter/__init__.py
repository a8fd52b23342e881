"""Measure sound as a mixing engineer does: loudness to the standard, balance and space.

:mod:`~scorch.audio.meter.figures` holds the models (no numpy on import); the modules
that compute (:mod:`~scorch.audio.meter.loudness`, :mod:`~scorch.audio.meter.bands`)
import numpy at the top and are imported inside the calls that need them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.audio.meter.figures import Balance, LoudnessFigures
    from scorch.audio.meter.iec_bands import OCTAVE_NAMES
    from scorch.audio.meter.masking import Masking
    from scorch.audio.meter.plot import sweep_plot

__all__ = [
    "OCTAVE_NAMES",
    "Balance",
    "LoudnessFigures",
    "Masking",
    "sweep_plot",
]
__getattr__ = lazy_face(__name__, __file__)
