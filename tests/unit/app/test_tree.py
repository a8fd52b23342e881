"""The tree's asks: a late answer and a dead actor become scorch's errors, naming the room."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pykka
import pytest

from actors.instance.proxy import InstanceProxy
from scorch.app.tree import Tree
from scorch.config.installation import parse_config
from scorch.errors import InstanceNotFound, InstanceNotReady, MidiUnavailable
from scorch.primitives.synthdefs.library import SynthDefLibrary

CONFIG = """
[instances.lobby]
[instances.attic]
"""


class Room(pykka.ThreadingActor):
    """Stands for an Instance: ``boot`` answers once the test lets it."""

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
    tree.instances = {"lobby": cast(InstanceProxy, ref.proxy())}
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
    with pytest.raises(InstanceNotReady, match=r"'lobby' did not answer within 0.05 s "
                                               r"\(state STOPPED\)"):
        rooms.ask("lobby", lambda p: p.boot(), timeout=0.05)


def test_an_ask_to_a_stopped_actor_says_the_room_is_not_running(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, release = tree
    release.set()
    rooms.instances["lobby"].actor_ref.stop()
    with pytest.raises(InstanceNotReady, match="'lobby' is not running"):
        rooms.ask("lobby", lambda p: p.boot(), timeout=5.0)


def test_a_room_without_an_actor_or_a_name_is_refused(
        tree: tuple[Tree, threading.Event]) -> None:
    rooms, _ = tree
    with pytest.raises(InstanceNotReady, match="'attic' is not running: scorch is not started"):
        rooms.ask("attic", lambda p: p.boot())
    with pytest.raises(InstanceNotFound):
        rooms.ask("cellar", lambda p: p.boot())
    with pytest.raises(MidiUnavailable, match="MIDI is not started"):
        rooms.midi()
