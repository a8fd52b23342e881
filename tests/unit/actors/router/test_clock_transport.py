"""What a MIDI clock output's device is told around each tick: stop, continue, song position."""

from __future__ import annotations

from actors.router.clock import ClockOut, _Device
from midi.clock import CONTINUE, PPQN, START, STOP, song_position
from midi.schema import ClockOutConfig
from scorch.state.tempo import Timeline


def ticks(device: _Device, line: Timeline, first: int, last: int) -> list[tuple[int, list]]:
    """The transport messages of every tick in ``[first, last]`` that has some."""
    told = []
    for tick in range(first, last + 1):
        messages = ClockOut._transport(device, line, tick / PPQN)
        if messages:
            told.append((tick, messages))
    return told


def test_a_continue_resumes_where_it_stopped_not_on_a_sixteenth_before() -> None:
    """Stopped at the end of the fifth sixteenth and continued within one tick: the device
    is stopped there and resumes there, on the next sixteenth of the grid, not on the
    sixteenth its song passes on the way (a continue begins ahead on the grid)."""
    line = Timeline(bpm=120.0, at=0.0, beat=0.0, start=0.0)
    device = _Device(ClockOutConfig(port="x"), playing=True, origin=0.0)
    stopped = line.stopped(line.time_at(1.24))
    resumed = stopped.started(line.time_at(1.245))
    assert resumed.position == 1.0  # the sixteenth it stopped in
    begin = round((resumed.start + resumed.position) * PPQN)
    assert begin == 36  # the next sixteenth of the grid: beat 1.5
    told = ticks(device, resumed, 30, 48)
    assert told == [(30, [[STOP], song_position(1.0)]),
                    (begin, [song_position(1.0), [CONTINUE]])]


def test_a_start_from_the_top_waits_for_the_bar() -> None:
    line = Timeline(bpm=120.0, at=0.0, beat=0.0, start=0.0, playing=False, position=2.0)
    device = _Device(ClockOutConfig(port="x"))
    started = line.started(line.time_at(5.1), position=0.0)
    told = ticks(device, started, round(5.1 * PPQN), 12 * PPQN)
    assert told == [(8 * PPQN, [[START]])]
