"""MIDI clock out: 24 ticks per beat from the tempo, with start, stop, continue and position.

One thread per tempo scope (the installation's, or a group's own) sends to the
outputs of the ``[[midi.clock_out]]`` entries that follow it. Each tick's time
comes from the scope's :class:`~scorch.state.tempo.Timeline`, looked up again
for every tick, so a new tempo takes effect at the next tick and ticks stay on
the grid (they never drift: tick ``k`` is due when the grid reaches beat ``k/24``).
The thread waits on the tempo view, so a change wakes it at once, and sleeps the
last stretch with a 1 ns timer slack at realtime priority where allowed: a tick
leaves within tens of microseconds of its time on an idle machine.

Transport, per output: when the timeline plays and the device does not yet, the
thread sends the song position and continue (or start at position 0) just before
the tick on which that position falls, on a sixteenth; when it stops, stop and
the position where it stopped.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from midi import CONTINUE, PPQN, START, STOP, TICK, ClockOutConfig, song_position
from midi.io import OutputPort
from scorch.errors import MidiPortNotFound
from scorch.primitives.system import tighten_current_thread
from scorch.state import TempoView, Timeline

log = logging.getLogger(__name__)

#: Below this much time before a tick the thread stops waiting on the view and sleeps.
FINE = 0.002
#: Beats between the grid and the last tick beyond which the grid was moved, not late.
JUMP = 0.5
#: Python's thread switch interval while a clock runs: a tick waits at most this long for
#: the GIL (the default, 5 ms, would be jitter a device hears).
SWITCH_INTERVAL = 0.0005

#: Finds the open output for a clock's port pattern (None: not there now).
Lookup = Callable[[str], OutputPort | None]


@dataclass
class _Device:
    """One output a clock drives: its config, and whether it was told to play."""

    config: ClockOutConfig
    playing: bool = False
    origin: float = 0.0
    """The grid beat of song position 0 when it was told to play: another one means the
    transport was stopped and started again (or moved) between two ticks."""
    name: str | None = None
    """The output's name when last found (a new one starts its transport afresh)."""


@dataclass
class ClockStats:
    """What a clock thread did."""

    ticks: int = 0
    late: int = 0
    """Ticks that left more than 1 ms after their time."""
    lateness: list[float] = field(default_factory=list)
    """Seconds after its time each of the last ticks left (a ring of 4096)."""


class ClockOut:
    """The clock thread of one tempo scope."""

    def __init__(self, scope: str, clocks: list[ClockOutConfig], tempo: TempoView,
                 lookup: Lookup) -> None:
        self.scope = scope
        self._devices = [_Device(c) for c in clocks]
        self._tempo = tempo
        self._lookup = lookup
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"midi-clock-{scope or 'main'}",
                                        daemon=True)
        self.stats = ClockStats()

    def start(self) -> ClockOut:
        """Start sending."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sending; devices that play are told to stop."""
        self._halt.set()
        self._thread.join(timeout=2.0)
        for device in self._devices:
            if device.playing:
                self._send(device, [[STOP]])

    # -- the clock thread --------------------------------------------------------------

    def _run(self) -> None:
        _tighten_timing()
        last: int | None = None
        clock = time.monotonic
        while not self._halt.is_set():
            version = self._tempo.version
            line = self._tempo.get(self.scope)
            beat = line.beat_at(clock())
            if last is None or abs(beat - last / PPQN) > JUMP:
                tick = math.floor(beat * PPQN) + 1  # first, or the grid was moved
            else:
                tick = last + 1  # every tick, late ones too: a device counts them
            due = line.time_at(tick / PPQN)
            wait = due - clock()
            if wait > FINE:
                if self._tempo.wait(version, wait - FINE) != version:
                    continue  # a new tempo or position: recompute the tick
                if self._halt.is_set():
                    break
                wait = due - clock()
            if wait > 0:
                time.sleep(wait)
            self._tick(line, tick, clock)
            last = tick

    def _tick(self, line: Timeline, tick: int, clock: Callable[[], float]) -> None:
        beat = tick / PPQN
        for device in self._devices:
            messages = self._transport(device, line, beat) if device.config.transport else []
            self._send(device, [*messages, [TICK]])
        late = clock() - line.time_at(beat)
        stats = self.stats
        if len(stats.lateness) < 4096:
            stats.lateness.append(late)
        else:
            stats.lateness[stats.ticks % 4096] = late
        stats.ticks += 1
        if late > 0.001:
            stats.late += 1

    @staticmethod
    def _transport(device: _Device, line: Timeline, beat: float) -> list[list[int]]:
        """What goes before this tick for ``device``: start/continue with position, or stop."""
        if not line.playing:
            if not device.playing:
                return []
            device.playing = False
            return [[STOP], song_position(line.position)]
        position = beat - line.start
        stop: list[list[int]] = []
        if device.playing:
            if abs(line.start - device.origin) < 1e-9:
                return []
            # Stopped and started again within one tick: stop it at the position the
            # transport resumes from (the sixteenth it stopped in, or the top), which its
            # continue names again, on this tick or a later one. Or the grid moved under
            # it: the song runs on from where it is.
            device.playing = False
            restarting = position <= line.position + 1e-9
            stop = [[STOP], song_position(line.position if restarting else position)]
        sixteenths = position * 4
        # From where the transport resumes (not a sixteenth of the stretch before it, which
        # a continue from bar 3 also passes), on a sixteenth (to half a tick): a device
        # resumes there from the next tick on.
        half_tick = 1 / PPQN / 2
        if position < line.position - half_tick or \
                abs(sixteenths - round(sixteenths)) > 4 * half_tick:
            return stop
        device.playing, device.origin = True, line.start
        if round(sixteenths) == 0:
            return [*stop, [START]]
        return [*stop, song_position(round(sixteenths) / 4), [CONTINUE]]  # that sixteenth

    def _send(self, device: _Device, messages: list[list[int]]) -> None:
        port = self._lookup(device.config.port)
        if port is None:
            device.name, device.playing = None, False
            return
        if port.name != device.name:
            device.name, device.playing = port.name, False  # a new device: start it afresh
            if any(m[0] in (START, CONTINUE) for m in messages):
                device.playing = True
        try:
            for message in messages:
                port.send(message)
        except (MidiPortNotFound, RuntimeError, OSError, ValueError) as err:
            # closed under us by a rescan, or the device's driver failed: try again next tick
            log.debug("MIDI clock to %s: %s", device.config.port, err)
            device.playing = False


def _tighten_timing() -> None:
    """The clock thread: a short switch interval for the process, a precise sleep for it."""
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)
    tighten_current_thread()
