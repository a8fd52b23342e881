"""MIDI for the stage against real JACK MIDI ports and a real scsynth: no note lost, none stuck.

The JACK server here runs with realtime scheduling, as a stage machine's does
(``[audio] realtime = true``): without it, on a loaded machine, every JACK client
misses cycles and JACK drops their MIDI, which no receiver can get back. Its period
is 256 frames: at 64, a 20,000/s flood brings more events to a cycle than JACK's
MIDI port buffer holds, and the sending client loses some before any receiver sees
them (the router got 20,918-20,972 of 21,000 in runs here, a bare callback fewer). The
reference is a bare rtmidi callback on the same port in the same run.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import rtmidi

from actors.router.actor import MidiRouter
from actors.router.proxy import MidiRouterProxy
from midi.engine import midicps
from midi.io import Wake
from midi.io.backends.scorch_jack import JackInput
from midi.schema import MidiConfig
from tests.conftest import jack_name
from tests.support.harness import (
    MPE_DEF,
    PARAM_DEF,
    VOICE_DEF,
    Scsynth,
    compile_test_synthdefs,
    jack_for_clients,
    needs_tools,
    wait_for,
)
from tests.support.midi.devices import PAD_ID, FakeTargets, Hardware
from tests.support.midi.flood import PORT as FLOOD_PORT
from tests.support.midi.flood import FloodController

pytestmark = [pytest.mark.integration, needs_tools]

ASK = 5.0


@pytest.fixture(scope="module")
def jack() -> Iterator[str]:
    with jack_for_clients(jack_name("stage"), realtime=True, period=256) as name:
        yield name


@pytest.fixture(scope="module")
def lobby(jack: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scsynth]:
    server = Scsynth(jack, compile_test_synthdefs(tmp_path_factory.mktemp("defs")),
                     "scorchtest-stage")
    yield server
    server.close()


@pytest.fixture
def targets(lobby: Scsynth) -> FakeTargets:
    lobby.call("/n_free", PAD_ID)
    lobby.call("/g_freeAll", 1)
    lobby.call("/s_new", PARAM_DEF, PAD_ID, 1, 1, "cutoff", 1000.0, "gain", 0.0)
    lobby.sync()
    return FakeTargets({"lobby": lobby})


@pytest.fixture
def start(tmp_path: Path) -> Iterator:
    started: list[MidiRouterProxy] = []

    def make(targets: FakeTargets, **config: object) -> MidiRouterProxy:
        fields = {"backend": "jack", "virtual_port": "", **config}
        proxy = cast(MidiRouterProxy, MidiRouter.start(
            MidiConfig.model_validate(fields), targets, tmp_path / "state").proxy())
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.actor_ref.stop(timeout=ASK)


def stats(router: MidiRouterProxy) -> dict:
    return router.stats().get(timeout=ASK)  # type: ignore[no-any-return]


class BareCallback:
    """The reference: a bare rtmidi callback on the same port, counting what it gets."""

    def __init__(self, port: str) -> None:
        self.count = 0
        self.notes = [0, 0]
        self._midi = rtmidi.MidiIn(rtmidi.API_UNIX_JACK, name="barecallback")
        self._midi.set_callback(self._received)
        self._midi.open_port(self._midi.get_ports().index(port))

    def _received(self, event: tuple[list[int], float], _data: object) -> None:
        self.count += 1
        status = event[0][0] & 0xF0
        if status == 0x90:
            self.notes[0] += 1
        elif status == 0x80:
            self.notes[1] += 1

    def close(self) -> None:
        self._midi.close_port()
        self._midi.delete()


def probe(router: MidiRouterProxy, send, also=lambda: True) -> None:
    """Send a harmless CC until the router (and ``also``) got one: the connection is live."""
    for _ in range(100):
        received = stats(router)["received"]
        send([0xBF, 119, 0])
        try:
            wait_for(lambda r=received: stats(router)["received"] > r and also(), timeout=0.1)
            time.sleep(0.05)  # the other probes still in flight arrive
            return
        except AssertionError:
            continue
    raise AssertionError("nothing reached the router")


def test_a_flood_with_notes_between_loses_nothing_a_bare_callback_gets_and_leaves_no_voice(
    jack, lobby, targets, start
):
    router = start(targets, inputs=["floodhw"], controls=[
        {"cc": 1, "instance": "lobby", "node": "pad", "param": "cutoff", "range": [0, 127],
         "takeover": "immediate"}],
        keys=[{"port": "floodhw", "instance": "lobby", "synthdef": VOICE_DEF, "voices": 64}])
    before_synths = lobby.synths()
    with FloodController(jack) as controller:
        wait_for(lambda: FLOOD_PORT in router.ports().get(timeout=ASK)["inputs"])
        bare = BareCallback(FLOOD_PORT)
        try:
            probe(router, lambda m: controller.raw([m]), also=lambda: bare.count > 0)
            bare.count, bare.notes = 0, [0, 0]
            before = stats(router)
            flood = controller.flood(rate=20_000, seconds=1.0)
            wait_for(lambda: stats(router)["received"] - before["received"] >= flood.messages,
                     timeout=5.0)
            time.sleep(0.2)  # anything more (there should be nothing) would show now
            after = stats(router)
        finally:
            bare.close()
    got = after["received"] - before["received"]
    summary = (f"sent {flood.messages} in {flood.elapsed:.2f} s; router {got}, bare callback "
               f"{bare.count}; thinned {after['thinned'] - before['thinned']}")
    assert got == flood.messages, summary
    assert got >= bare.count, summary
    assert after["notes_on"] - before["notes_on"] == flood.notes, summary
    assert after["notes_off"] - before["notes_off"] == flood.notes, summary
    assert after["voices"] == 0
    wait_for(lambda: lobby.synths() == before_synths)
    wait_for(lambda: lobby.param(PAD_ID, "cutoff") == float(flood.last[1]))


def test_a_keyboard_unplugged_with_three_keys_held_releases_them_within_half_a_second(
    jack, lobby, targets, start
):
    router = start(targets, keys=[{"port": "stagekeys", "instance": "lobby",
                                   "synthdef": VOICE_DEF}])
    keyboard = Hardware("keys", client="stagekeys")
    try:
        wait_for(lambda: keyboard.name in router.ports().get(timeout=ASK)["inputs"])
        probe(router, lambda m: keyboard.send(*m))
        before = lobby.synths()
        for note in (60, 64, 67):
            keyboard.send(0x90, note, 100)
        wait_for(lambda: lobby.synths() == before + 3)
    finally:
        keyboard.unplug()
        unplugged = time.monotonic()
    wait_for(lambda: lobby.synths() == before, timeout=2.0, interval=0.005)
    took = time.monotonic() - unplugged
    assert took < 0.5, f"voices sounded {took:.3f} s after the keyboard went away"
    after = stats(router)
    assert after["voices"] == 0
    assert after["released_gone"] == 3


def test_a_router_that_stops_with_keys_held_and_the_pedal_down_leaves_no_voice(
    jack, lobby, targets, start
):
    """A reload that restarts MIDI, or shutdown: the next router would know none of them."""
    router = start(targets, keys=[{"port": "reloadkeys", "instance": "lobby",
                                   "synthdef": VOICE_DEF}])
    keyboard = Hardware("keys", client="reloadkeys")
    try:
        wait_for(lambda: keyboard.name in router.ports().get(timeout=ASK)["inputs"])
        probe(router, lambda m: keyboard.send(*m))
        before = lobby.synths()
        keyboard.send(0xB0, 64, 127)  # sustain pedal down
        for note in (60, 64):
            keyboard.send(0x90, note, 100)
        keyboard.send(0x80, 64, 0)  # sustained by the pedal
        wait_for(lambda: lobby.synths() == before + 2)
        router.actor_ref.stop(timeout=ASK)
        wait_for(lambda: lobby.synths() == before, timeout=2.0)
    finally:
        keyboard.unplug()


def test_max_hold_releases_a_voice_whose_key_stays_down(jack, lobby, targets, start):
    router = start(targets, keys=[{"port": "holdkeys", "instance": "lobby",
                                   "synthdef": VOICE_DEF, "max_hold": 0.4}])
    keyboard = Hardware("keys", client="holdkeys")
    try:
        wait_for(lambda: keyboard.name in router.ports().get(timeout=ASK)["inputs"])
        probe(router, lambda m: keyboard.send(*m))
        before = lobby.synths()
        keyboard.send(0x90, 60, 100)
        wait_for(lambda: lobby.synths() == before + 1)
        pressed = time.monotonic()
        wait_for(lambda: lobby.synths() == before, timeout=3.0, interval=0.005)
        held = time.monotonic() - pressed
        assert 0.3 < held < 1.0, f"released after {held:.3f} s, max_hold is 0.4"
        assert stats(router)["released_max_hold"] == 1
        keyboard.send(0x80, 60, 0)  # the key comes up at last: nothing left to release
        wait_for(lambda: stats(router)["notes_off"] >= 1)
        assert stats(router)["voices"] == 0
    finally:
        keyboard.unplug()


def test_an_mpe_zone_bends_one_note_and_not_its_neighbour(jack, lobby, targets, start):
    router = start(targets, keys=[{"port": "mpekeys", "instance": "lobby", "synthdef": MPE_DEF,
                                   "mpe": "lower", "mpe_bend_range": 48}])
    keyboard = Hardware("keys", client="mpekeys")
    try:
        wait_for(lambda: keyboard.name in router.ports().get(timeout=ASK)["inputs"])
        probe(router, lambda m: keyboard.send(*m))
        keyboard.send(0xB1, 74, 127)  # note 1's initial timbre, on its member channel 2
        keyboard.send(0x91, 60, 100)
        keyboard.send(0x92, 64, 100)  # its neighbour on member channel 3
        wait_for(lambda: len([n for n, d in lobby.group(1) if d == MPE_DEF]) == 2)
        voices = {round(lobby.param(n, "freq")): n for n, d in lobby.group(1) if d == MPE_DEF}
        low, high = voices[round(midicps(60))], voices[round(midicps(64))]
        assert lobby.param(low, "timbre") == 1.0
        keyboard.send(0xE1, 0x7F, 0x7F)  # channel 2 bends all the way up: 48 semitones
        keyboard.send(0xD2, 127)  # channel 3 presses
        wait_for(lambda: lobby.param(low, "freq") == pytest.approx(midicps(60 + 48), rel=1e-5))
        wait_for(lambda: lobby.param(high, "pressure") == 1.0)
        assert lobby.param(high, "freq") == pytest.approx(midicps(64), rel=1e-5)
        assert lobby.param(low, "pressure") == 0.0
        assert lobby.param(high, "timbre") == 0.5
        keyboard.send(0x81, 60, 0)
        keyboard.send(0x82, 64, 0)
        wait_for(lambda: not [n for n, d in lobby.group(1) if d == MPE_DEF])
    finally:
        keyboard.unplug()


def test_garbage_running_status_truncated_sysex_and_clock_floods_crash_and_stick_nothing(
    jack, lobby, targets, start
):
    router = start(targets, inputs=["floodhw"], clock_in="floodhw",
                   keys=[{"port": "floodhw", "instance": "lobby", "synthdef": VOICE_DEF}])
    before = lobby.synths()
    junk: list[list[int]] = []
    for i in range(300):
        note = 40 + i % 40
        junk += [
            [0x90, note, 100], [note, 90],  # a note, then running status (no status byte)
            [0xB0, 7], [0x90], [0xE0, 1],  # truncated
            [0x12, 0x34, 0x56], [0xFF, 0xFE], [0xF7],  # garbage
            [0xF0, *([i % 128] * 100), 0xF7], [0xF0, 1, 2],  # sysex, and one never closed
            [0xF8], [0xF8], [0xFB], [0xF2, 0x7F], [0xF8],  # clock without start, bad SPP
            [0x80, note, 0],
        ]
    # rtmidi's JACK backend holds what follows a SysEx without its F7 until an event ends
    # with F7, then hands it over as one SysEx, which the router unpacks: the next complete
    # SysEx closes the last one, whose note-off would otherwise stay inside rtmidi.
    junk.append([0xF0, 0x7D, 0xF7])
    with FloodController(jack) as controller:
        wait_for(lambda: FLOOD_PORT in router.ports().get(timeout=ASK)["inputs"])
        probe(router, lambda m: controller.raw([m]))
        base = stats(router)
        controller.raw(junk, spacing=0.00002)
        wait_for(lambda: stats(router)["notes_off"] - base["notes_off"] >= 300, timeout=10)
        after = stats(router)
        assert after["notes_on"] - base["notes_on"] == 300
        assert after["notes_off"] - base["notes_off"] == 300
        assert after["voices"] == 0
        assert after["errors"] > base["errors"]
        wait_for(lambda: lobby.synths() == before)
        # And it still plays: a note after all that sounds and ends.
        controller.raw([[0x90, 69, 100]])
        wait_for(lambda: lobby.synths() == before + 1)
        controller.raw([[0x80, 69, 0]])
        wait_for(lambda: lobby.synths() == before)


def take_until(port: JackInput, wake: Wake, count: int) -> list[list[int]]:
    """Take what ``port`` brings, woken by ``wake``, until ``count`` messages (or 5 s)."""
    got: list[list[int]] = []
    deadline = time.monotonic() + 5
    while len(got) < count and time.monotonic() < deadline:
        if select.select([wake.fd], [], [], 0.1)[0]:
            os.eventfd_read(wake.fd)
        got += [message for message, _ in port.take()]
    return got


def test_own_jack_input_takes_every_message_in_order_and_closes_under_traffic(jack: str) -> None:
    """scorch's JACK client wakes its reader, loses and reorders nothing, leaves clock and
    active sensing out unless asked; closed while a device floods it, the process lives
    (its callback is deactivated before its port goes, unlike rtmidi's backend)."""
    hardware = Hardware("scorchtest-jackin")
    wake = Wake()
    port = JackInput(hardware.name, "scorchtest-in", wake, jack, source=hardware.name)
    clocked = JackInput(hardware.name, "scorchtest-clock", wake, jack, timing=True,
                        source=hardware.name)
    flooding = threading.Event()
    flooder: threading.Thread | None = None
    try:
        for _ in range(50):  # a new connection takes effect on a later cycle
            hardware.send(0xBF, 119, 0)
            if take_until(port, wake, 1):
                break
        time.sleep(0.05)
        port.take(), clocked.take()
        sent = [[0xB0 | i % 16, i % 128, (i * 7) % 128] for i in range(2000)]
        for i, data in enumerate(sent):
            hardware.send(*data)
            if i % 100 == 0:
                hardware.send(0xF8)  # clock: only the clocked port takes it
                hardware.send(0xFE)  # active sensing: neither does
        hardware.send(0xF0, 0x7D, 1, 2, 0xF7)
        assert take_until(port, wake, len(sent) + 1) == [*sent, [0xF0, 0x7D, 1, 2, 0xF7]]
        assert port.dropped == 0
        taken = take_until(clocked, wake, len(sent) + 21)
        assert taken.count([0xF8]) == 20 and [0xFE] not in taken and len(taken) == len(sent) + 21

        def flood() -> None:
            while not flooding.is_set():
                hardware.send(0x90, 60, 1)

        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        time.sleep(0.05)
        port.close()
        port.close()  # twice: nothing
        assert port.take() == []
    finally:
        flooding.set()
        if flooder is not None:
            flooder.join()
        port.close()
        clocked.close()
        wake.close()
        hardware.unplug()
