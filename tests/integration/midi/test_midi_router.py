"""The router end to end: JACK MIDI virtual ports as the hardware, a real scsynth.

Each module run has its own JACK server and scsynth processes on free UDP ports.
"""

from __future__ import annotations

import math

import pytest

from midi.curves import make_curve
from midi.schema import ControlRoute
from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN
from tests.support.harness import (
    VOICE_DEF,
    needs_tools,
    wait_for,
)
from tests.support.midi.devices import Hardware
from tests.support.midi.router_rig import ASK, cutoff, wait_connected

pytestmark = [pytest.mark.integration, needs_tools]

def test_a_cc_moves_a_persistent_nodes_param_through_curve_and_range(
    targets, servers, hardware, router_factory
):
    route = {"cc": 74, "instance": "lobby", "node": "pad", "param": "cutoff",
             "range": [100.0, 10000.0], "curve": "exp", "port": "nanokontrol", "channel": 2}
    router = router_factory(targets, controls=[route])
    wait_connected(router, hardware)
    hardware.send(0xB1, 74, 127)
    wait_for(lambda: math.isclose(cutoff(servers["lobby"]), 10000.0, rel_tol=1e-5))
    hardware.send(0xB1, 74, 64)
    expected = make_curve("exp", 100.0, 10000.0).map(64 / 127)
    wait_for(lambda: math.isclose(cutoff(servers["lobby"]), expected, rel_tol=1e-5))
    hardware.send(0xB0, 74, 0)  # channel 1: not this route
    servers["lobby"].sync()
    assert math.isclose(cutoff(servers["lobby"]), expected, rel_tol=1e-5)
    wait_for(lambda: targets.desired.get(("lobby", "pad", "cutoff")) == pytest.approx(expected))


def test_a_note_plays_a_voice_and_its_note_off_releases_it(
    targets, servers, hardware, router_factory
):
    router = router_factory(targets, keys=[{"instance": "lobby", "synthdef": VOICE_DEF}])
    wait_connected(router, hardware)
    lobby = servers["lobby"]
    before = lobby.synths()
    hardware.send(0x90, 69, 100)
    wait_for(lambda: lobby.synths() == before + 1)
    (voice,) = [n for n, name in lobby.group(1) if name == VOICE_DEF]
    assert FIRST_NODE_ID <= voice < FIRST_NODE_ID + NODE_ID_SPAN
    assert lobby.param(voice, "freq") == pytest.approx(440.0)
    assert lobby.param(voice, "amp") == pytest.approx(100 / 127, rel=1e-5)
    hardware.send(0x80, 69, 0)
    wait_for(lambda: lobby.synths() == before)


def test_sustain_holds_the_release_until_the_pedal_lifts(
    targets, servers, hardware, router_factory
):
    router = router_factory(targets, keys=[{"instance": "lobby", "synthdef": VOICE_DEF}])
    wait_connected(router, hardware)
    lobby = servers["lobby"]
    before = lobby.synths()
    handled = router.stats().get(timeout=ASK)["handled"]
    hardware.send(0xB0, 64, 127)
    hardware.send(0x90, 60, 100)
    hardware.send(0x80, 60, 0)
    # Once the router has handled all three (and sent what it would), scsynth syncs past it.
    wait_for(lambda: router.stats().get(timeout=ASK)["handled"] >= handled + 3)
    lobby.sync()
    assert lobby.synths() == before + 1
    (voice,) = [n for n, name in lobby.group(1) if name == VOICE_DEF]
    assert lobby.param(voice, "gate") == 1.0
    hardware.send(0xB0, 64, 0)
    wait_for(lambda: lobby.synths() == before)


def test_a_controller_plugged_in_after_start_is_picked_up(targets, servers, router_factory):
    router = router_factory(
        targets,
        controls=[{"cc": 1, "port": "latecomer", "instance": "lobby", "node": "pad",
                   "param": "cutoff", "range": [0, 127]}],
    )
    assert router.ports().get(timeout=ASK)["missing"]["inputs"] == ["latecomer"]
    late = Hardware("Latecomer Fader", client="late")
    try:
        wait_connected(router, late)
        late.send(0xB0, 1, 42)
        wait_for(lambda: cutoff(servers["lobby"]) == 42.0)
    finally:
        late.unplug()


def test_a_controller_unplugged_and_plugged_back_works_again(
    targets, servers, router_factory
):
    route = {"cc": 1, "port": "replug", "instance": "lobby", "node": "pad", "param": "cutoff",
             "range": [0, 127], "takeover": "immediate"}
    router = router_factory(targets, controls=[route])
    device = Hardware("Replug", client="replug")
    wait_connected(router, device)
    device.send(0xB0, 1, 10)
    wait_for(lambda: cutoff(servers["lobby"]) == 10.0)
    device.unplug()
    wait_for(lambda: router.ports().get(timeout=ASK)["missing"]["inputs"] == ["replug"])
    device = Hardware("Replug", client="replug")
    try:
        wait_connected(router, device)
        device.send(0xB0, 1, 99)
        wait_for(lambda: cutoff(servers["lobby"]) == 99.0)
    finally:
        device.unplug()


def test_a_route_to_a_group_reaches_every_room(targets, servers, hardware, router_factory):
    router = router_factory(
        targets,
        controls=[{"cc": 7, "instance": "both", "node": "pad", "param": "cutoff",
                   "range": [0, 1270]}],
    )
    wait_connected(router, hardware)
    hardware.send(0xB0, 7, 50)
    for server in servers.values():
        wait_for(lambda s=server: cutoff(s) == 500.0)
    hardware.send(0xB0, 7, 127)
    for server in servers.values():
        wait_for(lambda s=server: cutoff(s) == 1270.0)


def test_a_value_for_a_restarting_room_goes_to_desired_state(
    targets, servers, hardware, router_factory
):
    targets.down.add("gallery")
    router = router_factory(
        targets,
        controls=[{"cc": 7, "instance": "*", "node": "pad", "param": "cutoff",
                   "range": [0, 127]}],
    )
    wait_connected(router, hardware)
    hardware.send(0xB0, 7, 33)
    wait_for(lambda: cutoff(servers["lobby"]) == 33.0)
    wait_for(lambda: targets.desired.get(("gallery", "pad", "cutoff")) == 33.0)
    assert cutoff(servers["gallery"]) == 1000.0


def test_bad_midi_and_unknown_ports_are_logged_and_survived(
    targets, servers, hardware, router_factory, caplog
):
    router = router_factory(
        targets,
        controls=[
            {"cc": 7, "instance": "lobby", "node": "pad", "param": "cutoff", "range": [0, 127]},
            {"cc": 8, "port": "no such device", "instance": "lobby", "node": "pad",
             "param": "cutoff"},
            {"cc": 9, "instance": "nowhere", "node": "pad", "param": "cutoff"},
        ],
    )
    wait_connected(router, hardware)
    for junk in ([0x40, 0x10], [0xB0, 7], [0x90, 0x80, 1], [0x12, 0x34, 0x56]):
        hardware.send(*junk)
    wait_for(lambda: router.stats().get(timeout=ASK)["errors"] == 4)
    for _ in range(200):
        hardware.send(0xF0, *([0x11] * 200), 0xF7)  # sysex flood
    # The fake device's own send buffer overflows under the flood: repeat until one gets by.
    wait_for(lambda: (hardware.send(0xB0, 7, 77), cutoff(servers["lobby"]) == 77.0)[1])
    stats = router.stats().get(timeout=ASK)
    assert stats["errors"] == 4
    ports = router.ports().get(timeout=ASK)
    assert ports["missing"]["inputs"] == ["no such device"]
    errors = {r["route"]["instance"]: r["error"] for r in router.routes().get(timeout=ASK)}
    assert "no room or group called 'nowhere'" in errors["nowhere"]


def test_run_time_routes_survive_a_restart_of_the_router(
    targets, servers, hardware, router_factory, tmp_path
):
    state = tmp_path / "persist"
    first = router_factory(targets, state)
    route = ControlRoute(cc=20, instance="lobby", node="pad", param="cutoff", range=(0, 127))
    route_id = first.map(route).get(timeout=ASK)
    first.actor_ref.stop(timeout=ASK)
    second = router_factory(targets, state)
    assert [r["id"] for r in second.routes().get(timeout=ASK)] == [route_id]
    wait_connected(second, hardware)
    hardware.send(0xB0, 20, 64)
    wait_for(lambda: cutoff(servers["lobby"]) == 64.0)
    second.unmap(route_id).get(timeout=ASK)
    assert second.routes().get(timeout=ASK) == []


def test_learn_returns_none_when_nothing_moves_in_time(targets, router_factory):
    router = router_factory(targets)
    assert router.learn(0.05).get(timeout=ASK).result(timeout=ASK) is None


def test_learning_leaves_the_router_answering_and_returns_the_first_control_moved(
    targets, hardware, router_factory
):
    router = router_factory(targets)
    wait_connected(router, hardware)
    learned = router.learn(30.0).get(timeout=ASK)  # armed once the ask returns
    router.rescan()
    router.refresh_targets()
    # A learn that held the actor would leave these queued behind it for 30 s.
    assert router.routes().get(timeout=1.0) == []
    assert hardware.name in router.ports().get(timeout=1.0)["inputs"]
    assert not learned.done()
    hardware.send(0xB4, 21, 5)
    hardware.send(0xB4, 22, 6)
    assert learned.result(timeout=ASK) == {
        "port": hardware.name, "channel": 5, "kind": "cc", "number": 21, "value": 5
    }


def test_learners_armed_together_all_get_the_event(targets, hardware, router_factory):
    router = router_factory(targets)
    wait_connected(router, hardware)
    first = router.learn(30.0).get(timeout=ASK)
    second = router.learn(30.0).get(timeout=ASK)
    hardware.send(0x90, 60, 100)
    assert first.result(timeout=ASK) == second.result(timeout=ASK) == {
        "port": hardware.name, "channel": 1, "kind": "note", "number": 60, "value": 100
    }


def test_stopping_while_learning_is_quick_and_ends_the_learn_with_none(
    targets, router_factory
):
    router = router_factory(targets)
    learned = router.learn(120.0).get(timeout=ASK)
    router.actor_ref.stop(timeout=ASK)
    assert learned.result(timeout=0) is None


def test_panic_releases_every_voice(targets, servers, hardware, router_factory):
    router = router_factory(targets, keys=[{"instance": "both", "synthdef": VOICE_DEF}])
    wait_connected(router, hardware)
    before = {n: s.synths() for n, s in servers.items()}
    for count, note in enumerate((60, 64, 67), start=1):
        # A JACK server without realtime scheduling may drop an event under load:
        # play each note until its voice sounds everywhere, then the next one.
        def sounding(count: int = count) -> bool:
            return all(s.synths() == before[n] + count for n, s in servers.items())

        for _attempt in range(5):
            hardware.send(0x90, note, 90)
            try:
                wait_for(sounding, timeout=1.0)
                break
            except AssertionError:
                continue
        assert sounding(), f"note {note} never sounded"
    assert router.panic().get(timeout=ASK) == 6
    for name, server in servers.items():
        wait_for(lambda s=server, n=name: s.synths() == before[n])
