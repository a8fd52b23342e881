"""The note ring: pairing, its bound, sounding and ranges, grid places, keeping across restarts."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.notes import capture
from scorch.notes.capture import Capture, Note, NoteRing, load, place
from scorch.state.tempo import Timeline


def test_a_note_on_and_its_note_off_make_one_note_with_onset_duration_and_velocity():
    ring = NoteRing("kb")
    ring.message(1.0, 0x92, 60, 100)
    ring.message(1.5, 0x82, 60, 0)
    assert ring.notes() == [Note(1.0, 0.5, 60, 100, 2, "kb")]


def test_a_note_on_with_velocity_zero_ends_the_note():
    ring = NoteRing("kb")
    ring.note_on(0.0, 0, 64, 90)
    ring.note_on(0.25, 0, 64, 0)
    assert ring.notes() == [Note(0.0, 0.25, 64, 90, 0, "kb")]
    assert ring.sounding(1.0) == []


def test_a_retriggered_key_ends_the_sounding_note_and_starts_another():
    ring = NoteRing("kb")
    ring.note_on(0.0, 0, 60, 80)
    ring.note_on(1.0, 0, 60, 90)
    ring.note_off(1.5, 0, 60)
    assert [(n.onset, n.duration, n.velocity) for n in ring.notes()] == [(0.0, 1.0, 80),
                                                                         (1.0, 0.5, 90)]


def test_a_release_without_a_press_and_other_messages_are_ignored():
    ring = NoteRing("kb")
    ring.note_off(0.0, 0, 60)
    ring.message(0.1, 0xB0, 64, 127)  # the sustain pedal is not applied
    ring.message(0.2, 0xE0, 0, 64)
    assert ring.notes() == [] and ring.count == 0


def test_the_same_pitch_on_two_channels_is_two_notes():
    ring = NoteRing("kb")
    ring.note_on(0.0, 0, 60, 80)
    ring.note_on(0.1, 1, 60, 70)
    ring.note_off(0.5, 1, 60)
    assert [(n.channel, n.duration) for n in ring.notes()] == [(1, pytest.approx(0.4))]
    assert [(n.channel, n.pitch) for n in ring.sounding(0.6)] == [(0, 60)]
    assert ring.sounding(0.6)[0].duration == pytest.approx(0.6)


@given(st.integers(1, 20), st.integers(0, 60))
def test_the_ring_keeps_exactly_the_last_size_notes(size, played):
    ring = NoteRing("kb", size)
    for i in range(played):
        ring.note_on(float(i), 0, i % 128, 64)
        ring.note_off(i + 0.5, 0, i % 128)
    kept = ring.notes()
    assert [n.onset for n in kept] == [float(i) for i in range(max(0, played - size), played)]
    assert ring.count == played


def test_a_ring_holds_at_least_one_note():
    with pytest.raises(ValueError):
        NoteRing("kb", 0)


def test_between_gives_the_notes_starting_in_the_half_open_range_in_onset_order():
    ring = NoteRing("kb")
    for onset, pitch in [(0.0, 60), (1.0, 62), (2.0, 64), (3.0, 65)]:
        ring.note_on(onset, 0, pitch, 64)
    for onset, pitch in [(3.5, 65), (2.5, 64), (1.5, 62), (0.5, 60)]:  # released in reverse
        ring.note_off(onset, 0, pitch)
    assert [n.pitch for n in ring.between(1.0, 3.0)] == [62, 64]


def test_times_are_placed_on_the_grid_in_bars_and_beats_from_one():
    line = Timeline(120.0, 4, beat=8.0, at=10.0)  # bar 3 starts at 10 s, a beat is 0.5 s
    assert place(10.0, line) == (3, 1.0)
    assert place(10.75, line) == (3, pytest.approx(2.5))
    assert place(12.0, line) == (4, 1.0)
    assert place(9.5, line) == (2, 4.0)
    assert place(10.0, Timeline(90.0, 3, beat=6.0, at=10.0)) == (3, 1.0)


@given(st.integers(0, 10_000), st.integers(1, 7), st.floats(-4e-4, 4e-4),
       st.floats(30.0, 300.0))
def test_a_downbeat_a_hair_off_its_bar_line_is_beat_1_of_its_bar_never_beat_5_before(
        bar: int, beats_per_bar: int, off: float, bpm: float):
    line = Timeline(bpm, beats_per_bar, beat=0.0, at=0.0)
    where = place(line.time_at(bar * beats_per_bar + off), line)
    assert where == (bar + 1, 1.0)


def test_a_saved_ring_loads_with_its_notes_moved_onto_the_new_clock(tmp_path: Path):
    ring = NoteRing("in/kb 1", 8)
    ring.note_on(100.0, 3, 67, 77)
    ring.note_off(100.25, 3, 67)
    path = ring.save(tmp_path, clock=(101.0, 5000.0))
    # the next process started later: its monotonic 5.0 is wall 5100.0 (100 s after saving)
    again = load(path, 8, clock=(5.0, 5100.0))
    assert again.source == "in/kb 1"
    [note] = again.notes()
    assert note.onset == pytest.approx(100.0 - 101.0 + 5.0 - 100.0)
    assert note[1:] == (0.25, 67, 77, 3, "in/kb 1")


def test_a_torn_last_line_is_skipped_on_load(tmp_path: Path):
    ring = NoteRing("kb")
    ring.note_on(0.0, 0, 60, 64)
    ring.note_off(1.0, 0, 60)
    path = ring.save(tmp_path, clock=(0.0, 0.0))
    path.write_text(path.read_text() + '[1.0, 0.5, 6', encoding="utf-8")
    assert [n.pitch for n in load(path, clock=(0.0, 0.0)).notes()] == [60]


def test_a_capture_keeps_a_ring_per_source_and_restores_them_all(tmp_path: Path):
    capture = Capture(size=4)
    capture.ring("a").note_on(0.0, 0, 60, 64)
    capture.ring("a").note_off(1.0, 0, 60)
    capture.ring("b").note_on(0.5, 0, 72, 64)
    capture.ring("b").note_off(0.75, 0, 72)
    capture.ring("b").note_on(2.0, 0, 74, 64)
    assert [n.pitch for n in capture.between(0.0, 5.0)] == [60, 72]
    assert [n.pitch for n in capture.between(0.0, 5.0, ["b", "nobody"])] == [72]
    assert [n.pitch for n in capture.sounding(2.5)] == [74]
    capture.save(tmp_path, clock=(0.0, 0.0))
    again = Capture.load(tmp_path, 4, clock=(0.0, 0.0))
    assert sorted(again.rings) == ["a", "b"]
    assert again.between(0.0, 5.0) == capture.between(0.0, 5.0)
    assert Capture.load(tmp_path / "none").rings == {}


def test_feeding_a_full_ring_keeps_its_memory_bounded():
    ring = NoteRing("kb", 64)

    def feed(pairs: int) -> None:
        for i in range(pairs):
            ring.message(i * 0.01, 0x90, 36 + i % 48, 100)
            ring.message(i * 0.01 + 0.005, 0x80, 36 + i % 48, 0)

    def held() -> int:
        # Only what the capture module holds: other threads of the test process (a
        # server another test left winding down) allocate meanwhile too.
        only = [tracemalloc.Filter(True, capture.__file__)]
        return sum(t.size for t in tracemalloc.take_snapshot().filter_traces(only).traces)

    feed(1000)
    tracemalloc.start()
    try:
        before = held()
        feed(10_000)
        grown = held() - before
    finally:
        tracemalloc.stop()
    assert grown < 4096  # 10,000 notes kept would be about a megabyte
    assert ring.count == 11_000 and len(ring.notes()) == 64


@given(st.integers(1, 12), st.integers(0, 40), st.integers(0, 40))
def test_since_gives_exactly_the_notes_finished_after_a_count_that_are_still_kept(
        size: int, first: int, then: int) -> None:
    ring = NoteRing("keys", size)
    for i in range(first):
        ring.add(Note(float(i), 0.5, 60, 90))
    seen = ring.count
    for i in range(first, first + then):
        ring.add(Note(float(i), 0.5, 61, 90))
    fresh = ring.since(seen)
    assert [n.onset for n in fresh] == [float(i) for i in range(first, first + then)][-size:]
    assert ring.since(ring.count) == []
    assert ring.since(-5) == ring.notes()  # a count from before the ring began: all kept


def test_what_scorch_played_is_told_from_what_the_inputs_played() -> None:
    assert capture.is_input("fakehw:nanoKONTROL2 MIDI 1") and capture.is_input("roomy")
    assert not capture.is_input(capture.ROOM + "lobby")
    assert not capture.is_input(capture.OUTPUT + "synth:in")
