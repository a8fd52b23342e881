"""Average a sound's spectrum; find its centroid, flatness and strongest peaks.

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

#: Lowest frequency the spectrum measures: below it is rumble and DC.
LOW_HZ = 20.0

# At most about 0.34 s per segment: 2.9 Hz bins at 48 kHz, fine enough to split
# a low bass; shorter for short sounds so at least ~4 segments are averaged.
_SEGMENT_SECONDS = 0.34
_MIN_SEGMENTS = 4
# A long sound is sampled with this many segments spread over it: enough for
# an average, and minutes of audio cost no more than a few seconds.
_MAX_SEGMENTS = 48
_MIN_SIZE = 2048
_PADDING = 2
# A peak must stand this far above the spectrum around it. An average of ~16
# segments of white noise wobbles by about 1.5 dB, so noise never gets there.
_PROMINENCE_DB = 15.0
# ...and be within this much of the strongest peak.
_RANGE_DB = 60.0


class Spectrum(NamedTuple):
    """An averaged amplitude spectrum."""

    hz: NDArray[np.float64]
    """Bin centre frequencies."""
    amplitude: NDArray[np.float64]
    """Amplitude of a sinusoid in each bin, full scale = 1 (power-averaged)."""


class Peak(NamedTuple):
    """One spectral peak, interpolated between bins."""

    hz: float
    db: float


def _segment_size(frames: int, sample_rate: int) -> int:
    size = 1 << int(np.log2(_SEGMENT_SECONDS * sample_rate) + 0.5)
    while size > _MIN_SIZE and frames < (_MIN_SEGMENTS + 1) * size // 2:
        size //= 2
    return size


def average_spectrum(mono: NDArray[np.float64], sample_rate: int) -> Spectrum:
    """Return the Welch-averaged spectrum of ``mono`` (Hann, 50 % overlap)."""
    size = _segment_size(len(mono), sample_rate)
    if len(mono) < size:
        # Short sound: one zero-padded segment, so bins stay as fine as for long ones.
        segments = np.zeros((1, size))
        segments[0, : len(mono)] = mono
        window = np.zeros(size)
        window[: len(mono)] = np.hanning(len(mono))
    else:
        count = min(_MAX_SEGMENTS, 1 + (len(mono) - size) // (size // 2))
        starts = np.linspace(0, len(mono) - size, count).astype(int)
        segments = mono[starts[:, np.newaxis] + np.arange(size)]
        window = np.hanning(size)
    # Zero-padding to twice the length halves the bins, which makes the
    # parabolic peak interpolation about ten times more exact (0.01 Hz, not 0.05).
    padded = _PADDING * size
    power = np.mean(np.abs(np.fft.rfft(segments * window, padded, axis=1)) ** 2, axis=0)
    # A sinusoid of amplitude A peaks at A * sum(window) / 2 in a windowed FFT.
    amplitude = np.sqrt(power) * 2 / max(float(window.sum()), 1e-12)
    hz = np.fft.rfftfreq(padded, 1 / sample_rate).astype(np.float64)
    return Spectrum(hz, amplitude.astype(np.float64))


def _band(spectrum: Spectrum) -> NDArray[np.bool_]:
    return spectrum.hz >= LOW_HZ


def centroid(spectrum: Spectrum) -> float | None:
    """Return the magnitude-weighted mean frequency above :data:`LOW_HZ`."""
    band = _band(spectrum)
    weights = spectrum.amplitude[band]
    total = float(weights.sum())
    return float(np.dot(spectrum.hz[band], weights) / total) if total > 0 else None


def flatness(spectrum: Spectrum) -> float | None:
    """Return the geometric over the arithmetic mean of the power spectrum (0..1)."""
    power = spectrum.amplitude[_band(spectrum)] ** 2
    mean = float(power.mean()) if power.size else 0.0
    if mean <= 0:
        return None
    # The floor keeps one empty bin (a band-limited synth) from zeroing the mean.
    floor = mean * 1e-12
    return float(np.exp(np.mean(np.log(power + floor))) / mean)


def peaks(spectrum: Spectrum, limit: int = 8) -> list[Peak]:
    """Return up to ``limit`` strongest prominent peaks, lowest frequency first."""
    from scipy.signal import find_peaks

    amplitude = spectrum.amplitude
    if not np.any(amplitude > 0):
        return []
    db = 20 * np.log10(np.maximum(amplitude, float(amplitude.max()) * 1e-6))
    # Peaks are picked on the segment's own bins (every _PADDING-th): between
    # them, the padded spectrum resolves every side lobe of a strong tone as a
    # peak with deep nulls around it. A Hann main lobe is 4 bins wide: a peak
    # must top a neighbourhood of 4 lobes by the prominence.
    coarse = db[::_PADDING]
    found, _ = find_peaks(coarse, prominence=_PROMINENCE_DB, wlen=17)
    found = found[spectrum.hz[found * _PADDING] >= LOW_HZ]
    if not found.size:
        return []
    found = found[coarse[found] >= coarse[found].max() - _RANGE_DB]
    strongest = found[np.argsort(coarse[found])[::-1][:limit]]
    step = float(spectrum.hz[1] - spectrum.hz[0])
    result = []
    for coarse_index in sorted(strongest):
        # The top in the padded spectrum is at most one padded bin either side.
        centre = coarse_index * _PADDING
        near = range(max(1, centre - 1), min(len(db) - 1, centre + 2))
        index = max(near, key=lambda i: db[i])
        # Parabola through the peak and its neighbours in dB (exact for a Gaussian).
        left, mid, right = db[index - 1], db[index], db[index + 1]
        denominator = left - 2 * mid + right
        offset = 0.5 * (left - right) / denominator if denominator else 0.0
        level = mid - 0.25 * (left - right) * offset
        result.append(Peak(float(spectrum.hz[index] + offset * step), float(level)))
    return result
