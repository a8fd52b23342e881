"""MIDI clock in: an external clock on a JACK MIDI port drives the installation's tempo."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import pytest
import rtmidi

from midi.clock import START, STOP, TICK
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.errors import InvalidRequest
from scorch.primitives.system.jackd import client_environment
from tests.conftest import MakeConfig
from tests.support.harness import room_clock, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def follower(make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra]
             ) -> Orchestra:
    return start_orchestra(make_config(
        "[instances.lobby]\n", tag="clockin",
        extra='[midi]\nbackend = "jack"\nrescan_interval = 0.1\n'
              'clock_in = "scorchtest-clocksrc"\n'))


class ExternalClock:
    """A drum machine sending MIDI clock at ``bpm`` from its own thread: its transport
    messages too, in turn with the ticks, as one device sends one stream."""

    def __init__(self, jack: str, bpm: float) -> None:
        with client_environment(jack):
            self.midi = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="scorchtest-drums")
            self.midi.open_virtual_port("scorchtest-clocksrc")
        self.bpm = bpm
        self._halt = threading.Event()
        self._queued: queue.SimpleQueue[list[int]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ExternalClock:
        self._thread.start()
        return self

    def _run(self) -> None:
        interval = 60.0 / self.bpm / 24
        due = time.monotonic()
        while not self._halt.is_set():
            due += interval
            time.sleep(max(0.0, due - time.monotonic()))
            while not self._queued.empty():
                self.midi.send_message(self._queued.get())
            self.midi.send_message([TICK])

    def send(self, *data: int) -> None:
        """Send ``data`` just before the next tick."""
        self._queued.put(list(data))

    def close(self) -> None:
        self._halt.set()
        self._thread.join(2)
        self.midi.close_port()
        self.midi.delete()


def test_midi_clock_in_drives_the_tempo_and_the_rooms(follower: Orchestra) -> None:
    drums = ExternalClock(follower.config.audio.jack_server, 150.0)
    try:
        wait_for(lambda: "scorchtest-clocksrc" in " ".join(follower.midi.ports()["inputs"]),
                 timeout=5)
        drums.send(START)
        drums.start()
        wait_for(lambda: follower.tempo.state()["bpm"] == pytest.approx(150.0, abs=0.5), timeout=10)
        state = follower.tempo.state()
        assert state["source"] == "midi clock in" and state["playing"] is True, state
        assert state["clock_in"]["bpm"] == pytest.approx(150.0, abs=0.5)
        wait_for(lambda: room_clock(follower, "lobby")[0] == pytest.approx(150.0, abs=0.5),
                 timeout=5)
        with pytest.raises(InvalidRequest, match="follows the MIDI clock"):
            follower.tempo.set(None, 90.0)
        drums.send(STOP)
        wait_for(lambda: follower.tempo.state()["playing"] is False, timeout=5)
    finally:
        drums.close()
