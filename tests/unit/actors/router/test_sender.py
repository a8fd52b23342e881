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
from pathlib import Path

import pytest

from actors.router.sender import CONFIRM_TIMEOUT, OscSender
from midi.actions import ReleaseVoice, SetParam, StartVoice
from scorch.primitives.osc import decode_packet, encode_message

REFUSED = ("127.0.0.1", 0)


@pytest.fixture
def room() -> Iterator[socket.socket]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(2.0)
    yield listener
    listener.close()


def received(listener: socket.socket) -> list[tuple[str, list[object]]]:
    """The messages of the next datagram, as (address, args)."""
    return [(m.address, list(m.args)) for m in decode_packet(listener.recv(65536))]


def confirm(listener: socket.socket) -> list[tuple[str, list[object]]]:
    """Read the next datagram and answer its ``/sync`` as scsynth does."""
    data, sender = listener.recvfrom(65536)
    messages = [(m.address, list(m.args)) for m in decode_packet(data)]
    for address, args in messages:
        if address == "/sync":
            listener.sendto(encode_message("/synced", args[0]), sender)
    return messages


def now() -> float:
    return time.monotonic_ns() * 1e-9


def test_a_refused_datagram_loses_that_message_and_nothing_else(room: socket.socket) -> None:
    lock = threading.Lock()
    sender = OscSender(lock, 0.0, lambda values: None)
    sender.start()
    address = room.getsockname()
    try:
        with lock:
            sender.apply([StartVoice(REFUSED, 5000, "sine", ()),
                          StartVoice(address, 5001, "sine", ("freq", 220.0))], now())
            # Released before any confirmation: the sender thread sends them later, the
            # refused one included (its start never reached a scsynth), and goes on.
            sender.apply([ReleaseVoice(REFUSED, 5000), ReleaseVoice(address, 5001)], now())
        assert received(room)[0][0] == "/s_new"
        assert received(room) == [("/n_set", [5001, "gate", 0.0])]
        assert sender.send_errors == 2
        with lock:
            sender.apply([StartVoice(address, 5002, "sine", ())], now())
        assert received(room)[0][0] == "/s_new"
    finally:
        sender.stop()


def test_a_start_asks_scsynth_to_confirm_it_and_its_release_waits_for_that(
    room: socket.socket
) -> None:
    lock = threading.Lock()
    sender = OscSender(lock, 0.0, lambda *value: None)
    sender.start()
    address = room.getsockname()
    try:
        with lock:
            sender.apply([StartVoice(address, 6000, "sine", ("freq", 220.0))], now())
            sender.apply([ReleaseVoice(address, 6000)], now())
        start, sync = received(room)  # one datagram: the start, then /sync of its node
        assert start == ("/s_new", ["sine", 6000, 0, 1, "freq", 220.0])
        assert sync == ("/sync", [6000])
        room.settimeout(0.2)
        with pytest.raises(TimeoutError):  # nothing before scsynth confirms the start
            room.recv(65536)
        room.settimeout(2.0)
        room.sendto(encode_message("/synced", 6000), sender._socket.getsockname())
        assert received(room) == [("/n_set", [6000, "gate", 0.0])]
        # A confirmed voice is released at once; a stray /synced changes nothing.
        with lock:
            sender.apply([StartVoice(address, 6001, "sine", ())], now())
        assert confirm(room)[1] == ("/sync", [6001])
        time.sleep(0.05)  # the confirmation is read
        with lock:
            sender.apply([ReleaseVoice(address, 6001)], now())
        assert received(room) == [("/n_set", [6001, "gate", 0.0])]
        assert (sender.held, sender.unconfirmed) == (1, 0)
    finally:
        sender.stop()


def test_a_start_never_confirmed_holds_its_release_the_timeout_at_most(
    room: socket.socket
) -> None:
    lock = threading.Lock()
    sender = OscSender(lock, 0.0, lambda *value: None)
    sender.start()
    address = room.getsockname()
    try:
        with lock:
            started = time.monotonic()
            sender.apply([StartVoice(address, 7000, "sine", ())], now())
            sender.apply([ReleaseVoice(address, 7000)], now())
        assert received(room)[0][0] == "/s_new"
        assert received(room) == [("/n_set", [7000, "gate", 0.0])]
        took = time.monotonic() - started
        assert CONFIRM_TIMEOUT - 0.01 <= took < CONFIRM_TIMEOUT + 1.0, took
        assert (sender.held, sender.unconfirmed) == (1, 1)
        # The answer arriving late sends nothing twice.
        room.sendto(encode_message("/synced", 7000), sender._socket.getsockname())
        room.settimeout(0.2)
        with pytest.raises(TimeoutError):
            room.recv(65536)
    finally:
        sender.stop()


def test_stop_sends_the_releases_still_held() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(2.0)
    lock = threading.Lock()
    sender = OscSender(lock, 0.0, lambda *value: None)
    sender.start()
    address = listener.getsockname()
    with lock:
        sender.apply([StartVoice(address, 8000, "sine", ()), ReleaseVoice(address, 8000)], now())
    sender.stop()
    assert received(listener)[0][0] == "/s_new"
    assert received(listener) == [("/n_set", [8000, "gate", 0.0])]
    listener.close()


def voluntary_switches(thread: threading.Thread) -> int:
    """How often ``thread`` has waited so far (Linux counts each wait that slept)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


def test_an_idle_sender_sleeps_until_a_value_wakes_it_then_reports_the_value() -> None:
    lock = threading.Lock()
    reported = threading.Event()
    values: list[tuple[str, str, str, float]] = []

    def report(instance: str, node: str, param: str, value: float) -> None:
        values.append((instance, node, param, value))
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
        with lock:
            sender.apply([SetParam("lobby", "pad", "cutoff", 0.5, None, None)], now())
        assert reported.wait(1.0)
        assert values == [("lobby", "pad", "cutoff", 0.5)]
    finally:
        sender.stop()
