"""The MIDI sender: a datagram the network refuses loses that message only; a release
waits for scsynth to confirm its voice's start.

A room on another host that cannot be reached (its network down) makes
``sendto`` fail; the other rooms, the next notes and the releases held back
must go on. Sending to port 0 on loopback is refused by the kernel itself
(EINVAL), so no packet leaves the machine. The rooms here are UDP sockets that
answer ``/sync`` as scsynth does, or do not answer at all.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from actors.router.sender import OscSender
from midi.actions import ReleaseVoice, SetParam, StartVoice
from scorch.primitives.osc import encode_message
from tests.support.midi.udp_room import datagram, nothing_comes, udp_room, voluntary_switches

REFUSED = ("127.0.0.1", 0)


@pytest.fixture
def room() -> Iterator[socket.socket]:
    with udp_room() as listener:
        yield listener


@pytest.fixture
def sender() -> Iterator[OscSender]:
    """A started sender; its engine lock is ``sender.lock``."""
    made = OscSender(threading.Lock(), 0.0, lambda *value: None)
    made.start()
    yield made
    made.stop()


def apply(sender: OscSender, *actions: object) -> None:
    """Hand ``actions`` to the hot path as a MIDI callback does: under the engine lock."""
    with sender.lock:
        sender.apply(list(actions), time.monotonic_ns() * 1e-9)  # type: ignore[arg-type]


def received(room: socket.socket) -> list[tuple[str, list[object]]]:
    return datagram(room)[0]


def test_a_refused_datagram_loses_that_message_and_nothing_else(
    room: socket.socket, sender: OscSender
) -> None:
    address = room.getsockname()
    apply(sender, StartVoice(REFUSED, 5000, "sine", ()),
          StartVoice(address, 5001, "sine", ("freq", 220.0)),
          # Released before any confirmation: the sender thread sends them later, the
          # refused one included (its start never reached a scsynth), and goes on.
          ReleaseVoice(REFUSED, 5000), ReleaseVoice(address, 5001))
    assert received(room)[0][0] == "/s_new"
    assert received(room) == [("/n_set", [5001, "gate", 0.0])]
    assert sender.send_errors == 2
    apply(sender, StartVoice(address, 5002, "sine", ()))
    assert received(room)[0][0] == "/s_new"


def test_a_voice_goes_through_the_voice_sender_its_release_held_until_confirmed(
    room: socket.socket, sender: OscSender
) -> None:
    address = room.getsockname()
    apply(sender, StartVoice(address, 6000, "sine", ("freq", 220.0)), ReleaseVoice(address, 6000))
    (start, sync), source = datagram(room)  # one datagram: the start, then /sync of its node
    assert start == ("/s_new", ["sine", 6000, 0, 1, "freq", 220.0])
    assert sync == ("/sync", [6000])
    assert nothing_comes(room)  # nothing before scsynth confirms the start
    room.sendto(encode_message("/synced", 6000), source)
    assert received(room) == [("/n_set", [6000, "gate", 0.0])]
    assert (sender.releases.held, sender.releases.unconfirmed) == (1, 0)
    assert sender.stats()["releases_held"] == 1


def test_stop_sends_the_releases_still_held(room: socket.socket) -> None:
    sender = OscSender(threading.Lock(), 0.0, lambda *value: None)
    sender.start()
    address = room.getsockname()
    apply(sender, StartVoice(address, 8000, "sine", ()), ReleaseVoice(address, 8000))
    sender.stop()
    assert received(room)[0][0] == "/s_new"
    assert received(room) == [("/n_set", [8000, "gate", 0.0])]


def test_an_idle_sender_sleeps_until_a_value_wakes_it_then_reports_the_value() -> None:
    lock = threading.Lock()
    reported = threading.Event()
    values: list[tuple[str, str, dict[str, float]]] = []

    def report(instance: str, node: str, params: dict[str, float]) -> None:
        values.append((instance, node, params))
        reported.set()

    sender = OscSender(lock, 0.0, report)
    sender.start()
    try:
        assert sender._thread is not None
        time.sleep(0.1)  # its first look at what to do
        before = voluntary_switches(sender._thread)
        time.sleep(0.5)
        # Nothing held back, started or to report: no wake-up (it woke every 20 ms).
        assert voluntary_switches(sender._thread) - before <= 1
        apply(sender, SetParam("lobby", "pad", "cutoff", 0.5, None, None),
              SetParam("lobby", "pad", "res", 0.25, None, None),
              SetParam("lobby", "pad", "cutoff", 0.75, None, None))
        assert reported.wait(1.0)
        # one report per node, with the last value of each param
        assert values == [("lobby", "pad", {"cutoff": 0.75, "res": 0.25})]
    finally:
        sender.stop()
