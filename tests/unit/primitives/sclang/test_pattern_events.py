"""The pattern-events records sclang's ScorchPatternEvents sends, read back."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.room.patterns import BEAT_TRUST, keep, onset_of, source_of
from scorch.notes.capture import Capture, place
from scorch.primitives.sclang.pattern_events import Batch, PatternEvent, parse_events
from scorch.state.tempo import Timeline

OFFSET = 1_700_000_000.0


def test_a_batch_gives_each_event_in_unix_time_with_its_notes_and_its_proxy() -> None:
    payload = (f"{OFFSET}\n"
               "10.5\t21\t0.25\t0.2\t60\tPdef acc\n"
               "10.75\t21.5\t0.5\t0.1\t60,64,67\tPdef acc\n"
               "11\t22\t0\t0\t\tTdef loop\n"
               "11.25\t\t0.1\t0.3\t72\t")  # played on a clock of its own: no beat
    batch = parse_events(payload)
    assert batch.dropped == 0
    assert batch.events == [
        PatternEvent("Pdef acc", OFFSET + 10.5, 0.25, 0.2, (60,), 21.0),
        PatternEvent("Pdef acc", OFFSET + 10.75, 0.5, 0.1, (60, 64, 67), 21.5),
        PatternEvent("Tdef loop", OFFSET + 11, 0.0, 0.0, (), 22.0),
        PatternEvent("", OFFSET + 11.25, 0.1, 0.3, (72,)),
    ]
    # a rest counts as an event; a player of no proxy has no last time to show
    assert batch.last_times() == {"Pdef acc": OFFSET + 10.75, "Tdef loop": OFFSET + 11}


def test_lines_that_do_not_fit_are_left_out_and_the_dropped_are_counted() -> None:
    payload = (f"{OFFSET}\n"
               "x\t\t0.25\t0.2\t60\tPdef acc\n"  # no time
               "1\t\tnan\t0.2\t60\tPdef acc\n"  # not finite
               "1\tinf\t0.25\t0.2\t60\tPdef acc\n"  # a beat not finite
               "1\t\t0.25\t0.2\t60,300,-1\tPdef acc\n"  # pitches out of MIDI's range
               "1\t\t0.25\t0.2\n"  # cut short
               "dropped\t12")
    batch = parse_events(payload)
    assert batch == Batch([PatternEvent("Pdef acc", OFFSET + 1, 0.25, 0.2, (60,))], 12)


def test_a_batch_without_its_clock_line_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_events("1\t2\t0.25\t0.2\t60\tPdef acc")


@given(st.text(max_size=300))
def test_any_payload_reads_as_a_batch_or_a_value_error(payload: str) -> None:
    try:
        batch = parse_events(payload)
    except ValueError:
        return
    assert all(0 <= p < 128 for e in batch.events for p in e.pitches)


def test_kept_notes_go_to_a_ring_per_pattern_in_order_with_their_velocity() -> None:
    capture = Capture(16)
    batch = parse_events(f"{OFFSET}\n"
                         "10.25\t\t0.5\t0.4\t64,67\tPdef acc\n"
                         "10\t\t0.5\t0.2\t60\tPdef acc\n"
                         "10.5\t\t0.5\t0.2\t\tPdef acc\n"
                         "10\t\t1\t0.1\t48\t")
    keep(capture, "hall", batch, shift=-OFFSET)
    assert sorted(capture.rings) == ["hall/Pdef acc", "hall/code"]
    acc = capture.rings[source_of("hall", "Pdef acc")].notes()
    assert [(n.onset, n.pitch, n.velocity) for n in acc] == [
        (10.0, 60, 64), (10.25, 64, 127), (10.25, 67, 127)]
    assert [n.pitch for n in capture.between(0, 100, ["hall/code"])] == [48]
    # notes kept whole sound until they end
    assert [n.pitch for n in capture.held(10.3)] == [48, 60, 64, 67]
    assert [n.pitch for n in capture.held(10.6)] == [48, 64, 67]
    assert capture.held(11.5) == []


def test_a_note_with_its_beat_on_the_grids_clock_is_kept_at_that_beats_time() -> None:
    # the clock a tenth of a millisecond ahead of the grid, as sclang's was measured
    grid = Timeline(120.0, 4, beat=0.0, at=0.0)
    capture = Capture(16)
    batch = parse_events(f"{OFFSET}\n"
                         "3.9999\t8\t0.1\t0.2\t36\tPdef kick\n"  # beat 8: bar 3's line
                         "5.7499\t11.5\t0.1\t0.2\t38\tPdef kick\n"
                         "7.1234\t\t0.1\t0.2\t40\tPdef kick\n")  # another clock: its time
    keep(capture, "hall", batch, shift=-OFFSET, grid=grid)
    onsets = [n.onset for n in capture.rings["hall/Pdef kick"].notes()]
    assert onsets == [grid.time_at(8), grid.time_at(11.5), pytest.approx(7.1234)]
    assert [place(t, grid) for t in onsets[:2]] == [(3, 1.0), (3, 4.5)]


def test_a_beat_far_from_its_time_is_a_clock_not_yet_on_the_grid_and_its_time_is_kept() -> None:
    grid = Timeline(120.0, 4, beat=0.0, at=0.0)
    far = PatternEvent("Pdef kick", OFFSET + 10.0, 0.1, 0.2, (36,), beat=4.0)  # 2 s from it
    near = replace(far, beat=20.0 + 0.9 * BEAT_TRUST * 2)  # within BEAT_TRUST of 10 s
    assert onset_of(far, -OFFSET, grid) == pytest.approx(10.0)
    assert onset_of(near, -OFFSET, grid) == grid.time_at(20.0 + 0.9 * BEAT_TRUST * 2)
    assert onset_of(near, -OFFSET, None) == pytest.approx(10.0)
