"""The voice sender: one socket for the router's voices and the partner's answers, each
start confirmed by scsynth and its release held until then, the confirmations read by a
thread that sleeps while nothing is held.

The rooms are UDP sockets that answer ``/sync`` as scsynth does, or never (a lost
datagram, a stopped scsynth). Port 0 on loopback is refused by the kernel (EINVAL):
no packet leaves the machine.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from scorch.primitives.osc import encode_message
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.held import CONFIRM_TIMEOUT
from scorch.primitives.scsynth.voice_sender import VoiceSender, release_packet
from tests.support.midi.udp_room import datagram, nothing_comes, udp_room, voluntary_switches

REFUSED = ("127.0.0.1", 0)


@pytest.fixture
def room() -> Iterator[socket.socket]:
    with udp_room() as listener:
        yield listener


@pytest.fixture
def voices() -> Iterator[VoiceSender]:
    made = VoiceSender("test").start()
    yield made
    made.close()


def start(voices: VoiceSender, node: int, address: tuple[str, int]) -> None:
    with voices.lock:
        voices.start_voice(commands.s_new("sine", node), node, address, time.monotonic())


def release(voices: VoiceSender, node: int, address: tuple[str, int]) -> bool:
    with voices.lock:
        return voices.release(node, address)


def test_the_release_packet_is_the_n_set_gate_0_of_its_node() -> None:
    for node in (0, 1, 2**29 + 17, 2**31 - 1):
        assert release_packet(node) == commands.release(node)


def test_a_start_is_confirmed_and_a_release_before_that_waits_for_it(
    room: socket.socket, voices: VoiceSender
) -> None:
    address = room.getsockname()
    start(voices, 6000, address)
    assert not release(voices, 6000, address)  # held
    (begin, sync), source = datagram(room)  # one datagram: the start, then /sync of its node
    assert begin[0] == "/s_new" and begin[1][:2] == ["sine", 6000]
    assert sync == ("/sync", [6000])
    assert nothing_comes(room)
    room.sendto(encode_message("/synced", 6000), source)
    assert datagram(room)[0] == [("/n_set", [6000, "gate", 0.0])]
    # A confirmed voice is released at once.
    start(voices, 6001, address)
    room.sendto(encode_message("/synced", 6001), datagram(room)[1])
    deadline = time.monotonic() + 2
    while voices.releases.waiting():  # the confirmation is read
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert release(voices, 6001, address)
    assert datagram(room)[0] == [("/n_set", [6001, "gate", 0.0])]
    assert (voices.releases.held, voices.releases.unconfirmed) == (1, 0)


def test_a_start_never_confirmed_holds_its_release_the_timeout_at_most(
    room: socket.socket, voices: VoiceSender
) -> None:
    address = room.getsockname()
    started = time.monotonic()
    start(voices, 7000, address)
    release(voices, 7000, address)
    source = datagram(room)[1]
    assert datagram(room)[0] == [("/n_set", [7000, "gate", 0.0])]
    took = time.monotonic() - started
    assert CONFIRM_TIMEOUT - 0.01 <= took < CONFIRM_TIMEOUT + 0.5, took
    assert (voices.releases.held, voices.releases.unconfirmed) == (1, 1)
    room.sendto(encode_message("/synced", 7000), source)
    assert nothing_comes(room)  # the answer arriving late sends nothing twice


def test_a_dropped_voice_is_never_released(room: socket.socket, voices: VoiceSender) -> None:
    address = room.getsockname()
    start(voices, 7100, address)
    release(voices, 7100, address)
    source = datagram(room)[1]
    with voices.lock:
        voices.drop(7100)
    room.sendto(encode_message("/synced", 7100), source)
    assert nothing_comes(room, CONFIRM_TIMEOUT + 0.2)


def test_a_refused_datagram_is_counted_and_the_next_goes(
    room: socket.socket, voices: VoiceSender
) -> None:
    start(voices, 5000, REFUSED)
    voices.send(commands.n_free(1), REFUSED)
    start(voices, 5001, room.getsockname())
    assert datagram(room)[0][0][0] == "/s_new"
    assert (voices.send_errors, voices.sent) == (2, 1)


def test_close_sends_the_releases_still_held(room: socket.socket) -> None:
    voices = VoiceSender("closing").start()
    address = room.getsockname()
    start(voices, 8000, address)
    release(voices, 8000, address)
    voices.close()
    assert datagram(room)[0][0][0] == "/s_new"
    assert datagram(room)[0] == [("/n_set", [8000, "gate", 0.0])]


def test_the_reader_sleeps_while_nothing_is_held_and_wakes_for_a_held_release(
    room: socket.socket, voices: VoiceSender
) -> None:
    reader = voices._reader
    time.sleep(0.1)
    before = voluntary_switches(reader)
    time.sleep(0.5)
    assert voluntary_switches(reader) - before <= 1  # no timer while idle
    address = room.getsockname()
    start(voices, 9000, address)
    release(voices, 9000, address)  # nudges it: it must send this by the deadline
    datagram(room)
    assert datagram(room)[0] == [("/n_set", [9000, "gate", 0.0])]


def test_starts_and_releases_from_many_threads_each_reach_scsynth_once(
    room: socket.socket, voices: VoiceSender
) -> None:
    address = room.getsockname()
    room.settimeout(3.0)

    def play(first: int) -> None:
        for node in range(first, first + 50):
            start(voices, node, address)
            release(voices, node, address)

    threads = [threading.Thread(target=play, args=(10_000 + 100 * i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    starts, releases = set(), []
    while len(releases) < 200:
        messages, source = datagram(room)
        for address_, args in messages:
            if address_ == "/s_new":
                starts.add(args[1])
            elif address_ == "/sync":
                room.sendto(encode_message("/synced", args[0]), source)
            elif address_ == "/n_set":
                releases.append(args[0])
    for thread in threads:
        thread.join()
    assert sorted(releases) == sorted(starts) and len(set(releases)) == 200
