"""The router's ports end to end: output ports, resources across rescans, stopping, the
backends; JACK MIDI virtual ports as the hardware (the rig is this folder's conftest)."""

from __future__ import annotations

import os
import threading
import time

import pytest
import rtmidi

from midi.schema import KeyRoute
from tests.support.harness import (
    VOICE_DEF,
    needs_tools,
    wait_for,
)
from tests.support.midi.devices import Hardware
from tests.support.midi.router_rig import ASK, cutoff, wait_connected
from tests.support.midi.virtual_device import VirtualDevice

pytestmark = [pytest.mark.integration, needs_tools]


def test_send_reaches_a_named_output_port(targets, jack, router_factory):
    # the synth is a JACK client in a process of its own: one in the test's process was
    # dropped by jackd under load (it runs its callback on the test's interpreter lock)
    synth = VirtualDevice("fakesynth", "Hardware Synth In", jack)
    try:
        router = router_factory(targets, capture_notes=16)
        router.send("hardware synth", "note_on", channel=3, note=60, velocity=90).get(timeout=ASK)
        router.send("hardware synth", "cc", channel=1, control=7, value=100).get(timeout=ASK)
        router.send("hardware synth", "program", channel=16, program=5).get(timeout=ASK)
        router.send("hardware synth", "clock").get(timeout=ASK)
        router.send("hardware synth", "note_off", channel=3, note=60).get(timeout=ASK)
        synth.wait_for(lambda got: len(got) >= 5)
        assert synth.messages() == [bytes([0x92, 60, 90]), bytes([0xB0, 7, 100]),
                                    bytes([0xCF, 5]), bytes([0xF8]), bytes([0x82, 60, 64])]
        # what was sent out is kept as the output's notes, beside the inputs'
        rings = router.capture().get(timeout=ASK).rings
        (note,) = rings[f"out:{synth.output}"].notes()
        assert (note.pitch, note.velocity, note.channel) == (60, 90, 2)
    finally:
        synth.close()


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


def test_ports_are_looked_at_when_jack_says_one_came_or_went_not_on_a_timer(
        targets, jack, router_factory):
    """scorch's virtual input tells the router of every port registered or gone: a device
    plugged in is opened, and one unplugged is retired, at once, with a rescan a minute
    away; idle, the router does not look (a max_hold route brings the timer back)."""
    router = router_factory(targets, virtual_port="scorch-told", rescan_interval=60)
    wait_for(lambda: router.stats().get(timeout=ASK)["watch"]["told"] >= 1)  # its own port
    watch = router.stats().get(timeout=ASK)["watch"]
    assert watch["event_driven"] is True
    time.sleep(1.0)
    idle = router.stats().get(timeout=ASK)["watch"]
    assert idle["looks"] - watch["looks"] <= 1, (watch, idle)
    device = Hardware("Told Keys", client="toldkeys")
    try:
        wait_for(lambda: device.name in router.ports().get(timeout=ASK)["inputs"], timeout=1.0)
    finally:
        device.unplug()
    wait_for(lambda: device.name not in router.ports().get(timeout=ASK)["inputs"], timeout=1.0)
    assert router.stats().get(timeout=ASK)["ports_gone"] == 1
    router.actor_ref.stop(timeout=ASK)
    held = router_factory(targets, virtual_port="scorch-held", rescan_interval=60,
                          keys=[{"port": "nothing-here", "instance": "lobby",
                                 "synthdef": VOICE_DEF, "max_hold": 5.0}])
    start = held.stats().get(timeout=ASK)["watch"]["looks"]
    time.sleep(1.0)
    assert held.stats().get(timeout=ASK)["watch"]["looks"] - start >= 5


def test_one_jack_client_lists_both_sides_and_closes_with_the_last(jack):
    """Each client closed is a chance of jack2 issue #964: the lister is one client, not two."""
    import ctypes

    from midi.io import open_backend
    from scorch.primitives.system.jack_ports import loaded_libjack

    probe = Hardware("Lister probe", client="listerprobe")  # loads rtmidi's libjack
    lib = ctypes.CDLL(loaded_libjack())
    lib.jack_client_open.restype = ctypes.c_void_p
    lib.jack_client_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.jack_client_close.argtypes = [ctypes.c_void_p]
    lib.jack_free.argtypes = [ctypes.c_void_p]
    lib.jack_get_uuid_for_client_name.restype = ctypes.c_void_p
    lib.jack_get_uuid_for_client_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    receiver = rtmidi.MidiIn(rtmidi.API_UNIX_JACK, name="listerrx")
    receiver.open_virtual_port("in")
    own = lib.jack_client_open(b"scorchtest-uuidprobe", 0x01, ctypes.byref(ctypes.c_int(0)))
    try:
        assert own, "no JACK client for the probe"

        def known(name: str) -> bool:
            uuid = lib.jack_get_uuid_for_client_name(own, name.encode())
            if uuid:
                lib.jack_free(ctypes.c_void_p(uuid))
            return bool(uuid)

        backend = open_backend("rtmidi/jack", "scorchtest-lister", jack)
        scan_in, scan_out = backend.scan_in, backend.scan_out
        assert backend.api == "jack"
        assert known("scorchtest-lister-scan") and not known("scorchtest-lister-scan-01")
        assert probe.name in " ".join(scan_in.get_ports())  # what sends MIDI
        assert "listerrx:in" in scan_out.get_ports()  # what receives it
        assert not any("listerprobe" in p for p in scan_out.get_ports())
        scan_in.delete()
        scan_in.delete()  # twice is once
        assert scan_in.get_ports() == []
        assert "listerrx:in" in scan_out.get_ports()  # the other side still lists
        assert known("scorchtest-lister-scan")
        scan_out.delete()
        assert not known("scorchtest-lister-scan")
    finally:
        if own:
            lib.jack_client_close(own)
        receiver.delete()
        probe.unplug()
