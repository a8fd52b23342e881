"""An answer's notes on a room's scsynth: a release waits for scsynth to confirm the start.

The room is a UDP socket that answers ``/sync`` as scsynth does, or does not
answer at all (a lost datagram, a stopped scsynth). The held releases themselves are
the voice sender's (tests/unit/primitives/scsynth/test_voice_sender.py); these are
the answer's notes through it.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from actors.router.answer import FULL_AMP, ScsynthVoices
from scorch.notes.capture import Note
from scorch.primitives.osc import encode_message
from scorch.primitives.scsynth.held import CONFIRM_TIMEOUT
from tests.support.midi.udp_room import datagram, nothing_comes, udp_room

NOTE = Note(onset=0.0, duration=0.01, pitch=69, velocity=127)


@pytest.fixture
def room() -> Iterator[socket.socket]:
    with udp_room() as listener:
        yield listener


@pytest.fixture
def voices(room: socket.socket) -> Iterator[ScsynthVoices]:
    made = ScsynthVoices(lambda: room.getsockname(), "sine", slot=0)
    yield made
    made.close()


def test_a_note_ended_before_scsynth_confirmed_it_is_released_once_it_does(
    room: socket.socket, voices: ScsynthVoices
) -> None:
    node = voices.start(NOTE)
    voices.end(node)
    (start, sync), sender = datagram(room)
    assert start == ("/s_new", ["sine", node, 0, 1, "freq", 440.0, "amp",
                                pytest.approx(FULL_AMP), "gate", 1.0])
    assert sync == ("/sync", [node])
    assert nothing_comes(room)
    room.sendto(encode_message("/synced", node), sender)
    assert datagram(room)[0] == [("/n_set", [node, "gate", 0.0])]
    # A confirmed note is released at its end, at once.
    second = voices.start(NOTE)
    room.sendto(encode_message("/synced", second), datagram(room)[1])
    time.sleep(0.05)  # read by the confirmation thread
    voices.end(second)
    assert datagram(room)[0] == [("/n_set", [second, "gate", 0.0])]


def test_a_start_never_confirmed_holds_its_release_the_timeout_at_most(
    room: socket.socket, voices: ScsynthVoices
) -> None:
    started = time.monotonic()
    node = voices.start(NOTE)
    voices.end(node)
    datagram(room)
    assert datagram(room)[0] == [("/n_set", [node, "gate", 0.0])]
    took = time.monotonic() - started
    assert CONFIRM_TIMEOUT - 0.01 <= took <= CONFIRM_TIMEOUT + 0.5, took


def test_a_cut_frees_a_held_note_and_nothing_releases_it_later(
    room: socket.socket, voices: ScsynthVoices
) -> None:
    node = voices.start(NOTE)
    voices.end(node)
    sender = datagram(room)[1]
    voices.cut([node])
    assert datagram(room)[0] == [("/n_free", [node])]
    room.sendto(encode_message("/synced", node), sender)
    assert nothing_comes(room, CONFIRM_TIMEOUT + 0.3)


def test_close_sends_the_releases_still_held(room: socket.socket) -> None:
    voices = ScsynthVoices(lambda: room.getsockname(), "sine", slot=1)
    node = voices.start(NOTE)
    voices.end(node)
    voices.close()
    datagram(room)
    assert datagram(room)[0] == [("/n_set", [node, "gate", 0.0])]
