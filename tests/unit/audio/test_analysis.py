"""Analysis of synthesized sounds: levels, pitch, partials, onsets, stereo, summary."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from scorch.audio.analysis import analyse, analyse_file
from scorch.audio.notes import nearest_note
from scorch.audio.report import SoundReport
from scorch.errors import AudioFileError
from tests.support.audio_signals import (
    RATE,
    harmonics,
    kicks,
    melody,
    noise,
    pad,
    pluck,
    sawtooth,
    sine,
)

KICK_TIMES = [0.0, 0.5, 1.0, 1.5]


def cents_off(measured: float, expected: float) -> float:
    return abs(1200 * math.log2(measured / expected))


# --- notes -------------------------------------------------------------------


@pytest.mark.parametrize(("hz", "name", "cents"), [
    (440.0, "A4", 0), (261.63, "C4", 0), (27.5, "A0", 0), (4186.01, "C8", 0),
    (466.16, "A#4", 0), (445.0, "A4", 20), (430.0, "A4", -40), (55.0, "A1", 0),
])
def test_frequencies_are_named_by_the_nearest_equal_tempered_note(
    hz: float, name: str, cents: int
) -> None:
    assert nearest_note(hz) == (name, cents)


# --- pitch -------------------------------------------------------------------


def test_a_440_hz_sine_is_reported_as_a4() -> None:
    report = analyse(sine(440.0), RATE)
    assert report.fundamental_hz == pytest.approx(440.0, abs=0.05)
    assert (report.note, report.cents) == ("A4", 0)
    assert report.pitch_confidence is not None and report.pitch_confidence > 0.95


def test_a_261_63_hz_sine_is_reported_as_middle_c() -> None:
    report = analyse(sine(261.63), RATE)
    assert report.fundamental_hz == pytest.approx(261.63, abs=0.05)
    assert (report.note, report.cents) == ("C4", 0)


@pytest.mark.parametrize("hz", [27.5, 55.0, 110.0, 880.0, 1000.0, 3520.0, 6000.0])
def test_sines_across_the_range_are_measured_within_a_cent(hz: float) -> None:
    report = analyse(sine(hz), RATE)
    assert report.fundamental_hz is not None
    assert cents_off(report.fundamental_hz, hz) < 1.0
    assert [p.hz for p in report.partials] == [pytest.approx(hz, rel=0.002)]


def test_a_sawtooth_is_named_by_its_fundamental_not_an_octave_away() -> None:
    report = analyse(sawtooth(110.0), RATE)
    assert report.fundamental_hz == pytest.approx(110.0, abs=0.2)
    assert report.note == "A2"
    # Its partials are the harmonic series, strongest first harmonic.
    assert [round(p.hz / 110.0) for p in report.partials] == list(range(1, 9))
    assert max(report.partials, key=lambda p: p.db).hz == pytest.approx(110.0, abs=0.5)


def test_a_plucked_string_is_named_by_its_fundamental() -> None:
    delay = 436
    expected = RATE / (delay + 0.5)  # 109.97 Hz, A2
    report = analyse(pluck(delay), RATE)
    assert report.fundamental_hz is not None
    assert cents_off(report.fundamental_hz, expected) < 5
    assert report.note == "A2"


def test_a_tone_missing_its_fundamental_is_named_by_the_pitch_heard() -> None:
    report = analyse(harmonics(100.0, [2, 3, 4, 5]), RATE)
    assert report.fundamental_hz == pytest.approx(100.0, abs=0.2)
    assert min(p.hz for p in report.partials) == pytest.approx(200.0, abs=0.5)
    assert "tone at 100.0 Hz" in report.summary


def test_white_noise_is_unpitched_without_partials() -> None:
    report = analyse(noise(), RATE)
    assert report.fundamental_hz is None and report.note is None and report.cents is None
    assert report.pitch_confidence is not None and report.pitch_confidence < 0.2
    assert report.partials == []
    assert report.spectral_flatness is not None and report.spectral_flatness > 0.8
    assert report.centroid_hz == pytest.approx(12000, rel=0.05)  # flat up to 24 kHz
    assert report.summary.startswith("Noisy, unpitched sound centred near 12.0 kHz")


def test_a_c_major_chord_lists_its_three_notes() -> None:
    chord = sum(sine(hz, amplitude=0.15) for hz in (261.63, 329.63, 392.0))
    report = analyse(chord, RATE)
    assert [p.note for p in report.partials] == ["C4", "E4", "G4"]
    assert all(p.db == pytest.approx(20 * math.log10(0.15), abs=0.5) for p in report.partials)
    assert report.summary.startswith("A chord of C4, E4, G4 (261.6, 329.6, 392.0 Hz)")


def test_a_chord_of_sawtooths_is_named_by_its_roots_not_their_harmonics() -> None:
    chord = sawtooth(261.63, amplitude=0.1) + sawtooth(329.63, amplitude=0.1)
    chord += sawtooth(392.0, amplitude=0.1)
    assert analyse(chord, RATE).summary.startswith("A chord of C4, E4, G4 ")


# --- levels ------------------------------------------------------------------


def test_levels_of_a_half_scale_sine() -> None:
    report = analyse(sine(1000.0, amplitude=0.5), RATE)
    assert report.peak_dbfs == pytest.approx(-6.0, abs=0.05)
    assert report.rms_dbfs == pytest.approx(-9.0, abs=0.05)
    assert report.partials[0].db == pytest.approx(-6.0, abs=0.2)
    assert not report.clipping and report.clipped_samples == 0 and not report.silent


def test_a_full_scale_997_hz_sine_measures_minus_3_lufs() -> None:
    # The BS.1770 calibration point: a 0 dBFS 997 Hz sine in one channel is -3.01 LUFS.
    # pyloudnorm reads -3.05 (its 48 kHz filter is a close approximation).
    assert analyse(sine(997.0, amplitude=1.0), RATE).lufs == pytest.approx(-3.01, abs=0.1)


def test_a_sound_shorter_than_one_loudness_block_has_no_lufs() -> None:
    report = analyse(sine(440.0, seconds=0.3), RATE)
    assert report.lufs is None
    assert report.fundamental_hz == pytest.approx(440.0, abs=0.5)


def test_digital_silence_has_no_levels_and_says_so() -> None:
    report = analyse(np.zeros((RATE * 2, 2)), RATE)
    assert report.silent
    assert (report.peak_dbfs, report.rms_dbfs, report.lufs) == (None, None, None)
    assert report.fundamental_hz is None and report.partials == [] and report.onsets == []
    assert report.stereo_correlation is None
    assert report.summary == "Silence: every sample is zero."


def test_sound_below_minus_80_dbfs_is_silent_but_keeps_its_level() -> None:
    report = analyse(sine(440.0, amplitude=1e-5), RATE)
    assert report.silent
    assert report.peak_dbfs == pytest.approx(-100.0, abs=0.1)
    assert report.summary == "Silence: peak -100.0 dBFS, below -80 dBFS."


def test_a_clipped_sine_counts_its_clipped_samples() -> None:
    clipped = np.clip(2.0 * np.sin(2 * np.pi * 220.0 * np.arange(RATE) / RATE), -1.0, 1.0)
    report = analyse(clipped, RATE)
    expected = int(np.count_nonzero(np.abs(clipped) >= 1.0 - 1e-6))
    assert report.clipped_samples == expected > RATE // 2  # 2x drive: two thirds are flat
    assert report.clipping
    assert report.peak_dbfs == pytest.approx(0.0, abs=0.01)
    assert f"CLIPPING on {expected:,} samples" in report.summary


def test_overs_in_a_float_signal_count_as_clipping() -> None:
    report = analyse(sine(220.0, amplitude=1.5), RATE)
    assert report.clipping
    assert report.peak_dbfs == pytest.approx(3.5, abs=0.05)
    assert "peak +3.5 dBFS" in report.summary


def test_a_sine_just_below_full_scale_is_not_clipping() -> None:
    assert not analyse(sine(220.0, amplitude=0.999), RATE).clipping


def test_samples_that_are_not_numbers_count_as_clipped_and_measure_as_zero() -> None:
    broken = sine(440.0, amplitude=0.5)
    broken[[100, 2000, 3000]] = [np.nan, np.inf, -np.inf]
    report = analyse(broken, RATE)
    assert report.clipped_samples == 3
    assert report.peak_dbfs == pytest.approx(-6.0, abs=0.05)
    assert report.note == "A4"


def test_integer_samples_are_scaled_to_full_scale() -> None:
    pcm = (sine(440.0, amplitude=0.5) * 32768).astype(np.int16)
    assert analyse(pcm, RATE).peak_dbfs == pytest.approx(-6.0, abs=0.05)


def test_empty_audio_is_reported_as_nothing_to_hear() -> None:
    report = analyse(np.zeros((0, 2)), RATE)
    assert (report.frames, report.channels, report.seconds) == (0, 2, 0.0)
    assert report.silent and report.peak_dbfs is None
    assert report.summary == "Nothing to hear: the audio is empty."


def test_samples_shaped_channels_first_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\(frames, channels\)"):
        analyse(np.zeros((2, RATE)), RATE)


# --- onsets ------------------------------------------------------------------


def test_four_kicks_give_exactly_four_onsets_within_20_ms() -> None:
    report = analyse(kicks(KICK_TIMES), RATE)
    assert report.onsets == pytest.approx(KICK_TIMES, abs=0.02)
    assert report.summary == (
        "Four percussive hits at 0.00, 0.50, 1.00, 1.50 s, pitched near 55.0 Hz "
        "(A1 +0 cents), -2 dBFS peak, no clipping."
    )


def test_swept_kicks_off_the_grid_are_placed_within_20_ms() -> None:
    at = [0.25, 0.75, 1.31, 2.2]
    report = analyse(kicks(at, sweep=True), RATE)
    assert report.onsets == pytest.approx(at, abs=0.02)
    assert report.summary.startswith("Four percussive hits at 0.25, 0.75, 1.31, 2.20 s")


def test_kicks_over_a_pad_are_still_found_and_heard_as_hits() -> None:
    at = [0.25, 0.75, 1.25, 1.75]
    report = analyse(kicks(at, sweep=True) + 0.5 * pad(), RATE)
    assert report.onsets == pytest.approx(at, abs=0.02)
    # The pad holds the overall level up; the kicks' own bands still decay.
    assert report.summary.startswith("Four percussive hits at 0.25, 0.75, 1.25, 1.75 s")


def test_kicks_over_a_pad_are_named_by_their_own_pitch() -> None:
    report = analyse(kicks(KICK_TIMES) + 0.5 * pad(), RATE)
    assert report.onset_notes == ["A1"] * 4
    assert "percussive hits at 0.00, 0.50, 1.00, 1.50 s, pitched near A1" in report.summary


@pytest.mark.parametrize("tone", [sine(440.0), sine(55.0, amplitude=0.5), sawtooth(110.0),
                                  harmonics(100.0, [2, 3, 4, 5]), noise()],
                         ids=["sine", "bass", "sawtooth", "missing-fundamental", "noise"])
def test_a_steady_sound_has_no_onsets(tone: np.ndarray) -> None:
    assert analyse(tone, RATE).onsets == []


def test_a_pad_fading_in_has_at_most_one_onset() -> None:
    report = analyse(pad(), RATE)
    assert len(report.onsets) <= 1
    assert report.summary.startswith("A steady harmonic-rich tone")


def test_a_tone_entering_after_silence_has_one_onset_at_its_start() -> None:
    tone = np.concatenate([np.zeros(RATE), sine(330.0, seconds=2.0)])
    assert analyse(tone, RATE).onsets == [pytest.approx(1.0, abs=0.005)]


def test_a_melody_names_each_note_and_no_single_fundamental() -> None:
    scale = [261.63, 293.66, 329.63, 349.23, 392.0, 440.0]
    report = analyse(melody(scale), RATE)
    assert report.onsets == pytest.approx([0.4 * i for i in range(6)], abs=0.02)
    assert report.onset_notes == ["C4", "D4", "E4", "F4", "G4", "A4"]
    assert report.fundamental_hz is None
    assert report.summary.startswith("Six notes at 0.00, 0.40, 0.80, 1.20, 1.60, 2.00 s, "
                                     "playing C4, D4, E4, F4, G4, A4")


# --- stereo ------------------------------------------------------------------


def test_left_equal_to_minus_right_correlates_at_minus_one_and_still_has_a_pitch() -> None:
    tone = sine(440.0)
    report = analyse(np.stack([tone, -tone], axis=1), RATE)
    assert report.stereo_correlation == -1.0
    assert report.channels == 2 and report.frames == len(tone)
    assert report.note == "A4"  # the mix cancels; the analysis uses one channel instead
    assert "opposite phase (correlation -1.00)" in report.summary


def test_identical_channels_correlate_at_one_and_mono_has_no_correlation() -> None:
    tone = sine(440.0)
    assert analyse(np.stack([tone, tone], axis=1), RATE).stereo_correlation == 1.0
    assert analyse(tone, RATE).stereo_correlation is None


def test_unrelated_channels_correlate_near_zero() -> None:
    stereo = np.stack([noise(seed=1), noise(seed=2)], axis=1)
    correlation = analyse(stereo, RATE).stereo_correlation
    assert correlation is not None and abs(correlation) < 0.05


# --- the report --------------------------------------------------------------


def test_the_summary_of_a_sine_reads_as_one_sentence() -> None:
    assert analyse(sine(440.0), RATE).summary == (
        "A steady tone at 440.0 Hz (A4 +0 cents), -17 dBFS RMS, no clipping."
    )


def test_the_report_travels_as_plain_json() -> None:
    for samples in (sine(440.0), np.zeros(RATE), kicks(KICK_TIMES)):
        report = analyse(samples, RATE)
        text = report.model_dump_json()
        assert "Infinity" not in text and "NaN" not in text
        assert SoundReport.model_validate(json.loads(text)) == report


def test_the_report_describes_the_shape_of_the_audio() -> None:
    report = analyse(np.zeros((RATE // 2, 2)), 44100)
    assert (report.frames, report.channels, report.sample_rate) == (RATE // 2, 2, 44100)
    assert report.seconds == pytest.approx(RATE / 2 / 44100)


@pytest.mark.parametrize(("fmt", "subtype"), [("WAV", "FLOAT"), ("WAV", "PCM_24"),
                                               ("AIFF", "PCM_16"), ("FLAC", "PCM_24")])
def test_a_file_reads_the_same_as_its_samples(tmp_path: Path, fmt: str, subtype: str) -> None:
    stereo = np.stack([sine(440.0), sine(440.0, amplitude=0.1)], axis=1)
    path = tmp_path / f"tone.{fmt.lower()}"
    soundfile.write(path, stereo, RATE, format=fmt, subtype=subtype)
    report = analyse_file(path)
    assert (report.channels, report.frames, report.sample_rate) == (2, len(stereo), RATE)
    assert report.note == "A4"
    assert report.peak_dbfs == pytest.approx(analyse(stereo, RATE).peak_dbfs, abs=0.1)


def test_a_file_that_is_not_audio_raises_an_audio_file_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.wav"
    path.write_text("not a sound")
    with pytest.raises(AudioFileError, match=r"notes\.wav"):
        analyse_file(path)


def test_importing_the_audio_modules_loads_no_numerics() -> None:
    code = ("import sys, scorch.audio, scorch.audio.analysis, scorch.audio.picture, "
            "scorch.audio.recording_file; "
            "print(sorted(m for m in ('numpy', 'scipy', 'soundfile', 'pyloudnorm', 'matplotlib')"
            " if m in sys.modules))")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root, env={"PYTHONPATH": str(root)})
    assert out.stdout.strip() == "[]"
