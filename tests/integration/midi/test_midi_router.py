"""The router end to end: JACK MIDI virtual ports as the hardware, a real scsynth.

Each module run has its own JACK server and scsynth processes on free UDP ports.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import rtmidi

from actors.router.actor import MidiRouter
from actors.router.proxy import MidiRouterProxy
from midi.curves import make_curve
from midi.schema import ControlRoute, KeyRoute, MidiConfig
from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN
from tests.conftest import jack_name
from tests.support.harness import (
    PARAM_DEF,
    VOICE_DEF,
    Scsynth,
    compile_test_synthdefs,
    jack_server,
    needs_tools,
    wait_for,
)
from tests.support.midi_devices import PAD_ID, FakeTargets, Hardware

pytestmark = [pytest.mark.integration, needs_tools]

ASK = 5.0
FAST_RESCAN = 0.05


@pytest.fixture(scope="module")
def jack() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp, jack_server(jack_name("midi")) as name:
        # rtmidi's JACK clients in this process pick the server from the environment.
        mp.setenv("JACK_DEFAULT_SERVER", name)
        mp.setenv("JACK_NO_START_SERVER", "1")
        yield name


@pytest.fixture(scope="module")
def defs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_test_synthdefs(tmp_path_factory.mktemp("defs"))


@pytest.fixture(scope="module")
def servers(jack: str, defs: Path) -> Iterator[dict[str, Scsynth]]:
    started: dict[str, Scsynth] = {}
    try:
        for name in ("lobby", "gallery"):
            started[name] = Scsynth(jack, defs, f"scorchtest-{name}")
        yield started
    finally:
        for server in started.values():
            server.close()


@pytest.fixture
def targets(servers: dict[str, Scsynth]) -> FakeTargets:
    for server in servers.values():
        server.call("/n_free", PAD_ID)
        server.call("/g_freeAll", 1)
        server.call("/s_new", PARAM_DEF, PAD_ID, 1, 1, "cutoff", 1000.0, "gain", 0.0)
        server.sync()
    return FakeTargets(servers)


@pytest.fixture
def hardware(jack: str) -> Iterator[Hardware]:
    device = Hardware("nanoKONTROL2 MIDI 1")
    yield device
    device.unplug()


def start_router(targets: FakeTargets, state: Path, **config: object) -> MidiRouterProxy:
    fields = {"backend": "jack", "rescan_interval": FAST_RESCAN, **config}
    ref = MidiRouter.start(MidiConfig.model_validate(fields), targets, state)
    return cast(MidiRouterProxy, ref.proxy())


@pytest.fixture
def router_factory(tmp_path: Path) -> Iterator:
    started: list[MidiRouterProxy] = []

    def make(targets: FakeTargets, state: Path | None = None, **config: object):
        proxy = start_router(targets, state or tmp_path / "state", **config)
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.actor_ref.stop(timeout=ASK)  # stopping a stopped actor is a no-op


def wait_open(router: MidiRouterProxy, name: str) -> None:
    wait_for(lambda: name in router.ports().get(timeout=ASK)["inputs"])


def wait_connected(router: MidiRouterProxy, device: Hardware) -> None:
    """Wait until the router has the port open and a message from it got through.

    JACK makes a new connection active on a later cycle than the one ``open_port``
    returns in, so the first message after opening can miss it. One probe at a time,
    each given 100 ms, so that none is still in flight when this returns.
    """
    wait_open(router, device.name)
    received = router.stats().get(timeout=ASK)["received"]
    for _ in range(50):
        device.send(0xBF, 119, 0)
        try:
            wait_for(
                lambda: router.stats().get(timeout=ASK)["received"] > received, timeout=0.1
            )
            return
        except AssertionError:
            continue
    raise AssertionError(f"nothing from {device.name} reached the router")


def cutoff(server: Scsynth) -> float:
    return server.param(PAD_ID, "cutoff")


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


def test_a_route_to_a_group_reaches_every_instance(targets, servers, hardware, router_factory):
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


def test_a_value_for_a_restarting_instance_goes_to_desired_state(
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
    assert "no instance or group called 'nowhere'" in errors["nowhere"]


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


def test_send_reaches_a_named_output_port(targets, jack, router_factory):
    received: list[list[int]] = []
    got = threading.Event()
    synth = rtmidi.MidiIn(rtmidi.API_UNIX_JACK, name="fakesynth")
    synth.ignore_types(timing=False)

    def on_message(event: tuple[list[int], float], _data: object) -> None:
        received.append(event[0])
        got.set()

    synth.set_callback(on_message)
    synth.open_virtual_port("Hardware Synth In")
    try:
        router = router_factory(targets)
        router.send("hardware synth", "note_on", channel=3, note=60, velocity=90).get(timeout=ASK)
        router.send("hardware synth", "cc", channel=1, control=7, value=100).get(timeout=ASK)
        router.send("hardware synth", "program", channel=16, program=5).get(timeout=ASK)
        router.send("hardware synth", "clock").get(timeout=ASK)
        wait_for(lambda: len(received) >= 4, timeout=2)
        assert received == [[0x92, 60, 90], [0xB0, 7, 100], [0xCF, 5], [0xF8]]
    finally:
        synth.close_port()
        synth.delete()


def jack_fds() -> int:
    """Count this process's fds on JACK: its shm and semaphores, its named sockets."""
    with open("/proc/net/unix") as table:
        jack_sockets = {f"socket:[{f[6]}]" for f in (line.split() for line in table)
                        if len(f) > 7 and "jack" in f[7]}
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since listed
            continue
        count += link.startswith("/dev/shm/jack") or link in jack_sockets
    return count


def native_threads() -> int:
    """Count threads no Python Thread owns: JACK's and rtmidi's, one set per client."""
    python = {t.native_id for t in threading.enumerate()}
    return sum(int(task) not in python for task in os.listdir("/proc/self/task"))


def router_resources() -> tuple[int, int, int]:
    """What a MIDI client opened per rescan would leak, and the router's own threads.

    Not the process's totals: finalisers of earlier tests and worker threads of
    other libraries change those at any time.
    """
    router = sum(t.name.startswith("midi-router") for t in threading.enumerate())
    return jack_fds(), native_threads(), router


def test_rescans_reuse_one_client_and_leak_nothing(targets, hardware, router_factory):
    router = router_factory(targets, rescan_interval=60)
    wait_connected(router, hardware)
    for _ in range(5):
        router.rescan().get(timeout=ASK)
    before = router_resources()
    assert before[0] > 0 and before[1] > 0  # the count sees the clients that are open
    for _ in range(200):
        router.rescan().get(timeout=ASK)
    # Waited for, not sampled: a thread that just ended leaves Python before the OS.
    wait_for(lambda: router_resources() == before, timeout=2)
    # Unplugging and plugging back closes the old client before opening a new one.
    for i in range(5):
        device = Hardware(f"Cycle {i}", client=f"cycle{i}")
        wait_for(lambda d=device: (router.rescan().get(timeout=ASK),
                                   d.name in router.ports().get(timeout=ASK)["inputs"])[1])
        device.unplug()
        wait_for(lambda d=device: (router.rescan().get(timeout=ASK),
                                   d.name not in router.ports().get(timeout=ASK)["inputs"])[1])
    wait_for(lambda: router_resources() == before, timeout=2)


def test_stopping_closes_every_port(targets, hardware, router_factory, jack):
    router = router_factory(targets, virtual_port="scorch-stop-test")
    wait_connected(router, hardware)
    probe = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="probe")
    try:
        assert any("scorch-stop-test" in p for p in probe.get_ports())
        router.actor_ref.stop(timeout=ASK)
        wait_for(lambda: not any("scorch" in p for p in probe.get_ports()))
    finally:
        probe.delete()


def test_key_route_model_round_trips_through_map(targets, router_factory):
    router = router_factory(targets)
    route_id = router.map(KeyRoute(id="bass", instance="lobby", synthdef=VOICE_DEF,
                                   notes=(0, 47))).get(timeout=ASK)
    assert route_id == "bass"
    (listed,) = router.routes().get(timeout=ASK)
    assert listed["route"]["notes"] == [0, 47]


def test_auto_backend_falls_back_to_jack_and_the_virtual_port_plays(
    targets, servers, router_factory
):
    router = router_factory(
        targets,
        backend="auto",
        virtual_port="scorch-virtual-test",
        controls=[{"cc": 3, "instance": "lobby", "node": "pad", "param": "cutoff",
                   "range": [0, 127]}],
    )
    ports = router.ports().get(timeout=ASK)
    assert ports["backend"] in ("alsa", "jack")  # ALSA's sequencer is absent on CI machines
    assert "scorch-virtual-test" in ports["inputs"]
    software = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="othersoftware")
    try:
        names = software.get_ports()
        software.open_port(next(i for i, n in enumerate(names) if "scorch-virtual-test" in n))
        # The connection is made when open_port returns, but JACK activates it on a later
        # cycle: repeat until a message gets through.
        wait_for(
            lambda: (software.send_message([0xB0, 3, 21]), cutoff(servers["lobby"]) == 21.0)[1]
        )
    finally:
        software.delete()
