"""Loudness to the standard: ITU-R BS.1770-4 (EBU R 128), EBU Tech 3342 and true peak.

- K-weighting is pyloudnorm's, with its ``DeMan`` filters: BS.1770's own pre-filter and
  RLB high-pass (the coefficients the standard lists at 48 kHz, derived for any rate).
- Integrated loudness is pyloudnorm's gating (400 ms blocks every 100 ms, -70 LUFS
  absolute gate, relative gate 10 LU below), run on the signal weighted once here.
- What pyloudnorm lacks is written here: the momentary (400 ms) and short-term (3 s)
  loudness every 100 ms, as EBU Tech 3341 meters show them (a window counts once it is
  full), and the loudness range of EBU Tech 3342 from the short-term series: the values
  above -70 LUFS and above 20 LU under their power mean, 95th less 10th percentile.
- True peak: each channel 4x oversampled with scipy's polyphase resampler (a Kaiser
  windowed FIR), in blocks so a long file costs no more memory than a short one
  (BS.1770-4 Annex 2 asks for at least 4x).

Channel weights are BS.1770's: 1.0 for the first three channels (L, R, C), 1.41 for
the surrounds (4th and 5th); beyond five channels, 1.0.

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Signal = NDArray[np.float64]

#: The absolute gate (LUFS) of integrated loudness and loudness range.
ABSOLUTE_GATE = -70.0
#: Tech 3342's relative gate, below the power mean of the short-term values (LU).
RANGE_GATE = -20.0
#: Tech 3342's percentiles of the gated short-term values.
RANGE_LOW, RANGE_HIGH = 10.0, 95.0
#: The oversampling of the true peak.
OVERSAMPLING = 4
_HOP = 0.1  # s: momentary and short-term loudness are given this often
_MOMENTARY_HOPS = 4  # 400 ms
_SHORT_TERM_HOPS = 30  # 3 s
_SURROUND_WEIGHT = 1.41
_OFFSET = -0.691  # BS.1770's constant, so that a 1 kHz sine at -23 dBFS reads -23 LUFS
_PEAK_BLOCK = 1 << 14  # frames oversampled at once
_PEAK_PAD = 64  # frames either side of a block: the resampler's filter reaches 10


@dataclass(frozen=True)
class Loudness:
    """Every loudness figure of one stretch of audio (None: too short or too quiet)."""

    integrated: float | None
    """LUFS, gated (BS.1770-4)."""
    momentary: Signal
    """LUFS of the 400 ms ending at each 100 ms step, from the first full window."""
    short_term: Signal
    """LUFS of the 3 s ending at each 100 ms step, from the first full window."""
    loudness_range: float | None
    """LU (Tech 3342); None under 3 s or when nothing passes the gates."""
    range_low: float | None
    """LUFS: the 10th percentile of the gated short-term values."""
    range_high: float | None
    """LUFS: the 95th percentile."""
    true_peak: float | None
    """dBTP: the largest magnitude of any channel, 4x oversampled; None for silence."""

    @property
    def momentary_max(self) -> float | None:
        """The loudest momentary value (LUFS)."""
        return _loudest(self.momentary)

    @property
    def short_term_max(self) -> float | None:
        """The loudest short-term value (LUFS)."""
        return _loudest(self.short_term)


def channel_weights(channels: int) -> Signal:
    """BS.1770's weight of each channel: 1.41 for the 4th and 5th (the surrounds)."""
    weights = np.ones(channels)
    weights[3:5] = _SURROUND_WEIGHT
    return weights


def k_weighted(samples: Signal, sample_rate: int) -> Signal:
    """Return ``samples`` (frames, channels) through BS.1770's K-weighting filters."""
    import pyloudnorm
    from scipy.signal import sosfilt

    meter = pyloudnorm.Meter(sample_rate, filter_class="DeMan")
    # The pre-filter, then the RLB high-pass, as one cascade of two biquads, run along
    # each channel's own contiguous samples (five times faster than along axis 0).
    stages = list(meter._filters.values())
    sos = np.array([np.concatenate([stage.b, stage.a]) for stage in stages])
    gain = math.prod(stage.passband_gain for stage in stages)
    weighted = gain * sosfilt(sos, np.ascontiguousarray(samples.T), axis=1)
    return np.asarray(weighted.T, dtype=np.float64)


def measure(samples: Signal, sample_rate: int) -> Loudness:
    """Measure ``samples`` shaped (frames, channels), floats with full scale at 1."""
    if not samples.size:
        return Loudness(None, np.zeros(0), np.zeros(0), None, None, None, None)
    weighted = k_weighted(samples, sample_rate)
    hop = round(_HOP * sample_rate)
    energy = _hop_energy(weighted, hop) @ channel_weights(samples.shape[1])
    momentary = _windows(energy, _MOMENTARY_HOPS, hop)
    short_term = _windows(energy, _SHORT_TERM_HOPS, hop)
    low, high = loudness_range(short_term)
    return Loudness(integrated=_integrated(weighted, sample_rate), momentary=momentary,
                    short_term=short_term,
                    loudness_range=None if low is None or high is None else high - low,
                    range_low=low, range_high=high, true_peak=true_peak(samples))


def _hop_energy(weighted: Signal, hop: int) -> Signal:
    """Sum of squares of each channel over each whole hop: shaped (hops, channels)."""
    hops = weighted.shape[0] // hop
    squares = np.square(weighted[: hops * hop])
    return squares.reshape(hops, hop, weighted.shape[1]).sum(axis=1)


def _windows(energy: Signal, length: int, hop: int) -> Signal:
    """Loudness of each full window of ``length`` hops, one per hop."""
    if len(energy) < length:
        return np.zeros(0)
    sums = np.concatenate([[0.0], np.cumsum(energy)])
    power = (sums[length:] - sums[:-length]) / (length * hop)
    with np.errstate(divide="ignore"):
        return _OFFSET + 10 * np.log10(np.maximum(power, 0.0))


def loudness_range(short_term: Signal) -> tuple[float | None, float | None]:
    """The low and high ends of Tech 3342's loudness range of a short-term series (LUFS)."""
    kept = short_term[short_term >= ABSOLUTE_GATE]
    if not kept.size:
        return None, None
    mean = 10 * np.log10(np.mean(10 ** (kept / 10)))
    kept = kept[kept >= mean + RANGE_GATE]
    if not kept.size:
        return None, None
    low, high = np.percentile(kept, [RANGE_LOW, RANGE_HIGH])
    return float(low), float(high)


def _integrated(weighted: Signal, sample_rate: int) -> float | None:
    """pyloudnorm's gated integrated loudness of a signal already K-weighted."""
    import pyloudnorm

    if weighted.shape[0] < 0.4 * sample_rate or not np.any(weighted):
        return None
    meter = pyloudnorm.Meter(sample_rate, filter_class="custom")  # weighted already
    data = weighted[:, 0] if weighted.shape[1] == 1 else weighted[:, :5]  # 5 weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible clipping": the report counts clipping
        value = float(meter.integrated_loudness(data))
    return value if math.isfinite(value) and value >= ABSOLUTE_GATE else None


def true_peak(samples: Signal) -> float | None:
    """dBTP: the largest magnitude of ``samples`` oversampled 4x, None for silence.

    Blocks are oversampled loudest first, and no further once a block's sample peak
    times the filter's largest gain (:func:`_largest_gain`) cannot beat what was found:
    most of a long sound is never oversampled, and the answer is the same.
    """
    from scipy.signal import resample_poly

    frames = samples.shape[0]
    if not frames:
        return None
    count = -(-frames // _PEAK_BLOCK)
    padded = np.zeros((count * _PEAK_BLOCK, samples.shape[1]))
    padded[:frames] = np.abs(samples)
    block_peaks = padded.reshape(count, -1).max(axis=1)
    peak, bound = 0.0, _largest_gain()
    for index in np.argsort(block_peaks)[::-1]:
        if block_peaks[index] * bound <= peak or block_peaks[index] == 0:
            break
        start = int(index) * _PEAK_BLOCK
        first, last = max(0, start - _PEAK_PAD), min(frames, start + _PEAK_BLOCK + _PEAK_PAD)
        upsampled = resample_poly(samples[first:last], OVERSAMPLING, 1, axis=0)
        # Only this block's own stretch counts: the pads are its neighbours'.
        inner = upsampled[(start - first) * OVERSAMPLING:
                          (min(frames, start + _PEAK_BLOCK) - first) * OVERSAMPLING]
        peak = max(peak, float(np.max(np.abs(inner))), float(block_peaks[index]))
    return 20 * math.log10(peak) if peak > 0 else None


@functools.cache
def _largest_gain() -> float:
    """The most any output of the 4x resampler can be over its inputs' largest magnitude:
    the largest sum of magnitudes of one phase of its filter (resample_poly's own design:
    a Kaiser-windowed sinc of 10 input samples each side, beta 5)."""
    from scipy.signal import firwin

    taps = firwin(2 * 10 * OVERSAMPLING + 1, 1 / OVERSAMPLING, window=("kaiser", 5.0))
    taps *= OVERSAMPLING
    return max(float(np.abs(taps[phase::OVERSAMPLING]).sum()) for phase in range(OVERSAMPLING))


def _loudest(series: Signal) -> float | None:
    if not series.size:
        return None
    value = float(series.max())
    return value if value >= ABSOLUTE_GATE else None
