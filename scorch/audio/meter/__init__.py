"""Measure sound as a mixing engineer does: loudness to the standard, balance and space.

:mod:`~scorch.audio.meter.figures` holds the models (no numpy on import); the modules
that compute (:mod:`~scorch.audio.meter.loudness`, :mod:`~scorch.audio.meter.bands`)
import numpy at the top and are imported inside the calls that need them.
"""
