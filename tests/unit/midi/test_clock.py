"""MIDI clock: following an external clock (pure), and the clock-out thread's messages."""

from __future__ import annotations

import threading
import time

import pytest

from actors.router.clock import ClockOut
from midi.clock import CONTINUE, START, STOP, TICK, ClockFollower, song_position
from midi.schema import ClockOutConfig
from scorch.state.tempo import TempoView, Timeline


class FakeOutput:
    """Stands in for an open output: keeps what was sent, and when."""

    def __init__(self, name: str = "drums:in") -> None:
        self.name = name
        self.sent: list[tuple[float, list[int]]] = []
        self.lock = threading.Lock()

    def send(self, data: list[int]) -> None:
        with self.lock:
            self.sent.append((time.monotonic(), list(data)))

    def messages(self) -> list[list[int]]:
        with self.lock:
            return [m for _, m in self.sent]


def run_clock(view: TempoView, output: FakeOutput | None, transport: bool = True) -> ClockOut:
    config = ClockOutConfig(port="drums", transport=transport)
    return ClockOut("", [config], view, lambda _pattern: output).start()


def test_quick_stop_then_continue_resumes_from_the_sixteenth_it_stopped_in():
    now = time.monotonic()
    view = TempoView({"": Timeline(600.0, 4, beat=0.0, at=now)})  # a tick every 4 ms
    out = FakeOutput()
    clock = run_clock(view, out)
    try:
        time.sleep(0.3)
        for transport in ("stop", "continue"):
            t = time.monotonic()
            line = view.get()
            view.put("", line.stopped(t) if transport == "stop" else line.started(t))
        time.sleep(0.3)
    finally:
        clock.stop()
    got = [m for m in out.messages() if m != [TICK]]
    assert got[:2] == [[0xF2, 1, 0], [CONTINUE]]  # joined while playing, on a sixteenth
    assert got[-1] == [STOP]  # told to stop when the clock stopped
    stop = got.index([STOP])
    assert got[stop + 1][0] == 0xF2
    resume = len(got) - 1 - got[::-1].index([CONTINUE])
    assert resume > stop
    assert got[resume - 1] == got[stop + 1]  # from the sixteenth it stopped in


def ticks(follower: ClockFollower, bpm: float, count: int, start: float = 0.0,
          jitter: float = 0.0, seed: int = 1) -> list:
    import random

    rng = random.Random(seed)
    readings = []
    interval = 60.0 / bpm / 24
    for i in range(count):
        readings.append(follower.feed([TICK], start + i * interval + rng.uniform(0, jitter)))
    return readings


def test_the_tempo_is_fitted_over_the_ticks_even_through_a_jack_periods_jitter():
    follower = ClockFollower()
    ticks(follower, 120.0, 11)
    assert follower.bpm() is None  # too few ticks yet
    ticks(follower, 120.0, 48, start=0.5)
    assert follower.bpm() == pytest.approx(120.0, rel=1e-6)
    jittered = ClockFollower()
    ticks(jittered, 174.0, 96, jitter=0.00133)  # each tick late by up to one period
    assert jittered.bpm() == pytest.approx(174.0, rel=0.003)


def test_start_plays_from_the_next_tick_and_readings_come_on_each_beat_and_change():
    follower = ClockFollower()
    assert follower.feed([START], 0.0) is None
    first = follower.feed([TICK], 0.01)
    assert first is not None and first.playing and first.position == 0.0
    readings = [r for r in ticks(follower, 120.0, 48, start=0.03) if r is not None]
    assert [r.position for r in readings] == [1.0, 2.0]
    stop = follower.feed([STOP], 1.1)
    assert stop is not None and stop.playing is False and stop.position == pytest.approx(2.0)
    # A song position while stopped (16ths), then continue: the next tick plays from there.
    follower.feed(song_position(8.0), 1.2)
    follower.feed([CONTINUE], 1.3)
    resumed = follower.feed([TICK], 1.31)
    assert resumed is not None and resumed.playing and resumed.position == 8.0


def test_a_clock_without_start_gives_a_tempo_but_no_play_and_bad_bytes_change_nothing():
    follower = ClockFollower()
    for junk in ([], [0xF2], [0xF2, 0x80, 0x01], [0xF2, 1], [0xFB, 9]):
        follower.feed(junk, 0.0)
    ticks(follower, 90.0, 24)
    assert follower.bpm() == pytest.approx(90.0) and follower.playing is False
    assert follower.reading(1.0).position == 0.0
    # A long silence: the fit starts afresh rather than averaging across it.
    ticks(follower, 140.0, 12, start=10.0)
    assert follower.bpm() == pytest.approx(140.0)


def test_song_position_is_the_sixteenth_it_is_in_and_clamped_to_14_bits():
    assert song_position(2.99) == [0xF2, 11, 0]
    assert song_position(-1.0) == [0xF2, 0, 0]
    assert song_position(1e9) == [0xF2, 0x7F, 0x7F]


def test_clock_out_ticks_on_the_grid_and_a_new_tempo_takes_the_next_tick():
    now = time.monotonic()
    view = TempoView({"": Timeline(300.0, 4, beat=0.0, at=now)})  # 8.3 ms a tick
    out = FakeOutput()
    clock = run_clock(view, out, transport=False)
    try:
        time.sleep(0.5)
        changed = time.monotonic()
        view.put("", view.get().with_tempo(150.0, changed))
        time.sleep(0.5)
    finally:
        clock.stop()
    sent = [(t, m) for t, m in out.sent]
    assert all(m == [TICK] for _, m in sent)  # no transport for this output
    before = [t for t, _ in sent if t < changed]
    after = [t for t, _ in sent if t > changed + 0.05]
    gap = lambda times: (times[-1] - times[0]) / (len(times) - 1)  # noqa: E731
    assert gap(before) == pytest.approx(60 / 300 / 24, rel=0.02)
    assert gap(after) == pytest.approx(60 / 150 / 24, rel=0.02)
    assert clock.stats.ticks == len(sent)


def test_clock_out_waits_for_its_port_and_starts_a_device_that_comes_later():
    view = TempoView({"": Timeline(600.0, 4, beat=0.0, at=time.monotonic())})
    present: list[FakeOutput] = []
    clock = ClockOut("", [ClockOutConfig(port="drums")], view,
                     lambda _p: present[0] if present else None).start()
    try:
        time.sleep(0.1)
        assert clock.stats.ticks > 0  # it ran with nowhere to send
        present.append(FakeOutput())
        time.sleep(0.2)
    finally:
        clock.stop()
    got = [m for m in present[0].messages() if m != [TICK]]
    assert got[0][0] == 0xF2 and got[1] == [CONTINUE]
