"""Loudness to the standard: EBU Tech 3341 / 3342's test signals, and ffmpeg's ebur128.

The test signals are generated here as the EBU's test set describes them (1 kHz sines
at given dBFS, in sequences) and measured against their published expected values
within the standards' tolerances: integrated, momentary and short-term loudness
+-0.1 LU, loudness range +-1 LU, true peak +0.2/-0.4 dB. Then a differential test:
ffmpeg's own meter (an independent implementation) on the same generated files,
within 0.1 LU (integrated), 0.5 LU (range) and 0.2 dB (true peak).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from scorch.audio.meter import loudness
from tests.support.rooms.ebur128 import needs_ffmpeg, reference_loudness

RATE = 48000


def sine(dbfs: float, seconds: float, hz: float = 1000.0, phase: float = 0.0,
         rate: int = RATE) -> np.ndarray:
    """A sine whose peak is at ``dbfs`` (as the EBU's test signals are specified)."""
    t = np.arange(round(seconds * rate)) / rate
    return 10 ** (dbfs / 20) * np.sin(2 * np.pi * hz * t + phase)


def faded(signal: np.ndarray, seconds: float = 0.01) -> np.ndarray:
    """``signal`` with raised-cosine fades at both ends: a tone that starts abruptly rings
    between its first samples (its true peak is that of the click, not of the tone)."""
    count = round(seconds * RATE)
    ramp = 0.5 - 0.5 * np.cos(np.pi * np.arange(count) / count)
    out = signal.copy()
    out[:count] *= ramp
    out[len(out) - count:] *= ramp[::-1]
    return out


def stereo(*parts: np.ndarray) -> np.ndarray:
    mono = np.concatenate(parts)
    return np.stack([mono, mono], axis=1)


# --- EBU Tech 3341, Table 1 ------------------------------------------------------------


@pytest.mark.parametrize(("case", "signal"), [
    ("1: -23 dBFS, 20 s", lambda: stereo(sine(-23, 20))),
    ("2: -33 dBFS, 20 s", lambda: stereo(sine(-33, 20))),
    ("3: -36/-23/-36 dBFS", lambda: stereo(sine(-36, 10), sine(-23, 60), sine(-36, 10))),
    ("4: -72/-36/-23/-36/-72 dBFS", lambda: stereo(sine(-72, 10), sine(-36, 10),
                                                    sine(-23, 60), sine(-36, 10),
                                                    sine(-72, 10))),
    ("5: -26/-20/-26 dBFS", lambda: stereo(sine(-26, 20), sine(-20, 20.1), sine(-26, 20))),
], ids=lambda value: value if isinstance(value, str) else "")
def test_tech_3341_integrated_loudness_cases_read_minus_23(case: str, signal) -> None:
    measured = loudness.measure(signal(), RATE)
    expected = -33.0 if case.startswith("2") else -23.0
    assert measured.integrated == pytest.approx(expected, abs=0.1), case


def test_tech_3341_case_6_five_channels_weigh_the_surrounds() -> None:
    # L and R at -28, C at -24, Ls and Rs at -30 dBFS: the surrounds count 1.41 times.
    front, centre, surround = sine(-28, 20), sine(-24, 20), sine(-30, 20)
    five = np.stack([front, front, centre, surround, surround], axis=1)
    assert loudness.measure(five, RATE).integrated == pytest.approx(-23.0, abs=0.1)


def test_tech_3341_case_9_short_term_is_constant_after_3_seconds() -> None:
    # 1.34 s at -20 and 1.66 s at -30 dBFS, five times: every 3 s window holds one of each.
    signal = stereo(*[part for _ in range(5) for part in (sine(-20, 1.34), sine(-30, 1.66))])
    short_term = loudness.measure(signal, RATE).short_term
    assert len(short_term) >= 100  # one value every 100 ms once 3 s are full
    assert np.all(np.abs(short_term - -23.0) <= 0.1), short_term.min()


def test_tech_3341_case_12_momentary_is_constant_after_one_second() -> None:
    # 0.18 s at -20 and 0.22 s at -30 dBFS, repeated: every 400 ms window holds one of each.
    signal = stereo(*[part for _ in range(50) for part in (sine(-20, 0.18), sine(-30, 0.22))])
    momentary = loudness.measure(signal, RATE).momentary[6:]  # windows ending after 1 s
    assert np.all(np.abs(momentary - -23.0) <= 0.1), (momentary.min(), momentary.max())


def test_momentary_and_short_term_maxima_of_a_burst() -> None:
    # 2 s at -33, 1 s at -20 (a burst), 2 s at -33: the loudest 400 ms is the burst's own.
    measured = loudness.measure(stereo(sine(-33, 2), sine(-20, 1), sine(-33, 2)), RATE)
    assert measured.momentary_max == pytest.approx(-20.0, abs=0.1)
    # The loudest 3 s hold the burst and 2 s at -33 dBFS.
    expected = 10 * np.log10((10 ** -2 + 2 * 10 ** -3.3) / 3)
    assert measured.short_term_max == pytest.approx(expected, abs=0.1)


@pytest.mark.parametrize(("case", "hz", "amplitude", "degrees", "expected"), [
    (15, RATE / 4, 0.50, 0.0, -6.0),
    (16, RATE / 4, 0.50, 45.0, -6.0),
    (17, RATE / 6, 0.50, 60.0, -6.0),
    (18, RATE / 8, 0.50, 67.5, -6.0),
    (19, RATE / 4, 1.41, 45.0, 3.0),
])
def test_tech_3341_true_peak_cases(case: int, hz: float, amplitude: float, degrees: float,
                                   expected: float) -> None:
    t = np.arange(RATE) / RATE
    tone = faded(amplitude * np.sin(2 * np.pi * hz * t + np.radians(degrees)))
    measured = loudness.true_peak(np.stack([tone, tone], axis=1))
    assert measured is not None
    assert expected - 0.4 <= measured <= expected + 0.2, f"case {case}: {measured:.3f} dBTP"
    if degrees == 45.0:  # the samples miss the peaks by 3 dB: the true peak does not
        assert 20 * np.log10(np.abs(tone).max()) < expected - 2.9


# --- EBU Tech 3342 ----------------------------------------------------------------------


@pytest.mark.parametrize(("levels", "expected"), [
    ((-20, -30), 10.0), ((-20, -15), 5.0), ((-40, -20), 20.0),
    ((-50, -35, -20, -35, -50), 15.0),
])
def test_tech_3342_loudness_range_cases(levels: tuple[int, ...], expected: float) -> None:
    signal = stereo(*[sine(level, 20) for level in levels])
    measured = loudness.measure(signal, RATE)
    assert measured.loudness_range == pytest.approx(expected, abs=1.0)


def test_range_and_maxima_are_none_where_the_standard_has_no_value() -> None:
    short = loudness.measure(stereo(sine(-20, 2.0)), RATE)
    assert short.loudness_range is None and short.short_term_max is None  # under 3 s
    assert short.momentary_max == pytest.approx(-20.0, abs=0.1)
    quiet = loudness.measure(stereo(sine(-90, 5.0)), RATE)
    assert quiet.integrated is None and quiet.loudness_range is None  # under the -70 gate
    silent = loudness.measure(np.zeros((RATE, 2)), RATE)
    assert silent.true_peak is None and silent.integrated is None
    empty = loudness.measure(np.zeros((0, 2)), RATE)
    assert empty.integrated is None and empty.momentary.size == 0


def test_the_true_peak_skips_quiet_blocks_and_finds_a_lone_inter_sample_peak() -> None:
    quiet = 0.01 * np.random.default_rng(4).standard_normal(RATE * 30)
    t = np.arange(2048) / RATE
    quiet[RATE * 17: RATE * 17 + 2048] = 0.5 * np.sin(2 * np.pi * RATE / 4 * t + np.pi / 4)
    measured = loudness.true_peak(quiet[:, np.newaxis])
    assert measured == pytest.approx(-6.0, abs=0.2)


# --- ffmpeg's ebur128 on the same files ---------------------------------------------------


def _signals() -> dict[str, tuple[np.ndarray, int]]:
    rng = np.random.default_rng(7)
    noise = rng.standard_normal((RATE * 12, 2)) * 0.05
    spectrum = np.fft.rfft(rng.standard_normal(RATE * 12))
    spectrum /= np.sqrt(np.maximum(np.arange(len(spectrum)), 1))
    pink = np.fft.irfft(spectrum)
    pink *= 0.1 / pink.std()
    t = np.arange(RATE * 20) / RATE
    swell = 0.3 * np.sin(2 * np.pi * 220 * t) * np.clip(t / 20, 0.05, 1) ** 2
    wide = np.stack([np.sin(2 * np.pi * 300 * t), 0.4 * np.sin(2 * np.pi * 3000 * t)], 1) * 0.2
    bursts = stereo(*[part for _ in range(6) for part in (sine(-18, 1.0, 440), sine(-80, 2.0))])
    return {
        "steps -20/-30": (stereo(sine(-20, 15), sine(-30, 15)), RATE),
        "white noise": (noise, RATE),
        "pink noise mono": (pink[:, np.newaxis], RATE),
        "a swell": (np.stack([swell, swell], axis=1), RATE),
        "different channels": (wide, RATE),
        "bursts and near-silence": (bursts, RATE),
        "an inter-sample peak": (stereo(faded(sine(-1, 8, RATE / 4, np.pi / 4))), RATE),
        "44.1 kHz": (stereo(sine(-18, 10, 1000, 0, 44100), sine(-28, 10, 1000, 0, 44100)),
                     44100),
    }


@needs_ffmpeg
@pytest.mark.parametrize("name", list(_signals()))
def test_ffmpeg_ebur128_measures_generated_signals_as_scorch_does(
        name: str, tmp_path: Path) -> None:
    samples, rate = _signals()[name]
    path = tmp_path / "signal.wav"
    soundfile.write(path, samples.astype(np.float32), rate, subtype="FLOAT")
    data, _ = soundfile.read(path, dtype="float64", always_2d=True)
    ours = loudness.measure(data, rate)
    theirs = reference_loudness(path)
    assert ours.integrated == pytest.approx(theirs.integrated, abs=0.1)
    assert (ours.loudness_range or 0.0) == pytest.approx(theirs.loudness_range, abs=0.5)
    assert ours.true_peak == pytest.approx(theirs.true_peak, abs=0.2)
