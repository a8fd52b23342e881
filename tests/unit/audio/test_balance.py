"""Band energies against theory, tilt, crest, and stereo width of known signals.

White noise has equal power per hertz, so a band's power is its width: +3.01 dB per
octave. Pink noise has equal power per octave (0 dB per octave), brown noise falls
3.01 dB per octave. White noise through a known filter has, in each band, the
integral of the filter's power response over the band: computed here from scipy's
own frequency response of the filter, independently of the band code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import butter, sosfilt, sosfreqz

from scorch.audio.meter import bands
from scorch.audio.meter.figures import measure
from scorch.audio.meter.iec_bands import OCTAVES, THIRDS

RATE = 48000
SECONDS = 20
SIGMA = 0.1  # white noise's RMS: -20 dBFS


def white(seed: int = 3) -> np.ndarray:
    return SIGMA * np.random.default_rng(seed).standard_normal(RATE * SECONDS)


def coloured(slope_db_per_octave: float, seed: int = 3) -> np.ndarray:
    """Noise whose power falls by ``slope`` dB per octave of frequency (pink: -3.01)."""
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(RATE * SECONDS))
    hz = np.maximum(np.fft.rfftfreq(RATE * SECONDS, 1 / RATE), 1.0)
    spectrum *= hz ** (slope_db_per_octave / (20 * math.log10(2)))
    noise = np.fft.irfft(spectrum)
    return 0.1 * noise / noise.std()


def third_levels(signal: np.ndarray) -> np.ndarray:
    found = bands.spectra(signal[:, np.newaxis], RATE)
    return bands.measure(found, RATE, octaves=False).level


# Bands from 50 Hz up hold many bins of a 0.68 s segment; 20 s of noise average to
# within a few tenths of a dB there.
FROM_50HZ = slice(3, None)


def test_white_noise_rises_3_db_per_octave_and_sums_to_its_rms() -> None:
    levels = third_levels(white())
    widths = np.array([c * (10 ** 0.05 - 10 ** -0.05) for c in THIRDS])
    expected = 10 * np.log10(SIGMA**2 * widths / (RATE / 2))
    assert np.max(np.abs(levels - expected)[FROM_50HZ]) < 0.6
    octaves = bands.measure(bands.spectra(white()[:, np.newaxis], RATE), RATE)
    assert bands.tilt(octaves) == pytest.approx(3.01, abs=0.1)
    total = 10 * np.log10(np.sum(10 ** (levels / 10)))
    covered = THIRDS[-1] * 10 ** 0.05 - THIRDS[0] * 10 ** -0.05  # 22.4 Hz to 22.4 kHz
    assert total == pytest.approx(-20.0 + 10 * math.log10(covered / (RATE / 2)), abs=0.1)


@pytest.mark.parametrize(("slope", "name"), [(-3.0103, "pink"), (-6.0206, "brown")])
def test_pink_and_brown_noise_follow_their_slopes(slope: float, name: str) -> None:
    signal = coloured(slope)
    levels = third_levels(signal)
    per_third = (slope + 3.0103) / 3  # a band's width adds 1 dB per third
    steps = np.diff(levels[FROM_50HZ])
    assert np.mean(steps) == pytest.approx(per_third, abs=0.05), name
    assert np.max(np.abs(steps - per_third)) < 0.8, name
    octaves = bands.measure(bands.spectra(signal[:, np.newaxis], RATE), RATE)
    assert bands.tilt(octaves) == pytest.approx(slope + 3.0103, abs=0.15), name


@pytest.mark.parametrize(("kind", "cutoff"), [("lowpass", 1000.0), ("highpass", 2000.0),
                                               ("bandpass", (400.0, 1600.0))])
def test_filtered_white_noise_matches_the_filters_own_response(kind: str, cutoff) -> None:
    sos = butter(4, cutoff, btype=kind, fs=RATE, output="sos")
    signal = sosfilt(sos, white())
    levels = third_levels(signal)
    hz, response = sosfreqz(sos, worN=1 << 18, fs=RATE)
    density = SIGMA**2 / (RATE / 2) * np.abs(response) ** 2  # power per hertz
    step = hz[1] - hz[0]
    for centre, level in list(zip(THIRDS, levels, strict=False))[FROM_50HZ]:
        inside = (hz >= centre * 10 ** -0.05) & (hz < centre * 10 ** 0.05)
        expected = 10 * np.log10(np.sum(density[inside]) * step)
        if expected > -80:  # far down a steep skirt the window's leakage dominates
            assert level == pytest.approx(expected, abs=0.8), (kind, centre)


def test_crest_factor_of_a_sine_a_square_and_noise() -> None:
    t = np.arange(RATE) / RATE
    sine = 0.5 * np.sin(2 * np.pi * 997 * t)
    assert bands.crest_db(sine[:, np.newaxis]) == pytest.approx(3.01, abs=0.01)
    square = 0.5 * np.sign(np.sin(2 * np.pi * 100 * t + 0.1))
    assert bands.crest_db(square[:, np.newaxis]) == pytest.approx(0.0, abs=0.01)
    assert bands.crest_db(white()[:, np.newaxis]) > 12.0
    assert bands.crest_db(np.zeros((10, 1))) is None


@pytest.mark.parametrize(("name", "right", "correlation", "width", "mono_db"), [
    ("mono", lambda left, other: left, 1.0, 0.0, 0.0),
    ("wide (unrelated channels)", lambda left, other: other, 0.0, 0.5, -3.01),
    ("out of phase", lambda left, other: -left, -1.0, 1.0, bands.FLOOR_DB),
    ("half cancelled", lambda left, other: 0.5 * (other - left), -0.707, 0.833, -7.78),
])
def test_stereo_width_and_correlation_of_known_signals(name, right, correlation: float,
                                                       width: float, mono_db: float) -> None:
    left, other = white(1)[: RATE * 5], white(2)[: RATE * 5]
    signal = np.stack([left, right(left, other)], axis=1)
    overall = bands.overall_stereo(signal)
    assert overall is not None
    assert overall[0] == pytest.approx(correlation, abs=0.02), name
    assert overall[1] == pytest.approx(width, abs=0.02), name
    assert overall[2] == pytest.approx(mono_db, abs=0.15), name
    per_band = bands.measure(bands.spectra(signal, RATE), RATE)
    assert per_band.correlation is not None and per_band.width is not None
    assert np.nanmax(np.abs(per_band.width[2:] - width)) < 0.05, name  # 125 Hz up
    assert np.nanmax(np.abs(per_band.correlation[2:] - correlation)) < 0.08, name


def test_a_mix_wide_only_in_its_highs_is_weak_in_mono_only_there() -> None:
    low = np.sin(2 * np.pi * 80 * np.arange(RATE * 4) / RATE) * 0.3
    high_left = sosfilt(butter(4, 3000, "highpass", fs=RATE, output="sos"), white(1)[:RATE * 4])
    signal = np.stack([low + high_left, low - high_left], axis=1)
    _, balance = measure(signal, RATE)
    assert balance is not None and balance.band_width is not None
    assert balance.band_width["63"] == pytest.approx(0.0, abs=0.01)
    assert balance.band_width["8k"] == pytest.approx(1.0, abs=0.01)
    assert "8k" in balance.mono_weak and "63" not in balance.mono_weak
    assert "stereo: correlation" in "\n".join(balance.lines())


def test_mono_sound_has_no_stereo_figures_and_silence_no_balance() -> None:
    _, balance = measure(white()[: RATE * 2, np.newaxis], RATE)
    assert balance is not None and balance.correlation is None and balance.band_width is None
    assert list(balance.octaves) == [f"{n}" for n in
                                     ("31.5", "63", "125", "250", "500", "1k", "2k", "4k",
                                      "8k", "16k")]
    assert len(OCTAVES) == 10
    assert measure(np.zeros((RATE, 2)), RATE)[1] is None


def test_bands_above_nyquist_are_left_out_at_low_rates() -> None:
    found = bands.spectra(white()[: 22050, np.newaxis], 22050)
    octave = bands.measure(found, 22050)
    # 8k's band reaches 11.2 kHz, past 22.05 kHz's Nyquist: it would be measured short.
    assert octave.names[-1] == "4k" and "8k" not in octave.names
