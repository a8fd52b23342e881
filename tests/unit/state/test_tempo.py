"""The beat grid: tempo changes without a jump, bar phase, the transport, the shared view."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.state.tempo import TempoView, Timeline, check_bpm, follow_external


def test_beats_and_times_follow_the_tempo_from_the_anchor():
    line = Timeline(120.0, 4, beat=8.0, at=100.0)
    assert line.beat_at(101.0) == 10.0
    assert line.time_at(12.0) == 102.0
    assert line.bar_phase(101.25) == pytest.approx(2.5)


def test_a_new_tempo_keeps_the_beat_where_it_is():
    line = Timeline(120.0, 4, beat=0.0, at=0.0).with_tempo(60.0, 3.0)
    assert line.beat_at(3.0) == 6.0
    assert line.beat_at(4.0) == 7.0


@given(st.lists(st.tuples(st.floats(20, 999), st.floats(0, 10)), max_size=20))
def test_no_sequence_of_tempo_changes_makes_the_beat_jump_or_go_back(changes):
    line = Timeline(120.0)
    t = 0.0
    for bpm, wait in changes:
        t += wait
        before = line.beat_at(t)
        line = line.with_tempo(bpm, t)
        assert line.beat_at(t) == pytest.approx(before, abs=1e-9)
        assert line.beat_at(t + 0.5) > line.beat_at(t)


def test_the_transport_starts_on_the_next_bar_and_continues_on_the_next_sixteenth():
    line = Timeline(120.0, 4, beat=0.0, at=0.0)
    stopped = line.stopped(1.1)  # beat 2.2
    assert not stopped.playing and stopped.song_position(5.0) == pytest.approx(2.2)
    resumed = stopped.started(2.0)  # beat 4.0, and a start needs LEAD: on 4.25
    # From the sixteenth it stopped in: what a song position pointer can say.
    assert resumed.playing and resumed.song_position(resumed.time_at(4.25)) == pytest.approx(2.0)
    again = line.stopped(0.0).started(0.3, position=0.0)  # beat 0.6: from the top on bar 2
    assert again.song_position(again.time_at(4.0)) == 0.0
    assert again.song_position(again.time_at(5.0)) == 1.0


def test_moving_the_grid_keeps_the_song_position_running():
    line = Timeline(120.0, 4, beat=0.0, at=0.0, start=0.0)
    moved = line.with_beat(16.0, 1.0)
    assert moved.beat_at(1.0) == 16.0 and moved.bar_phase(1.0) == 0.0
    assert moved.song_position(1.5) == pytest.approx(line.song_position(1.5))


@pytest.mark.parametrize("bpm", [19.9, 1000.0, float("nan"), float("inf")])
def test_tempos_outside_what_link_and_midi_clock_play_are_refused(bpm):
    with pytest.raises(ValueError, match="20 to 999 bpm"):
        check_bpm(bpm)


def test_a_reader_waiting_on_the_view_wakes_when_a_timeline_is_replaced():
    view = TempoView({"": Timeline(120.0)})
    seen = view.version
    woke: list[int] = []
    waiter = threading.Thread(target=lambda: woke.append(view.wait(seen, 5.0)))
    waiter.start()
    view.put("", Timeline(90.0))
    waiter.join(5.0)
    assert woke == [seen + 1]
    assert view.get().bpm == 90.0
    assert view.wait(view.version, 0.01) == view.version  # nothing new: times out
    with pytest.raises(KeyError):
        view.get("nogroup")


def test_a_clock_coming_in_starts_near_the_grids_beat_not_back_at_beat_zero():
    # An hour at 120 bpm: the grid is at beat 7200.3 when the drum machine starts.
    line = Timeline(120.0, 4, beat=7200.3, at=0.0, playing=False)
    started = follow_external(line, 120.0, at=0.0, playing=True, position=0.0)
    assert started.beat == pytest.approx(7200.0)  # the nearest bar line: 0.3 beats back
    assert started.song_position(0.0) == pytest.approx(0.0)
    # Each later beat of the clock is the anchor plus its song position.
    later = follow_external(started, 120.0, at=2.5, playing=True, position=5.0)
    assert later.beat == pytest.approx(7205.0) and later.song_position(2.5) == 5.0
    # The song restarts while playing (the grid is at 7206): anchored again on the nearest
    # bar line, half a bar away at most, not 7206 beats back.
    again = follow_external(later, 120.0, at=3.0, playing=True, position=0.0)
    assert again.beat in (pytest.approx(7204.0), pytest.approx(7208.0))
    assert again.bar_phase(3.0) == pytest.approx(0.0)
    assert again.song_position(3.0) == pytest.approx(0.0)
    # Stopped: the grid runs on, the position is kept.
    stopped = follow_external(again, 120.0, at=4.0, playing=False, position=2.0)
    assert not stopped.playing and stopped.song_position(4.0) == 2.0
    assert stopped.beat_at(4.0) == pytest.approx(again.beat_at(4.0))


@given(st.floats(0, 1e6), st.floats(0, 1000), st.integers(1, 16))
def test_a_start_moves_the_grid_by_at_most_half_a_bar(beat, position, bar):
    line = Timeline(100.0, bar, beat=beat, at=0.0, playing=False)
    started = follow_external(line, 100.0, at=0.0, playing=True, position=position)
    assert abs(started.beat - beat) <= bar / 2 + 1e-6 * max(1.0, beat)
    assert started.song_position(0.0) == pytest.approx(position, abs=1e-6 * max(1.0, beat))
