"""The MIDI sender: a datagram the network refuses loses that message only.

A room on another host that cannot be reached (its network down) makes
``sendto`` fail; the other rooms, the next notes and the releases held back
must go on. Sending to port 0 on loopback is refused by the kernel itself
(EINVAL), so no packet leaves the machine.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.router.sender import OscSender
from midi.actions import ReleaseVoice, SetParam, StartVoice
from scorch.primitives.osc import decode_message

REFUSED = ("127.0.0.1", 0)


@pytest.fixture
def room() -> Iterator[socket.socket]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(2.0)
    yield listener
    listener.close()


def received(listener: socket.socket) -> tuple[str, list[object]]:
    message = decode_message(listener.recv(65536))
    return message.address, list(message.args)


def test_a_refused_datagram_loses_that_message_and_nothing_else(room: socket.socket) -> None:
    lock = threading.Lock()
    sender = OscSender(lock, 0.0, lambda values: None)
    sender.start()
    address = room.getsockname()
    try:
        with lock:
            sender.apply([StartVoice(REFUSED, 5000, "sine", ()),
                          StartVoice(address, 5001, "sine", ("freq", 220.0))],
                         time.monotonic_ns() * 1e-9)
        assert received(room)[0] == "/s_new"
        # The releases come within the 25 ms a gate stays open: the sender thread sends
        # them later, the refused one included, and goes on.
        with lock:
            sender.apply([ReleaseVoice(REFUSED, 5000), ReleaseVoice(address, 5001)],
                         time.monotonic_ns() * 1e-9)
        assert received(room) == ("/n_set", [5001, "gate", 0.0])
        assert sender.send_errors == 2
        with lock:
            sender.apply([StartVoice(address, 5002, "sine", ())], time.monotonic_ns() * 1e-9)
        assert received(room)[0] == "/s_new"
    finally:
        sender.stop()


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
            sender.apply([SetParam("lobby", "pad", "cutoff", 0.5, None, None)],
                         time.monotonic_ns() * 1e-9)
        assert reported.wait(1.0)
        assert values == [("lobby", "pad", "cutoff", 0.5)]
    finally:
        sender.stop()
