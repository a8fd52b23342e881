"""MIDI through the whole tree: config routes, the router, real scsynth, and restores.

A JACK virtual port from python-rtmidi stands in for the hardware controller.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.errors import InvalidRequest, MidiUnavailable, RoomNotFound
from scorch.state.events import Kind
from tests.conftest import MakeConfig, node_param
from tests.support.midi.devices import Hardware

pytestmark = pytest.mark.integration

ROOMS = """
[instances.lobby]
group = "ground"
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.01 }
[instances.gallery]
group = "ground"
synthdefs = ["sine"]
[instances.gallery.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.01 }
"""

MIDI = """
[watchdog]
interval = 0.1
missed = 5
backoff_min = 0.3
[midi]
backend = "jack"
rescan_interval = 0.1
[[midi.controls]]
id = "cutoff-knob"
port = "scorchtest-knobs"
cc = 74
instance = "ground"
node = "drone"
param = "freq"
range = [100, 1000]
curve = "lin"
takeover = "immediate"
[[midi.keys]]
port = "scorchtest-keys"
instance = "lobby"
synthdef = "sine"
"""


@pytest.fixture
def orch(make_config: MakeConfig,
         start_orchestra: Callable[[Config], Orchestra]) -> Iterator[Orchestra]:
    orchestra = start_orchestra(make_config(ROOMS, extra=MIDI, tag="midiorch"))
    assert orchestra.midi.error is None
    yield orchestra


@pytest.fixture
def knobs(orch: Orchestra) -> Iterator[Hardware]:
    device = Hardware("scorchtest-knobs", "scorchtest-hw", orch.config.audio.jack_server)
    yield device
    device.unplug()


def freq(orch: Orchestra, name: str) -> float:
    osc = orch.doors[name].scsynth
    assert osc is not None
    return node_param(osc, orch.rooms.nodes(name)["drone"].node_id, "freq")


def turn_until(orch: Orchestra, device: Hardware, value: int, expected: float,
               names: list[str], timeout: float = 10.0) -> None:
    """Send the CC until every instance shows the value: a new port connects within a scan."""
    deadline = time.monotonic() + timeout
    while True:
        device.send(0xB0, 74, value)
        if all(abs(freq(orch, n) - expected) < 0.01 for n in names):
            return
        assert time.monotonic() < deadline, {n: freq(orch, n) for n in names}
        time.sleep(0.05)


def test_a_cc_moves_the_parameter_on_every_room_of_the_group(
    orch: Orchestra, knobs: Hardware
) -> None:
    turn_until(orch, knobs, 127, 1000.0, ["lobby", "gallery"])
    turn_until(orch, knobs, 0, 100.0, ["lobby", "gallery"])
    turn_until(orch, knobs, 64, 100 + 900 * 64 / 127, ["lobby", "gallery"])


def test_a_value_sent_while_scsynth_restarts_is_applied_when_it_is_back(
    orch: Orchestra, knobs: Hardware
) -> None:
    turn_until(orch, knobs, 0, 100.0, ["lobby"])
    since = orch.views["lobby"].events.mark()
    os.kill(orch.rooms.status("lobby").pids["scsynth"], signal.SIGKILL)
    assert orch.views["lobby"].events.wait_for(Kind.RESTARTING, since, 5.0) is not None
    knobs.send(0xB0, 74, 127)
    restored = orch.views["lobby"].events.wait_for(Kind.RESTORED, since, 15.0)
    assert restored is not None
    # The router reports applied values in batches; the restore may have raced it.
    deadline = time.monotonic() + 5
    while freq(orch, "lobby") != pytest.approx(1000.0):
        assert time.monotonic() < deadline, freq(orch, "lobby")
        time.sleep(0.05)
    assert orch.rooms.nodes("lobby")["drone"].params["freq"] == pytest.approx(1000.0)


def test_keys_play_a_voice_and_note_off_releases_it(orch: Orchestra) -> None:
    keys = Hardware("scorchtest-keys", "scorchtest-hw", orch.config.audio.jack_server)
    try:
        osc = orch.doors["lobby"].scsynth
        assert osc is not None
        base = osc.status().synths
        deadline = time.monotonic() + 10
        while osc.status().synths == base:  # the first notes may beat the connection
            assert time.monotonic() < deadline, "no voice started"
            keys.send(0x90, 60, 100)
            time.sleep(0.05)
            if osc.status().synths == base:
                keys.send(0x80, 60, 0)
        keys.send(0x80, 60, 0)
        deadline = time.monotonic() + 5
        while osc.status().synths != base:
            assert time.monotonic() < deadline, "the voice was not released"
            time.sleep(0.05)
    finally:
        keys.unplug()


def test_routes_added_at_run_time_are_listed_and_removed(orch: Orchestra) -> None:
    added = orch.midi.map({"port": "other", "cc": 1, "instance": "gallery", "node": "drone",
                           "param": "amp", "range": [0, 0.5]})
    ids = [r["id"] for r in orch.midi.routes()]
    assert added["id"] in ids and "cutoff-knob" in ids
    assert "warning" not in added  # gallery has a node named drone
    orch.midi.unmap(added["id"])
    assert added["id"] not in [r["id"] for r in orch.midi.routes()]
    with pytest.raises(InvalidRequest, match="cutoff-knob"):
        orch.midi.unmap("cutoff-knob")  # from config.toml: edit it there
    with pytest.raises(InvalidRequest, match="cc"):
        orch.midi.map({"port": "x", "cc": 500, "instance": "lobby", "node": "drone",
                       "param": "amp"})
    with pytest.raises(RoomNotFound, match="lobby, gallery"):
        orch.midi.map({"port": "x", "cc": 1, "instance": "nowhere", "node": "drone",
                       "param": "amp"})
    assert "backend" in orch.midi.ports()
    before = orch.midi.routes()
    with pytest.raises(InvalidRequest, match=r"node 'drone' on gallery .sine. has no param "
                       r"'cutof'; its params: "):
        orch.midi.map({"port": "x", "cc": 1, "instance": "gallery", "node": "drone",
                       "param": "cutof"})
    assert orch.midi.routes() == before  # refused, not stored



def test_without_a_usable_midi_backend_the_rooms_play_on_and_midi_says_why(
    make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra]
) -> None:
    orchestra = start_orchestra(make_config(ROOMS, extra='[midi]\nbackend = "coremidi"\n',
                                            tag="nomidi"))
    assert orchestra.midi.error is not None and "coremidi" in orchestra.midi.error
    assert [s.state for s in orchestra.rooms.statuses()] == ["READY", "READY"]
    with pytest.raises(MidiUnavailable, match="MIDI is off"):
        orchestra.midi.ports()


def test_midi_can_be_disabled_in_the_config(
    make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra]
) -> None:
    orchestra = start_orchestra(make_config(ROOMS, extra="[midi]\nenabled = false\n",
                                            tag="midioff"))
    assert orchestra.midi.error == "MIDI is disabled in the config ([midi] enabled = false)"
    with pytest.raises(MidiUnavailable, match="disabled"):
        orchestra.midi.routes()
    from scorch.api.local import LocalService

    started: Any = LocalService(orchestra).call("midi", {"action": "start", "backend": "jack"})
    assert orchestra.midi.error is None and started.result["started"] is True
    assert orchestra.midi.routes() == []  # the router runs: a tool switched MIDI on
    assert orchestra.midi.start()["started"] is True  # on already: nothing more to do


def test_learn_returns_the_next_control_moved_through_the_facade(
    orch: Orchestra, knobs: Hardware
) -> None:
    assert orch.midi.learn(0.1) is None  # nothing moved
    with ThreadPoolExecutor(1) as pool:
        learned = pool.submit(orch.midi.learn, 10.0)
        deadline = time.monotonic() + 10
        while not learned.done():  # a new port connects within a rescan
            assert time.monotonic() < deadline, "learn never saw the knob"
            knobs.send(0xB2, 21, 99)
            time.sleep(0.05)
        result = learned.result()
    assert result is not None
    assert (result["channel"], result["kind"], result["number"]) == (3, "cc", 21)
    assert "scorchtest-knobs" in result["port"]
    spec = {"instance": "lobby", "node": "drone", "param": "freq", "range": [300, 400],
            "takeover": "immediate"}
    with pytest.raises(InvalidRequest, match="leave cc out"):
        orch.midi.learn_and_map({**spec, "cc": 3}, 0.1)
    with ThreadPoolExecutor(1) as pool:
        mapped = pool.submit(orch.midi.learn_and_map, spec, 10.0)
        while not mapped.done():
            knobs.send(0xB2, 22, 0)
            time.sleep(0.05)
        route = mapped.result()
    assert route is not None and route["route"]["cc"] == 22 and route["route"]["channel"] == 3
    deadline = time.monotonic() + 10
    while abs(freq(orch, "lobby") - 400) > 0.01:  # the learned knob moves the spec's param
        assert time.monotonic() < deadline, freq(orch, "lobby")
        knobs.send(0xB2, 22, 127)
        time.sleep(0.05)
    orch.midi.unmap(route["id"])


def test_play_set_release_and_stop_keep_pickup_takeover_in_step(
    orch: Orchestra, knobs: Hardware
) -> None:
    """Values set outside MIDI reach the router, so a pickup knob never jumps from a stale one."""
    orch.midi.map({"id": "pickup-knob", "port": "scorchtest-knobs", "cc": 75,
                   "instance": "lobby", "node": "pad", "param": "freq", "range": [100, 1000],
                   "curve": "lin", "takeover": "pickup"})
    deadline = time.monotonic() + 10
    while not any("scorchtest-knobs" in p for p in orch.midi.ports()["inputs"]):
        assert time.monotonic() < deadline, "the knob's port never opened"
        time.sleep(0.05)
    osc = orch.doors["lobby"].scsynth
    assert osc is not None

    def turn(value: int) -> float:
        """Move the knob once, wait until the router handled it, return the pad's freq."""
        handled = orch.midi.stats()["handled"]
        knobs.send(0xB0, 75, value)
        until = time.monotonic() + 5
        while orch.midi.stats()["handled"] == handled:
            assert time.monotonic() < until, "the router never saw the knob"
            time.sleep(0.01)
        osc.sync()
        return node_param(osc, orch.rooms.nodes("lobby")["pad"].node_id, "freq")

    def position(value: int) -> float:
        return 100 + 900 * value / 127

    orch.rooms.play("lobby", "sine", {"freq": 550, "amp": 0.001}, node="pad")
    assert turn(10) == pytest.approx(550)  # far from the param: pickup waits
    assert turn(70) == pytest.approx(position(70), abs=0.01)  # crossed 550: picked up
    orch.rooms.play("lobby", "sine", {"freq": 200, "amp": 0.001}, node="pad")  # replaced
    assert turn(72) == pytest.approx(200)  # the router knows 200: no jump from 596
    orch.rooms.set("lobby", "pad", {"freq": 700})
    assert turn(74) == pytest.approx(700)
    orch.rooms.release("lobby", "pad")
    orch.rooms.play("lobby", "sine", {"freq": 300, "amp": 0.001}, node="pad")
    assert turn(76) == pytest.approx(300)
    orch.rooms.stop_sound("lobby")
    orch.rooms.play("lobby", "sine", {"amp": 0.001}, node="pad")  # the SynthDef's default freq
    default = orch.library.info("sine").param("freq").default
    assert turn(78) == pytest.approx(default)
