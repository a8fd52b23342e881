"""Find where new sounds start: spectral flux, picked against an adaptive threshold.

The flux is the mean rise, frame to frame, of log-compressed energy in bands a
sixth of an octave wide. Bands rather than FFT bins keep a bass drum (a few
low bins) from drowning among a thousand empty ones, and average away the
frame-to-frame wobble of noise and aliasing in the highs. The window (~43 ms)
holds two periods of a low bass, so a steady tone gives a steady spectrum and
no flux. Each detection is then placed to the millisecond, where the level of
a 10 ms window stepped by 1 ms starts its steepest rise.

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

# Band magnitudes relative to the loudest are compressed as log(1 + 1000 m), so
# the flux reads the same for a quiet and a loud recording and bands more than
# 60 dB down barely count.
_COMPRESSION = 1000.0
_BANDS_PER_OCTAVE = 6
_LOWEST_BAND_HZ = 30.0
# A peak of the flux must pass this (a drum hit from silence gives ~1, steady
# tones below 0.05, white noise ~0.3 but steadily)...
_ABSOLUTE = 0.15
# ...and be this many times the median flux of the half second around it.
_RELATIVE = 3.0
_PEAK_RADIUS = 0.03  # s: a peak is the largest flux within this distance
_MEDIAN_RADIUS = 0.25  # s
_MIN_GAP = 0.05  # s between two onsets
# The sound already playing at the start is an onset only if it decays like a
# hit: its level falls this much within 300 ms of the first 50 ms window.
_HIT_DECAY_DB = 6.0
_ENVELOPE_STEP = 0.001  # s: where an onset is placed...
_PLACE_WINDOW = 0.01  # s: ...with the level of this long a window,
_RISE_DB = 1.0  # ...where it last stood within this much of the level before
_SMOOTH_WINDOW = 0.05  # s: how levels are compared
_SMOOTH_HOP = 0.01  # s
# Onsets whose sound falls this far before the next are hits (drums, plucks).
_PERCUSSIVE_DECAY_DB = 12.0


class Onset(NamedTuple):
    """One new sound."""

    seconds: float
    decay_db: float
    """How far the bands that rose at the onset fall before the next one (or the end)."""


def detect(mono: NDArray[np.float64], sample_rate: int) -> list[Onset]:
    """Return the onsets of ``mono``, earliest first."""
    size = 1 << int(np.log2(0.043 * sample_rate) + 0.5)
    hop = size // 4
    if len(mono) < size or not np.any(mono):
        return []
    count = 1 + (len(mono) - size) // hop
    strides = (mono.strides[0] * hop, mono.strides[0])
    frames = np.lib.stride_tricks.as_strided(mono, (count, size), strides, writeable=False)
    power = np.abs(np.fft.rfft(frames * np.hanning(size), axis=1)) ** 2
    bands = power @ _band_matrix(size, sample_rate)
    level = np.log1p(_COMPRESSION * np.sqrt(bands / float(bands.max())))
    rises = np.zeros_like(level)
    rises[1:] = np.maximum(np.diff(level, axis=0), 0.0)
    if _starts_with_hit(mono, sample_rate):
        rises[0] = level[0]  # the rise from the silence before the start
    flux = rises.mean(axis=1)

    picked: list[tuple[int, float]] = []
    for index in _peaks(flux, hop / sample_rate):
        start = max(0, (index - 1) * hop)
        time = _steepest_rise(mono, sample_rate, start, index * hop + size, index == 0)
        if not picked or time - picked[-1][1] >= _MIN_GAP:
            picked.append((index, time))
    if not picked:
        return []
    ends = [index for index, _ in picked[1:]] + [count + size // hop]
    return [Onset(time, _decay_db(bands, rises[index], index, end - size // hop))
            for (index, time), end in zip(picked, ends, strict=True)]


def _decay_db(bands: NDArray[np.float64], rise: NDArray[np.float64], first: int,
              last: int) -> float:
    """Return how far the bands that rose most at ``first`` fall by frame ``last``.

    Only those bands count, so a drum over a pad is heard decaying although
    the pad holds the overall level up. ``last`` stops a window short of the
    next onset, so the next hit does not count as the end of this one's decay.
    """
    energy = bands[first:last, rise >= 0.5 * float(rise.max())].sum(axis=1)
    if len(energy) < 3:
        return 0.0
    peak_at = int(np.argmax(energy[:5]))
    floor = max(float(energy[peak_at:].min()), float(energy[peak_at]) * 1e-12, 1e-300)
    return float(10 * np.log10(max(float(energy[peak_at]), 1e-300) / floor))


def _band_matrix(size: int, sample_rate: int) -> NDArray[np.float64]:
    """Return a (bins, bands) matrix summing FFT bins into bands; no empty band."""
    hz = np.fft.rfftfreq(size, 1 / sample_rate)
    octaves = np.log2(np.maximum(hz, 1.0) / _LOWEST_BAND_HZ)
    band = np.floor(octaves * _BANDS_PER_OCTAVE).astype(int)
    used = np.unique(band[band >= 0])
    return (band[:, np.newaxis] == used[np.newaxis, :]).astype(np.float64)


def _peaks(flux: NDArray[np.float64], seconds_per_hop: float) -> list[int]:
    peak_radius = max(1, round(_PEAK_RADIUS / seconds_per_hop))
    median_radius = max(1, round(_MEDIAN_RADIUS / seconds_per_hop))
    picked = []
    for index, value in enumerate(flux):
        if value < _ABSOLUTE:
            continue
        near = flux[max(0, index - peak_radius) : index + peak_radius + 1]
        if value < near.max():
            continue
        around = flux[max(0, index - median_radius) : index + median_radius + 1]
        if value >= _RELATIVE * float(np.median(around)):
            picked.append(index)
    return picked


def _smooth_envelope_db(mono: NDArray[np.float64], sample_rate: int) -> NDArray[np.float64]:
    """Return the level in dB of 50 ms windows every 10 ms: steady for a 20 Hz tone."""
    window = int(_SMOOTH_WINDOW * sample_rate)
    hop = max(1, int(_SMOOTH_HOP * sample_rate))
    if len(mono) < window:
        return np.zeros(0)
    sums = np.concatenate([[0.0], np.cumsum(mono**2)])
    starts = np.arange(0, len(mono) - window + 1, hop)
    power = (sums[starts + window] - sums[starts]) / window
    return 10 * np.log10(np.maximum(power, float(power.max()) * 1e-10 + 1e-30))


def _starts_with_hit(mono: NDArray[np.float64], sample_rate: int) -> bool:
    envelope = _smooth_envelope_db(mono[: int(0.35 * sample_rate)], sample_rate)
    if len(envelope) < 30:
        return False
    return float(envelope[0] - envelope[5:].min()) >= _HIT_DECAY_DB


def _steepest_rise(
    mono: NDArray[np.float64], sample_rate: int, start: int, end: int, from_silence: bool
) -> float:
    """Return the time in ``mono[start:end]`` where the level starts its steepest rise.

    The level is that of the 10 ms ending at each millisecond: a window that
    ends just after an onset already holds it, so the steepest rise comes
    right after the onset. Ten milliseconds span a few periods of a tone, so
    the ripple of an earlier note does not outdo the rise of the next one.
    ``from_silence`` is for the sound playing when the recording began.
    """
    step = max(1, int(_ENVELOPE_STEP * sample_rate))
    window = int(_PLACE_WINDOW * sample_rate)
    ends = np.arange(max(start, 1), min(end, len(mono)) + 1, step)
    if len(ends) < 2:
        return start / sample_rate
    sums = np.concatenate([[0.0], np.cumsum(mono[max(0, start - window) : ends[-1]] ** 2)])
    offset = max(0, start - window)
    power = (sums[ends - offset] - sums[np.maximum(ends - window, offset) - offset]) / window
    level = 10 * np.log10(np.maximum(power, float(power.max()) * 1e-10 + 1e-30))
    if from_silence:
        level = np.concatenate([[float(level.max()) - 100.0], level])
        ends = np.concatenate([[0], ends])
    rise = int(np.argmax(np.diff(level)))
    # A soft attack rises over several milliseconds: go back to where the level
    # last stood at the floor of the 10 ms before the steepest step.
    lookback = max(0, rise - round(_PLACE_WINDOW / _ENVELOPE_STEP))
    floor = float(level[lookback : rise + 1].min())
    while rise > lookback and level[rise] > floor + _RISE_DB:
        rise -= 1
    return float(ends[rise]) / sample_rate


def percussive(onsets: list[Onset]) -> bool:
    """Return True when most onsets decay like hits: by 12 dB or more before the next."""
    hits = sum(onset.decay_db >= _PERCUSSIVE_DECAY_DB for onset in onsets)
    return bool(onsets) and hits * 2 > len(onsets)
