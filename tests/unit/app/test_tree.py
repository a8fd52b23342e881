"""The tree's asks and its one wait.

A late answer and a dead actor become scorch's errors, naming the room; a call
waits for a booting room or for scorch's start within its own timeout, and then
says BOOTING with the room and its phase.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pykka
import pytest

from actors.room.proxy import RoomProxy
from scorch.app.tree import Tree
from scorch.config.installation import parse_config
from scorch.errors import Booting, MidiUnavailable, RoomNotFound, RoomNotReady
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import State

CONFIG = """
[instances.lobby]
[instances.attic]
"""


class Room(pykka.ThreadingActor):
    """Stands for an Room: ``boot`` answers once the test lets it."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def boot(self) -> None:
        self.release.wait(5.0)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Tree, threading.Event]]:
    tree = Tree(parse_config(CONFIG, tmp_path / "config.toml"), SynthDefLibrary(tmp_path))
    release = threading.Event()
    ref = Room.start(release)
    tree.rooms = {"lobby": cast(RoomProxy, ref.proxy())}
    yield tree, release
    release.set()
    ref.stop()


def test_an_ask_answered_in_time_returns_the_answer(tree: tuple[Tree, threading.Event]) -> None:
    rooms, release = tree
    release.set()
    assert rooms.ask("lobby", lambda p: p.boot(), timeout=5.0) is None


def test_an_ask_not_answered_in_time_says_which_room_and_its_state(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    with pytest.raises(RoomNotReady, match=r"'lobby' did not answer within 0.05 s "
                                               r"\(state STOPPED\)"):
        rooms.ask("lobby", lambda p: p.boot(), timeout=0.05)


def test_an_ask_to_a_stopped_actor_says_the_room_is_not_running(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, release = tree
    release.set()
    rooms.rooms["lobby"].actor_ref.stop()
    with pytest.raises(RoomNotReady, match="'lobby' is not running"):
        rooms.ask("lobby", lambda p: p.boot(), timeout=5.0)


def test_a_room_without_an_actor_or_a_name_is_refused(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    with pytest.raises(RoomNotReady, match="'attic' is not running: scorch is not started"):
        rooms.ask("attic", lambda p: p.boot())
    with pytest.raises(RoomNotFound):
        rooms.ask("cellar", lambda p: p.boot())
    with pytest.raises(MidiUnavailable, match="MIDI is not started"):
        rooms.midi()


# --- await_ready: the one wait for rooms and for scorch's start ----------------------------


def booting(tree: Tree, name: str, **fields: object) -> None:
    tree.views[name].update(state=State.BOOTING, reason="scorch is starting", **fields)


def test_a_call_waits_for_a_booting_room_and_goes_on_once_it_is_ready(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    booting(rooms, "lobby")
    ready = threading.Timer(0.05, rooms.views["lobby"].update, kwargs={"state": State.READY})
    ready.start()
    rooms.await_ready(["lobby"], time.monotonic() + 10.0, "play")
    assert rooms.views["lobby"].snapshot.state == State.READY
    ready.join()


def test_a_call_whose_own_timeout_ends_first_says_booting_with_the_room_and_its_phase(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    booting(rooms, "lobby", scsynth_pid=4242, sclang_state="starting")
    with pytest.raises(Booting) as raised:
        rooms.await_ready(["attic", "lobby"], time.monotonic() + 0.05, "listen")
    message = str(raised.value)
    assert message.startswith("room 'lobby' is BOOTING (scsynth up, sclang starting): "
                              "listen waited 0.")
    assert "stopped" not in message
    booting(rooms, "lobby", scsynth_pid=None, sclang_state="down")
    with pytest.raises(Booting, match=r"'lobby' is BOOTING \(starting scsynth; scorch is "):
        rooms.await_ready(["lobby"], time.monotonic() + 0.01, "play")


def test_code_waits_for_sclang_where_sound_alone_does_not(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    rooms.views["lobby"].update(state=State.READY, scsynth_pid=1, sclang_state="restarting")
    rooms.await_ready(["lobby"], time.monotonic() + 10.0, "play")  # at once
    with pytest.raises(Booting, match=r"'lobby' is READY \(scsynth up, sclang restarting\)"):
        rooms.await_ready(["lobby"], time.monotonic() + 0.01, "execute", need_sclang=True)


def test_rooms_neither_booting_nor_restoring_answer_at_once(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    for state in (State.STOPPED, State.FAILED, State.READY):
        rooms.views["lobby"].update(state=state)
        began = time.monotonic()
        rooms.await_ready(["lobby"], began + 30.0, "play")
        assert time.monotonic() - began < 5.0  # not the 30 s deadline


def test_while_the_actors_are_built_the_router_is_waited_for_then_booting_is_said(
        tree: tuple[Tree, threading.Event], monkeypatch: pytest.MonkeyPatch) -> None:
    rooms, _ = tree
    monkeypatch.setattr("scorch.app.tree.RESTORE_WAIT", 0.05)
    rooms.starting = True
    with pytest.raises(Booting, match=r"^scorch is BOOTING \(scorch is starting JACK, the MIDI "
                                      r"router and the rooms' actors\): MIDI waited"):
        rooms.midi()
    with pytest.raises(Booting, match=r"^scorch is BOOTING .*: the call to room 'attic' "):
        rooms.ask("attic", lambda p: p.boot())
    built = threading.Timer(0.01, rooms.built.set)
    built.start()
    monkeypatch.setattr("scorch.app.tree.RESTORE_WAIT", 10.0)
    with pytest.raises(MidiUnavailable, match="MIDI is not started"):
        rooms.midi()  # built without a router: the start's own reason, no longer BOOTING
    built.join()


def test_every_room_is_waited_for_only_while_scorch_starts(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    rooms.starting = True
    rooms.built.set()
    booting(rooms, "attic")
    with pytest.raises(Booting, match="'attic' is BOOTING"):
        rooms.await_ready(None, time.monotonic() + 0.05, "docs")
    rooms.started.set()  # the start is over: a room booting now is no one else's wait
    rooms.await_ready(None, time.monotonic() + 30.0, "docs")
