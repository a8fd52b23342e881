"""Estimate the fundamental frequency of a sound with YIN.

YIN (de Cheveigné and Kawahara, 2002) works on the waveform: it looks for the
shortest lag at which the sound repeats. Taking the *first* lag that repeats
well enough, not the best one, is what keeps it from octave errors: a sawtooth
or a plucked string repeats at its period first, and a tone whose fundamental
is missing (harmonics 2, 3, 4... only) still repeats at the fundamental's
period, so it is named by the pitch a listener hears.

A handful of frames spread over the sound are measured at once with FFT
correlation; frames more than 30 dB below the loudest are skipped, and the
median of the pitched frames is the answer.

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

#: The lowest fundamental looked for: A0.
LOW_HZ = 27.5
#: The highest fundamental looked for: far above C8 (4186 Hz), so that a high
#: sine is not taken for its own sub-octave; capped at a quarter of the rate.
HIGH_HZ = 12000.0

# YIN's absolute threshold: the first lag whose normalised difference dips
# below it is the period.
_THRESHOLD = 0.15
# A frame whose best dip stays above this is unpitched (noise, a chord).
_VOICED = 0.25
# At least this share of the loud frames must be pitched for a pitch.
_VOICED_SHARE = 0.5
_LOUD_DB = 30.0


class Pitch(NamedTuple):
    """The result of one estimate."""

    hz: float | None
    """The fundamental, or None when the sound is not pitched."""
    confidence: float
    """0 to 1: the mean of 1 - aperiodicity over the loud frames, 0 for unpitched ones."""
    spread_cents: float
    """How far apart the pitched frames are: 10th to 90th percentile, in cents."""


def _frames(mono: NDArray[np.float64], length: int, most: int) -> NDArray[np.float64]:
    count = min(most, max(1, (len(mono) - length) // (length // 2) + 1))
    starts = np.linspace(0, len(mono) - length, count).astype(int)
    return np.stack([mono[start : start + length] for start in starts])


def estimate(mono: NDArray[np.float64], sample_rate: int, frames: int = 24) -> Pitch | None:
    """Return the fundamental of ``mono`` from at most ``frames`` frames.

    None when it is silent or too short.
    """
    lag_min = max(4, int(sample_rate / HIGH_HZ))
    lag_max = min(int(np.ceil(sample_rate / LOW_HZ)), len(mono) // 2 - 1)
    if lag_max <= lag_min + 2:
        return None
    window = lag_max  # integration window: two periods of the lowest pitch
    chosen = _frames(mono, window + lag_max + 1, frames)
    energy = np.sum(chosen[:, :window] ** 2, axis=1)
    if not np.any(energy > 0):
        return None
    chosen = chosen[energy >= energy.max() * 10 ** (-_LOUD_DB / 10)]

    size = 1 << int(np.ceil(np.log2(chosen.shape[1] + window)))
    spectrum = np.fft.rfft(chosen, size, axis=1)
    head = np.fft.rfft(chosen[:, :window], size, axis=1)
    correlation = np.fft.irfft(spectrum * np.conj(head), size, axis=1)[:, : lag_max + 1]
    squares = np.concatenate([np.zeros((len(chosen), 1)), np.cumsum(chosen**2, axis=1)], axis=1)
    lags = np.arange(lag_max + 1)
    shifted_energy = squares[:, lags + window] - squares[:, lags]
    difference = np.maximum(shifted_energy[:, :1] + shifted_energy - 2 * correlation, 0.0)
    difference[:, 0] = 0.0
    running = np.cumsum(difference[:, 1:], axis=1) / lags[1:]
    normalised = np.ones_like(difference)
    normalised[:, 1:] = difference[:, 1:] / np.maximum(running, 1e-300)

    estimates: list[float] = []
    goodness = 0.0
    for row, raw in zip(normalised, difference, strict=True):
        lag = _first_dip(row, lag_min, lag_max)
        aperiodicity = float(row[lag])
        if aperiodicity < _VOICED:
            estimates.append(sample_rate / _refine(raw, lag))
            goodness += 1.0 - aperiodicity
    confidence = goodness / len(chosen)
    if len(estimates) < _VOICED_SHARE * len(chosen):
        return Pitch(None, confidence, 0.0)
    low, high = np.percentile(estimates, [10, 90])
    return Pitch(float(np.median(estimates)), confidence, float(1200 * np.log2(high / low)))


def _first_dip(row: NDArray[np.float64], lag_min: int, lag_max: int) -> int:
    """Return the first local minimum below the threshold, else the global minimum."""
    below = np.flatnonzero(row[lag_min:lag_max] < _THRESHOLD)
    if not below.size:
        return lag_min + int(np.argmin(row[lag_min:lag_max]))
    lag = lag_min + int(below[0])
    while lag + 1 < lag_max and row[lag + 1] < row[lag]:
        lag += 1
    return lag


def _refine(raw: NDArray[np.float64], lag: int) -> float:
    """Return the lag of the parabola's vertex through the raw difference around ``lag``."""
    if lag < 1 or lag + 1 >= len(raw):
        return float(lag)
    left, mid, right = raw[lag - 1], raw[lag], raw[lag + 1]
    denominator = left - 2 * mid + right
    if denominator <= 0:
        return float(lag)
    return lag + 0.5 * (left - right) / denominator
