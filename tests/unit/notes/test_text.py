"""The notes' text: names, lengths, one line per note by bar, and a summary within a budget."""

from __future__ import annotations

from scorch.notes.capture import Note
from scorch.notes.text import length_name, note_name, records, render, summary
from scorch.state.tempo import Timeline

LINE = Timeline(120.0, 4, beat=0.0, at=0.0)  # a beat is 0.5 s, a bar 2 s


def test_note_names_are_scientific_with_middle_c_as_c4():
    assert [note_name(p) for p in (60, 61, 69, 21, 127, 0)] == ["C4", "C#4", "A4", "A0",
                                                                "G9", "C-1"]


def test_lengths_are_fractions_of_a_whole_note():
    assert [length_name(b) for b in (0.5, 1.0, 1.5, 4.0, 8.0, 0.0)] == ["1/8", "1/4", "3/8",
                                                                        "1", "2", "1/64"]


def test_each_note_is_one_line_of_bar_beat_name_length_velocity_grouped_by_bar():
    notes = [Note(0.0, 0.25, 60, 96), Note(0.75, 0.5, 64, 80), Note(2.0, 1.0, 67, 70)]
    assert render(notes, LINE).splitlines() == [
        "bar 1",
        "  1|1      C4   1/8   v96",
        "  1|2.5    E4   1/4   v80",
        "bar 2",
        "  2|1      G4   1/2   v70",
    ]


def test_a_range_too_large_for_the_budget_is_summarised_within_it():
    notes = [Note(i * 0.25, 0.2, 60 + (i % 12), 60 + i % 40, 0, "kb") for i in range(400)]
    text = render(notes, LINE, budget=400)
    assert len(text) <= 400
    assert text.startswith("400 notes in 50 bar(s), bar 1 to 50")
    assert "range C4 to B4" in text and "density 8.0 notes per bar" in text
    assert "C:34 C#:34" in text
    assert len(render(notes, LINE, budget=40)) <= 40


def test_no_notes_say_so():
    assert render([], LINE) == "no notes" == summary([], LINE)


def test_records_give_each_note_with_its_place_name_and_length():
    [record] = records([Note(2.25, 0.25, 61, 90, 1, "kb")], LINE)
    assert record == {"onset": 2.25, "duration": 0.25, "pitch": 61, "velocity": 90,
                      "channel": 1, "source": "kb", "bar": 2, "beat": 1.5, "name": "C#4",
                      "length": "1/8"}
