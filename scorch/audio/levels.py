"""Measure levels: peak, RMS, clipping and stereo correlation (loudness: ``meter.loudness``).

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from scorch.audio.report import CLIP_LEVEL

Signal = NDArray[np.float64]


def dbfs(amplitude: float) -> float | None:
    """Return ``amplitude`` in dB relative to full scale, None for zero."""
    return 20 * math.log10(amplitude) if amplitude > 0 else None


def sanitise(samples: Signal) -> tuple[Signal, int]:
    """Return ``samples`` with NaN and infinities zeroed, and how many there were."""
    if np.isfinite(np.sum(samples)):  # one cheap pass for the usual case
        return samples, 0
    bad = int(np.count_nonzero(~np.isfinite(samples)))
    return np.nan_to_num(samples, nan=0.0, posinf=0.0, neginf=0.0), bad


def peak_and_clipped(samples: Signal) -> tuple[float, int]:
    """Return the largest magnitude and the count of samples at or beyond :data:`CLIP_LEVEL`."""
    if not samples.size:
        return 0.0, 0
    magnitude = np.abs(samples)
    return float(magnitude.max()), int(np.count_nonzero(magnitude >= CLIP_LEVEL))


def rms(samples: Signal) -> float:
    """Return the root mean square over every sample of every channel."""
    return float(np.sqrt(np.mean(np.square(samples)))) if samples.size else 0.0


def stereo_correlation(samples: Signal) -> float | None:
    """Return the Pearson correlation of channels 0 and 1; None if either is flat."""
    if samples.shape[1] < 2 or samples.shape[0] < 2:
        return None
    left = samples[:, 0] - samples[:, 0].mean()
    right = samples[:, 1] - samples[:, 1].mean()
    norm = math.sqrt(float(np.dot(left, left)) * float(np.dot(right, right)))
    if norm <= 1e-20:
        return None
    return max(-1.0, min(1.0, float(np.dot(left, right)) / norm))
