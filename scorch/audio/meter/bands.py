"""Balance and space: energy per octave and third-octave band, tilt, crest, stereo per band.

Bands are IEC 61260's base-ten set (:mod:`~scorch.audio.meter.iec_bands`); a band's
edges are its centre times 10^(-1/20) and 10^(1/20) (a third) or 10^(-3/20) and
10^(3/20) (an octave). A band's energy is the power of the
Welch-averaged spectrum (Hann, 50 % overlap) summed over its bins: an ideal band-pass,
so white noise rises exactly 3.01 dB per octave and pink noise stays flat.

Levels are dB of mean square relative to full scale, as RMS is: the bands of a sound
add up (in power) to its RMS level, and a full-scale sine reads -3 dB in its band.

Stereo, from the cross-spectrum of the first two channels, per band and overall:
correlation (1 mono, 0 unrelated, -1 opposite phase), width (the side's share of the
power, S / (M + S) with M = (L + R) / 2 and S = (L - R) / 2: 0 mono, 0.5 unrelated
channels, 1 opposite phase) and the mono sum's level against the channels' mean (0 dB
for mono, -3 dB for unrelated channels, very low where the channels cancel).

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scorch.audio.meter.iec_bands import OCTAVE_NAMES, OCTAVES, THIRD_NAMES, THIRDS

Signal = NDArray[np.float64]

#: A band this far (dB) under the loudest band of its sound is left out of the tilt,
#: the stereo figures and comparisons: there is next to nothing in it.
QUIET_BAND_DB = 60.0
#: The floor of a level in dB (digital silence would be minus infinity).
FLOOR_DB = -200.0
_SEGMENT_SECONDS = 0.68  # 1.5 Hz bins at 48 kHz: a few bins even in the 25 Hz third
_MAX_SEGMENTS = 96  # a long sound is sampled with this many segments spread over it


@dataclass(frozen=True)
class Spectra:
    """Welch-averaged power spectra of one sound: per channel, and L x R."""

    hz: Signal
    power: Signal
    """Mean square per bin, shaped (channels, bins): summing the bins gives each
    channel's mean square."""
    cross: Signal | None
    """Re(L conj R) per bin on the same scale; None for mono."""


@dataclass(frozen=True)
class Bands:
    """What a sound holds in each band, and its stereo figures."""

    names: tuple[str, ...]
    hz: tuple[float, ...]
    level: Signal
    """dB per band (mean square of the band over all channels, against full scale)."""
    correlation: Signal | None
    """Per band, NaN where the band is quiet; None for mono."""
    width: Signal | None
    mono_db: Signal | None


def spectra(samples: Signal, sample_rate: int) -> Spectra:
    """The power spectrum of each channel of ``samples`` (frames, channels), and L x R."""
    frames, channels = samples.shape
    size = 1 << int(np.log2(_SEGMENT_SECONDS * sample_rate) + 0.5)
    while size > 256 and frames < size:
        size //= 2
    data = np.ascontiguousarray(samples.T)
    if frames < size:  # shorter than one segment: zero-padded
        data = np.pad(data, ((0, 0), (0, size - frames)))
        frames = size
    count = min(_MAX_SEGMENTS, 1 + (frames - size) // (size // 2))
    starts = np.linspace(0, frames - size, count).astype(int)
    window = np.hanning(size)
    segments = data[:, starts[:, np.newaxis] + np.arange(size)] * window
    spectrum = np.fft.rfft(segments, axis=2)
    # Scaled so that the bins of one segment sum to its windowed mean square, corrected
    # for the window's own mean square: a stationary sound's bins sum to its mean square.
    scale = 1.0 / (size * float(np.sum(window**2)))
    doubled = np.ones(spectrum.shape[2])
    doubled[1 : size // 2] = 2.0  # the negative frequencies' half, except DC and Nyquist
    power = np.mean(np.abs(spectrum) ** 2, axis=1) * scale * doubled
    cross = None
    if channels >= 2:
        cross = np.mean(np.real(spectrum[0] * np.conj(spectrum[1])), axis=0) * scale * doubled
    return Spectra(np.fft.rfftfreq(size, 1 / sample_rate).astype(np.float64), power, cross)


def measure(found: Spectra, sample_rate: int, octaves: bool = True) -> Bands:
    """The octave (or third-octave) bands of ``found``, those below Nyquist."""
    centres, names, half = ((OCTAVES, OCTAVE_NAMES, 3 / 20) if octaves
                            else (THIRDS, THIRD_NAMES, 1 / 20))
    kept = [(c, n) for c, n in zip(centres, names, strict=True)
            if c * 10**half <= sample_rate / 2 * 1.0001]
    edges = [(c * 10**-half, c * 10**half) for c, _ in kept]
    mean = found.power.mean(axis=0)
    total = _sums(found.hz, mean, edges)
    level = _db(total)
    correlation = width = mono_db = None
    if found.cross is not None:
        left, right = _sums(found.hz, found.power[0], edges), _sums(found.hz, found.power[1],
                                                                   edges)
        cross = _sums(found.hz, found.cross, edges)
        loud = level >= level.max() - QUIET_BAND_DB
        correlation, width, mono_db = (np.where(loud, figure, np.nan)
                                       for figure in stereo(left, right, cross))
    return Bands(tuple(n for _, n in kept), tuple(c for c, _ in kept), level, correlation,
                 width, mono_db)


def stereo(left: Signal, right: Signal, cross: Signal) -> tuple[Signal, Signal, Signal]:
    """Correlation, width and the mono sum's level (dB) from the channels' powers and their
    cross power (arrays of the same shape: bands, or single values)."""
    both = left + right
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.clip(cross / np.sqrt(left * right), -1.0, 1.0)
        width = np.clip((both - 2 * cross) / (2 * both), 0.0, 1.0)
        mono = np.maximum((both + 2 * cross) / 4, 0.0)
        mono_db = np.maximum(10 * np.log10(mono / (both / 2)), FLOOR_DB)
    return correlation, width, mono_db


def _sums(hz: Signal, power: Signal, edges: list[tuple[float, float]]) -> Signal:
    """The power between each pair of edges; a bin on an edge goes to the band above it."""
    cumulative = np.concatenate([[0.0], np.cumsum(power)])
    low = np.searchsorted(hz, [e[0] for e in edges])
    high = np.searchsorted(hz, [e[1] for e in edges])
    return np.asarray(cumulative[high] - cumulative[low], dtype=np.float64)


def _db(power: Signal) -> Signal:
    with np.errstate(divide="ignore"):
        return np.maximum(10 * np.log10(np.maximum(power, 0.0)), FLOOR_DB)


def tilt(bands: Bands) -> float | None:
    """The slope of the band levels against octaves (dB per octave, least squares), over
    the bands within :data:`QUIET_BAND_DB` of the loudest; None with fewer than three."""
    loud = bands.level >= bands.level.max() - QUIET_BAND_DB
    if np.count_nonzero(loud) < 3:
        return None
    octave = np.log2(np.asarray(bands.hz)[loud])
    slope = np.polyfit(octave, bands.level[loud], 1)[0]
    return float(slope)


def crest_db(samples: Signal) -> float | None:
    """Peak over RMS of all channels in dB (a sine: 3.01 dB); None for silence."""
    rms = float(np.sqrt(np.mean(np.square(samples)))) if samples.size else 0.0
    if rms <= 0:
        return None
    return float(20 * np.log10(float(np.max(np.abs(samples))) / rms))


def overall_stereo(samples: Signal) -> tuple[float, float, float] | None:
    """Correlation, width and the mono sum's level (dB) over the whole sound; None for mono
    or a silent channel."""
    if samples.shape[1] < 2:
        return None
    left, right = samples[:, 0], samples[:, 1]
    powers = float(np.dot(left, left)), float(np.dot(right, right)), float(np.dot(left, right))
    if min(powers[0], powers[1]) <= 1e-20:
        return None
    figures = stereo(*(np.asarray(p) for p in powers))
    return float(figures[0]), float(figures[1]), float(figures[2])
