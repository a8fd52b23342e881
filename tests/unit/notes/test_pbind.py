"""A file's notes laid out in beats and written as a Pdef's code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.notes.capture import Note
from scorch.notes.pbind import MAX_NOTES, lay_out, pattern_name, pdef_code, start_beat
from scorch.state.tempo import Timeline

LINE = Timeline(120.0, 4, beat=0.0, at=0.0)  # a beat is 0.5 s


def test_chords_are_events_zero_beats_apart_and_the_score_ends_on_a_bar_line() -> None:
    notes = [Note(1.0, 0.5, 64, 64), Note(0.5, 0.25, 60, 127), Note(0.5, 1.0, 67, 127)]
    score = lay_out(notes, LINE)
    assert score.pitches == [None, 60, 67, 64]
    assert score.durs == [1.0, 0.0, 1.0, 2.0]  # rest to beat 1, chord, beat 2, to the bar's end
    assert score.sustains == [1.0, 0.5, 2.0, 1.0]
    assert score.amps[1] == pytest.approx(0.4) and score.amps[3] == pytest.approx(0.4 * 64 / 127)
    assert score.beats == 4 and score.notes == 3


def test_a_note_ending_past_a_bar_line_lengthens_the_score_by_a_bar() -> None:
    score = lay_out([Note(0.0, 2.25, 60, 100)], LINE)  # 4.5 beats
    assert score.pitches == [60] and score.beats == 8 and score.durs == [8.0]


def test_no_notes_or_too_many_are_refused_with_the_count() -> None:
    with pytest.raises(ValueError, match="no notes"):
        lay_out([], LINE)
    many = [Note(i * 0.01, 0.01, 60, 100) for i in range(MAX_NOTES + 1)]
    with pytest.raises(ValueError, match=f"{MAX_NOTES + 1} notes"):
        lay_out(many, LINE)


@pytest.mark.parametrize(("stem", "name"), [
    ("bach chorale 1", "bach_chorale_1"), ("2024-take", "m_2024_take"), ("", "midi"),
    ("---", "midi"), ("Été", "t"),
])
def test_pattern_names_are_sclang_symbols(stem: str, name: str) -> None:
    assert pattern_name(stem) == name


def test_the_code_checks_the_synthdef_and_quotes_it() -> None:
    score = lay_out([Note(0.0, 0.5, 60, 100)], LINE)
    code = pdef_code(score, "tune", "it's", quant=4, loop=True)
    assert code.startswith("if(SynthDescLib.global.at('it\\'s').isNil) { \\noSynthDef }")
    assert "Pdef(\\tune, Pn(Pbind(\\instrument, 'it\\'s', \\midinote, Pseq(#[60])" in code
    assert code.endswith(".play(quant: 4); TempoClock.default.nextTimeOnGrid(4) }")
    assert "Pdef(\\tune).stop; Pdef(\\tune, Pn(" in pdef_code(score, "tune", "x", quant=4,
                                                             loop=True, again=True)
    assert [start_beat(v) for v in ("132.0", "noSynthDef", None, "inf")] == [
        132.0, None, None, None]


@given(st.lists(st.tuples(st.floats(0, 60), st.floats(0.001, 8), st.integers(0, 127),
                          st.integers(1, 127)), min_size=1, max_size=60))
def test_events_add_up_to_the_score_and_keep_every_note(
        raw: list[tuple[float, float, int, int]]) -> None:
    notes = [Note(on, dur, pitch, vel) for on, dur, pitch, vel in raw]
    score = lay_out(notes, LINE)
    assert score.notes == len(notes) == sum(p is not None for p in score.pitches)
    assert sum(score.durs) == pytest.approx(score.beats)
    assert score.beats % 4 == 0 and all(d >= 0 for d in score.durs)
    assert sorted(p for p in score.pitches if p is not None) == sorted(n.pitch for n in notes)
