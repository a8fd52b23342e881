"""Key, mode, chords and tempo: pure logic on profiles, notes and onset times.

Synthesised audio checks the chroma: a sawtooth is one note (its overtones folded in),
three of them a chord.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.audio.music import tempo
from scorch.audio.music.chords import name_chord, progression
from scorch.audio.music.chroma import chroma
from scorch.audio.music.figures import Grid, harmony, harmony_of_notes, key_of, rhythm
from scorch.audio.music.key import MAJOR_PROFILE, MINOR_PROFILE, find_key, profile_of
from tests.support.audio_signals import RATE, sawtooth


def scale(tonic: int, steps: tuple[int, ...], weights: tuple[float, ...] | None = None,
          ) -> list[float]:
    profile = [0.0] * 12
    for i, step in enumerate(steps):
        profile[(tonic + step) % 12] += weights[i] if weights else 1.0
    return profile


# --- key ------------------------------------------------------------------------------


@pytest.mark.parametrize("tonic", range(12))
def test_each_key_profile_finds_its_own_key(tonic: int) -> None:
    for mode, shape in (("major", MAJOR_PROFILE), ("minor", MINOR_PROFILE)):
        rotated = [shape[(pc - tonic) % 12] for pc in range(12)]
        found = find_key(rotated)
        assert found is not None and (found.tonic, found.mode) == (tonic, mode)
        assert found.correlation == pytest.approx(1.0)


@pytest.mark.parametrize(("steps", "tonic", "name"), [
    ((0, 2, 4, 5, 7, 9, 11), 0, "C major"),
    ((0, 2, 3, 5, 7, 8, 10), 9, "A minor"),
    ((0, 2, 3, 5, 7, 9, 10), 2, "D dorian"),
    ((0, 1, 3, 5, 7, 8, 10), 4, "E phrygian"),
    ((0, 2, 4, 6, 7, 9, 11), 5, "F lydian"),
    ((0, 2, 4, 5, 7, 9, 10), 7, "G mixolydian"),
])
def test_modes_are_named_from_their_telling_degrees(steps: tuple[int, ...], tonic: int,
                                                    name: str) -> None:
    # The tonic and its fifth weigh most, as a melody's home does.
    weights = tuple(3.0 if s in (0, 7) else 2.0 if s in (3, 4) else 1.0 for s in steps)
    found = find_key(scale(tonic, steps, weights))
    assert found is not None and found.name == name


def test_a_flat_or_empty_profile_has_no_key() -> None:
    assert find_key([0.0] * 12) is None
    assert find_key([1.0] * 12) is None
    assert key_of([1.0, 0, 0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0]) is None  # two notes: no key
    with pytest.raises(ValueError, match="12 values"):
        find_key([1.0] * 7)


def test_profile_of_notes_weighs_each_pitch_class_by_its_duration() -> None:
    assert profile_of([(60, 1.0), (72, 0.5), (67, 2.0)])[:8] == [1.5, 0, 0, 0, 0, 0, 0, 2.0]


# --- chords ---------------------------------------------------------------------------


def chord(*pitches: int) -> list[float]:
    return profile_of([(p, 1.0) for p in pitches])


@pytest.mark.parametrize(("pitches", "bass", "name"), [
    ((60, 64, 67), None, "C"), ((57, 60, 64), None, "Am"), ((55, 59, 62, 65), None, "G7"),
    ((57, 60, 64, 67), 9, "Am7"), ((57, 60, 64, 67), 0, "C6"), ((62, 66, 69, 72), None, "D7"),
    ((60, 64, 67, 71), None, "Cmaj7"), ((59, 62, 65), None, "Bdim"), ((60, 67), None, "C5"),
    ((60, 65, 67), None, "Csus4"), ((64, 67, 71, 76), None, "Em"),
])
def test_chords_are_named_by_their_pitch_classes_and_bass(pitches, bass, name: str) -> None:
    found = name_chord(chord(*pitches), bass)
    assert found is not None and found.name == name


def test_a_single_note_or_a_cluster_names_no_chord() -> None:
    assert name_chord(chord(60)) is None
    assert name_chord(chord(*range(60, 72))) is None


def test_a_progression_says_a_held_chord_once() -> None:
    c, f = chord(60, 64, 67), chord(53, 57, 60)
    spans = progression([(0, 1, c, 0), (1, 2, c, 0), (2, 3, chord(60), 0), (3, 4, c, 0),
                         (4, 5, f, 5)])
    assert [(s.chord.name, s.start, s.end) for s in spans] == [("C", 0, 4), ("F", 4, 5)]


def test_notes_on_a_grid_give_chords_beat_by_beat_and_the_mode() -> None:
    notes = []
    for bar in range(4):  # Am7 - D7 at 120 bpm, two beats each
        notes += [(bar * 2.0, 1.0, p) for p in (45, 60, 64, 67)]
        notes += [(bar * 2.0 + 1.0, 1.0, p) for p in (50, 66, 69, 72)]
    found = harmony_of_notes(notes, (0.0, 0.5))
    assert found is not None and found.key == "A dorian"
    assert found.progression_text() == " - ".join(["Am7", "D7"] * 4)
    assert found.lines() == [f"harmony: A dorian (fit {found.key_correlation:.2f}); chords: "
                             f"{found.progression_text()}"]
    assert harmony_of_notes([], None) is None


# --- chroma of audio --------------------------------------------------------------------


def note(midi: int, seconds: float = 1.0) -> np.ndarray:
    return sawtooth(440 * 2 ** ((midi - 69) / 12), seconds, 0.15)


def test_a_sawtooth_is_one_note_not_a_chord_of_its_overtones() -> None:
    heard = chroma(note(48), RATE)
    assert heard.notes == [48] and heard.bass == 0
    assert name_chord(heard.profile, heard.bass) is None


def test_three_sawtooths_are_their_chord_and_a_progression_is_heard() -> None:
    heard = chroma(note(57) + note(60) + note(64), RATE)
    assert sorted(heard.notes) == [57, 60, 64]
    found = name_chord(heard.profile, heard.bass)
    assert found is not None and found.name == "Am"
    sound = np.concatenate([note(60) + note(64) + note(67), note(53) + note(57) + note(60),
                            note(55) + note(59) + note(62) + note(65)])
    found_all = harmony(sound, RATE, [0.0, 1.0, 2.0], None)
    assert found_all is not None
    assert [c.chord for c in found_all.chords] == ["C", "F", "G7"]
    assert found_all.key_plain == "C major"


# --- tempo and the grid -----------------------------------------------------------------


@pytest.mark.parametrize("bpm", [97.0, 120.0, 128.0, 150.0])
def test_a_steady_beat_gives_its_tempo(bpm: float) -> None:
    found = tempo.estimate([i * 60 / bpm for i in range(16)])
    assert found is not None and found.bpm == pytest.approx(bpm, abs=0.1)
    assert found.strength > 0.9


@pytest.mark.parametrize("bpm", [66.0, 72.0, 174.0, 190.0])
def test_a_bare_pulse_far_from_120_is_its_tempo_or_its_double_or_half(bpm: float) -> None:
    # A pulse alone does not say whether it is the beat or every other beat: the tempo
    # nearer 120 is taken, and either is the pulse's.
    found = tempo.estimate([i * 60 / bpm for i in range(16)])
    assert found is not None
    assert min(abs(found.bpm / bpm - ratio) for ratio in (0.5, 1.0, 2.0)) < 0.002


def test_eighths_with_a_backbeat_are_heard_at_the_beat_not_twice_it() -> None:
    onsets = sorted({i * 0.25 for i in range(16)} | {i * 0.5 + 0.01 for i in range(8)})
    found = tempo.estimate(onsets)
    assert found is not None and found.bpm == pytest.approx(120.0, abs=1.0)


def test_too_few_onsets_give_no_tempo_and_no_grid() -> None:
    assert tempo.estimate([0.0, 0.5, 1.0]) is None
    assert tempo.fit([0.0, 0.5, 1.0], 120) is None
    assert rhythm([0.0, 0.5, 1.0], None) is None


@settings(max_examples=60, deadline=None)
@given(bpm=st.floats(80, 170), offsets=st.lists(st.floats(-0.012, 0.012), min_size=8,
                                                 max_size=24), phase=st.floats(0, 0.4))
def test_known_offsets_on_a_known_grid_are_given_back(bpm: float, offsets: list[float],
                                                      phase: float) -> None:
    beat = 60 / bpm
    onsets = [phase + i * beat + off for i, off in enumerate(offsets)]
    placed = tempo.fit(onsets, bpm, beat_at=phase)
    assert placed is not None and placed.name == "beats" and placed.phase_given
    assert placed.offsets == pytest.approx(offsets, abs=1e-9)
    # the furthest offset, with its sign (of two as far, either: float steps decide)
    assert abs(placed.worst) == pytest.approx(max(map(abs, offsets)), abs=1e-9)
    assert any(placed.worst == pytest.approx(o, abs=1e-9) for o in offsets)
    assert placed.median == pytest.approx(float(np.median(offsets)), abs=1e-9)


def test_the_grid_is_the_coarsest_subdivision_that_holds_the_onsets() -> None:
    rng = random.Random(2)
    sixteenths = [i * 0.125 + rng.uniform(-0.003, 0.003) for i in range(32) if i % 4 != 1]
    assert tempo.fit(sixteenths, 120).name == "sixteenths"  # type: ignore[union-attr]
    triplets = [i / 6 for i in range(24)]
    assert tempo.fit(triplets, 120).name == "triplets"  # type: ignore[union-attr]
    eighths = [i * 0.25 for i in range(16)]
    assert tempo.fit(eighths, 120).name == "eighths"  # type: ignore[union-attr]


def test_a_file_keeps_the_installations_tempo_only_when_it_plays_it() -> None:
    onsets = [i * 0.5 for i in range(8)]
    same = rhythm(onsets, Grid(120.0, None, "the installation's tempo"))
    assert same is not None and same[0].grid.startswith("the installation's tempo (120 bpm")
    other = rhythm(onsets, Grid(97.0, None, "the installation's tempo"))
    assert other is not None and other[0].grid.startswith("its own tempo (not the")


def test_a_slow_audio_clock_is_put_right_and_said() -> None:
    # A room whose audio ran 5 % slow: beats 0.5 s apart on the wall clock are 0.476 s
    # apart in its samples.
    onsets = [0.05 + i * 0.5 / 1.05 for i in range(8)]
    found = rhythm(onsets, Grid(120.0, 0.0525, "the installation's grid", clock=1.05))
    assert found is not None
    heard, (_, length) = found
    assert heard.tempo_bpm == pytest.approx(120.0, abs=0.2)
    assert abs(heard.worst_ms) < 0.5 and heard.audio_clock == 1.05
    assert length == pytest.approx(0.5 / 1.05)
    assert "audio ran 1.050 s of wall clock per second" in heard.lines()[0]


@pytest.mark.parametrize("wander_ms", [0.0, 3.0, 20.0])
def test_a_pulse_whose_onsets_wander_is_said_to_be_weak(wander_ms: float) -> None:
    rng = random.Random(7)
    onsets = [0.05 + i * 0.5 + rng.gauss(0, wander_ms / 1000) for i in range(16)]
    found = rhythm(onsets, Grid(120.0, 0.05, "the installation's grid"))
    assert found is not None
    heard = found[0]
    weak = "a weak pulse" in heard.lines()[0]
    assert weak == (heard.tempo_strength < 0.5), heard
    assert weak == (wander_ms > 10), heard  # steady or nearly: not weak; 20 ms: weak
