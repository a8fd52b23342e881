"""Synthesize the test sounds of the audio tests with numpy: tones, drums, noise."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

RATE = 48000

Signal = NDArray[np.float64]


def times(seconds: float, rate: int = RATE) -> Signal:
    """Return the time of each sample of ``seconds`` of audio."""
    return np.arange(round(seconds * rate)) / rate


def sine(hz: float, seconds: float = 3.0, amplitude: float = 0.2, rate: int = RATE) -> Signal:
    """Return a sine starting at phase 0."""
    return amplitude * np.sin(2 * np.pi * hz * times(seconds, rate))


def harmonics(
    hz: float, numbers: list[int], seconds: float = 3.0, amplitude: float = 0.2
) -> Signal:
    """Return a sum of the given harmonics of ``hz``, each 1/n as loud as the first."""
    t = times(seconds)
    return sum((amplitude / n * np.sin(2 * np.pi * hz * n * t) for n in numbers), np.zeros(len(t)))


def sawtooth(hz: float, seconds: float = 3.0, amplitude: float = 0.3) -> Signal:
    """Return a band-limited sawtooth: every harmonic below Nyquist at 1/n."""
    return harmonics(hz, list(range(1, int(RATE / 2 // hz) + 1)), seconds, amplitude * 2 / np.pi)


def pluck(delay: int, seconds: float = 2.0, seed: int = 3) -> Signal:
    """Return a Karplus-Strong plucked string; its pitch is ``RATE / (delay + 0.5)``."""
    from scipy.signal import lfilter

    burst = np.zeros(round(seconds * RATE))
    burst[:delay] = np.random.default_rng(seed).uniform(-1, 1, delay)
    feedback = np.zeros(delay + 2)
    feedback[0], feedback[delay], feedback[delay + 1] = 1.0, -0.498, -0.498
    string = lfilter([1.0], feedback, burst)
    return 0.5 * string / np.abs(string).max()


def kicks(at: list[float], seconds: float = 3.0, hz: float = 55.0, sweep: bool = False) -> Signal:
    """Return bass-drum hits at the given times: decaying sine bursts, swept if asked."""
    out = np.zeros(round(seconds * RATE))
    for start in at:
        first = round(start * RATE)
        t = times(min(0.45, seconds - start))
        pitch = hz + 100 * np.exp(-t / 0.03) if sweep else np.full(len(t), hz)
        phase = 2 * np.pi * np.cumsum(pitch) / RATE
        out[first : first + len(t)] += 0.8 * np.sin(phase) * np.exp(-t / 0.08)
    return out


def noise(seconds: float = 3.0, amplitude: float = 0.3, seed: int = 1) -> Signal:
    """Return white noise, uniform in +-amplitude."""
    return np.random.default_rng(seed).uniform(-amplitude, amplitude, round(seconds * RATE))


def pad(seconds: float = 3.0, fade_in: float = 1.5) -> Signal:
    """Return a detuned sawtooth pad (A3 and E4) fading in linearly from silence."""
    voices = sawtooth(220 * 0.997, seconds, 0.1) + sawtooth(220 * 1.003, seconds, 0.1)
    voices += sawtooth(330, seconds, 0.1)
    return voices * np.minimum(times(seconds) / fade_in, 1.0)


def melody(notes_hz: list[float], step: float = 0.4) -> Signal:
    """Return one plucked-envelope note of three harmonics per ``step`` seconds."""
    out = np.zeros(round(step * len(notes_hz) * RATE))
    t = times(step)
    envelope = np.minimum(t / 0.005, 1.0) * np.exp(-t / 0.3)
    for index, hz in enumerate(notes_hz):
        first = round(index * step * RATE)
        note = sum(np.sin(2 * np.pi * hz * n * t) / n for n in (1, 2, 3))
        out[first : first + len(t)] += 0.3 * envelope * note
    return out
