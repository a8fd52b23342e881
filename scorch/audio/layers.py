"""What holds and what is new: the tone that lasts through a sound, and what each onset adds.

A melody over a drone, or a beat over a held tone, is two layers: the pitch of the
whole (YIN) hears the drone, and the attack of each note holds the drone too. So
the tone that holds is read from the quietest moments of the spectrogram (a
percentile over time: hits and notes come and go, a drone stays), and the pitch
of an onset from what it adds (the spectrum after it less the one before).

Imports numpy at the top: import this module only inside a function that needs it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from scorch.audio.spectrum import Peak, Spectrum, peaks

_SEGMENT = 0.085  # s: one spectrogram frame (4096 samples at 48 kHz)
_HOLD_PERCENTILE = 20  # the level a tone keeps in 80 % of the frames
_MIN_FRAMES = 8  # fewer frames: too short to tell what holds
_STEADY_DB = 4.0  # its quiet level this close to its mean: it holds, it does not come and go
_HELD_RANGE_DB = 30.0  # a held tone this far below the loudest moment still counts
_WINDOW = 0.08  # s: before and after an onset
_NEW_NOTE_DB = 20.0  # an added peak this close to the strongest may be its root
_HARMONICS = 4  # ...when the strongest is at most its fourth harmonic


def _frames(mono: NDArray[np.float64], sample_rate: int) -> tuple[NDArray[np.float64], int]:
    size = 1 << int(np.log2(_SEGMENT * sample_rate) + 0.5)
    hop = size // 2
    if len(mono) < size:
        return np.zeros((0, size // 2 + 1)), size
    count = 1 + (len(mono) - size) // hop
    starts = np.arange(count) * hop
    segments = mono[starts[:, np.newaxis] + np.arange(size)] * np.hanning(size)
    return np.abs(np.fft.rfft(segments, axis=1)) * 2 / (size / 2), size


def held(mono: NDArray[np.float64], sample_rate: int) -> Peak | None:
    """The strongest tone present through the whole sound (a drone, a held note), if any."""
    amplitude, size = _frames(mono, sample_rate)
    if len(amplitude) < _MIN_FRAMES:
        return None
    quiet = np.percentile(amplitude, _HOLD_PERCENTILE, axis=0)
    mean = np.sqrt(np.mean(amplitude**2, axis=0))
    hz = np.fft.rfftfreq(size, 1 / sample_rate).astype(np.float64)
    steady = []  # a held tone keeps its level: the quiet frames hold nearly all of it
    for peak in peaks(Spectrum(hz, quiet), limit=8):
        index = int(np.argmin(np.abs(hz - peak.hz)))
        ratio = quiet[index] / max(float(mean[index]), 1e-12)
        if 20 * np.log10(max(float(ratio), 1e-12)) >= -_STEADY_DB:
            steady.append(peak)
    if not steady:
        return None
    strongest = max(steady, key=lambda p: p.db)
    loudest = 20 * np.log10(max(float(amplitude.max()), 1e-12))
    return strongest if strongest.db >= loudest - _HELD_RANGE_DB else None


def added(mono: NDArray[np.float64], sample_rate: int, at: float) -> tuple[float | None, float]:
    """What starts at ``at``: its pitch (the lowest strong peak of what it adds to the
    spectrum, None when no clear peak or nothing sounded before) and how far its
    strongest added peak rose above what was there (dB; inf from silence)."""
    around = _around(mono, sample_rate, at)
    if around is None:
        return None, float("inf")
    hz, before, after = around
    found = peaks(Spectrum(hz, np.maximum(after - before, 0.0)), limit=6)
    if not found:
        return None, 0.0
    strongest = max(found, key=lambda p: p.db)
    return _root(found, strongest), _rise_at(hz, before, after, strongest.hz)


def rise_at(mono: NDArray[np.float64], sample_rate: int, at: float, tone: float) -> float:
    """How far the spectrum at ``tone`` Hz rose at ``at`` (dB; inf from silence): whether
    a pitch heard there is the new note's or one that the sound already held."""
    around = _around(mono, sample_rate, at)
    return float("inf") if around is None else _rise_at(*around, tone)


def _around(mono: NDArray[np.float64], sample_rate: int, at: float,
            ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None:
    """The frequencies and the spectra just before and just after ``at`` (None: too near
    an end, or silence before it)."""
    size = 1 << int(np.log2(_WINDOW * sample_rate) + 0.5)
    start = round(at * sample_rate)
    if start < size or start + size > len(mono):
        return None
    if float(np.sqrt(np.mean(mono[start - size:start] ** 2))) <= 1e-4:
        return None
    window = np.hanning(size)
    scale = 2 / window.sum()
    before = np.abs(np.fft.rfft(mono[start - size:start] * window, 4 * size)) * scale
    after = np.abs(np.fft.rfft(mono[start:start + size] * window, 4 * size)) * scale
    return np.fft.rfftfreq(4 * size, 1 / sample_rate).astype(np.float64), before, after


def _rise_at(hz: NDArray[np.float64], before: NDArray[np.float64],
             after: NDArray[np.float64], tone: float) -> float:
    index = int(np.argmin(np.abs(hz - tone)))
    floor = max(float(np.max(before[max(0, index - 2):index + 3])), 1e-9)
    return 20 * float(np.log10(max(float(after[index]), 1e-12) / floor))


def _root(found: list[Peak], strongest: Peak) -> float:
    """The lowest strong peak the strongest is a harmonic of (a bright attack's second
    harmonic may be its strongest)."""
    for peak in sorted(found, key=lambda p: p.hz):
        ratio = strongest.hz / peak.hz
        if (peak.db >= strongest.db - _NEW_NOTE_DB and round(ratio) <= _HARMONICS
                and abs(ratio - round(ratio)) <= 0.03 * ratio):
            return peak.hz
    return strongest.hz


def rise_db(mono: NDArray[np.float64], sample_rate: int, at: float) -> float:
    """How much louder the sound is just after ``at`` than just before (inf from silence)."""
    width = round(_WINDOW * sample_rate)
    start = round(at * sample_rate)
    before = mono[max(0, start - width):start]
    after = mono[start:start + width]
    level_before = float(np.sqrt(np.mean(before**2))) if before.size else 0.0
    level_after = float(np.sqrt(np.mean(after**2))) if after.size else 0.0
    if level_before <= 1e-6:
        return float("inf")
    return 20 * float(np.log10(max(level_after, 1e-12) / level_before))
