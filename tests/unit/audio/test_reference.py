"""Comparing a sound with a reference, and where two sounds mask each other. Pure."""

from __future__ import annotations

import numpy as np
import pytest

from scorch.audio.analysis import analyse
from scorch.audio.meter.masking import masking
from scorch.audio.reference import Reference, compare
from tests.support.audio_signals import RATE


def noise_through(gain_db: dict[int, float], seconds: float = 4.0, level: float = 0.1,
                  seed: int = 5) -> np.ndarray:
    """Stereo white noise, the octave around each given centre raised by its gain (dB)."""
    rng = np.random.default_rng(seed)
    spectrum = np.fft.rfft(rng.standard_normal((round(seconds * RATE), 2)), axis=0)
    hz = np.fft.rfftfreq(round(seconds * RATE), 1 / RATE)
    for centre, db in gain_db.items():
        inside = (hz >= centre / 2**0.5) & (hz < centre * 2**0.5)
        spectrum[inside] *= 10 ** (db / 20)
    out = np.fft.irfft(spectrum, axis=0)
    return level * out / out.std()


def reference_of(samples: np.ndarray, name: str = "ref") -> Reference:
    return Reference.of(name, "a test", 0.0, analyse(samples, RATE))


def test_the_same_sound_quieter_is_told_to_turn_up_with_its_balance_unchanged() -> None:
    sound = noise_through({})
    compared = compare(analyse(sound * 10 ** (-6 / 20), RATE), reference_of(sound))
    level = next(f for f in compared.figures if f.figure == "integrated loudness")
    assert level.difference == pytest.approx(-6.0, abs=0.05)
    assert max(abs(db) for db in compared.octaves.values()) < 0.3
    assert compared.advice == "Turn it up 6.0 dB."


def test_a_band_boosted_is_told_to_cut_there_largest_first() -> None:
    reference = reference_of(noise_through({}))
    heard = analyse(noise_through({4000: 8.0, 125: -5.0}, seed=6), RATE)
    compared = compare(heard, reference)
    assert compared.octaves["4k"] == pytest.approx(8.0, abs=1.0)
    assert compared.octaves["125"] == pytest.approx(-5.0, abs=1.0)
    assert compared.advice.startswith("Cut around 4k Hz by")
    assert "boost around 125 Hz by" in compared.advice
    said = "\n".join(compared.lines())
    assert "to match ref: Cut around 4k Hz" in said and "balance against ref" in said


def test_a_close_sound_is_said_to_be_close_and_width_and_peaks_are_named() -> None:
    sound = noise_through({})
    assert compare(analyse(sound, RATE), reference_of(sound)).advice.startswith("Close to it")
    mono = np.repeat(sound[:, :1], 2, axis=1)
    wide = compare(analyse(sound, RATE), reference_of(mono))
    assert wide.advice == "Narrow the stereo (width 0.50 against 0.00)."
    t = np.arange(RATE * 4) / RATE
    hot = 0.99 * np.sin(2 * np.pi * RATE / 4 * t + np.pi / 4)
    peaks = compare(analyse(np.stack([hot, hot], 1), RATE), reference_of(sound))
    assert "limit the peaks" in peaks.advice.lower()


def test_a_reference_keeps_its_figures_through_json() -> None:
    reference = reference_of(noise_through({1000: 3.0}), "mix-a")
    again = Reference.model_validate_json(reference.model_dump_json())
    assert again == reference
    assert again.line().startswith("mix-a: 4 s of a test, ")


def test_masking_finds_the_masked_and_the_colliding_bands() -> None:
    a = {"63": -20.0, "125": -25.0, "1k": -30.0, "4k": -60.0}
    b = {"63": -10.0, "125": -24.0, "1k": -50.0, "4k": -20.0}
    found = masking("kick", a, "bass", b)
    assert found.collide == ["125"]
    assert found.a_masked == ["63"]  # 10 dB under the bass
    assert found.b_masked == []  # the bass's 1k is more than 20 dB under its loudest band
    assert found.a_masked_share == pytest.approx(10**-2 / (10**-2 + 10**-2.5 + 10**-3 + 10**-6),
                                                 abs=1e-3)
    assert found.lines() == ["masking, kick with bass: collide at 125 Hz; kick masked at 63 Hz "
                             f"({found.a_masked_share:.0%} of its power), bass masked at none "
                             "(0%)"]


def test_masked_neighbouring_bands_are_said_as_a_range() -> None:
    quiet = {name: -40.0 for name in ("50", "63", "80", "2k")}
    loud = {name: -20.0 for name in quiet}
    assert "50-80 Hz, 2k Hz" in masking("a", quiet, "b", loud).lines()[0]
