"""One door per room: only the room's actor and the scsynth/sclang primitives hold a way to a
room's processes, and the view handed to everyone else carries none (docs/architecture.md).

Read from the source (AST), so a new module that opens a socket to scsynth, or imports a
client to hold one, fails here before it runs; and from a view whose doors are open on a
client, walked through every attribute it reaches.
"""

from __future__ import annotations

import ast
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorch.primitives.sclang.door import SclangDoor
from scorch.primitives.sclang.session import SclangSession
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.scsynth.door import ScsynthDoor
from scorch.primitives.scsynth.fake import FakeScsynth
from scorch.primitives.scsynth.wire import UdpWire
from scorch.state.bus import Bus
from scorch.state.door import doors_of
from scorch.state.view import RoomView

ROOT = Path(__file__).resolve().parents[2]
#: The code that runs the installation (the tests and benchmarks start processes of their own).
TREES = ("scorch", "actors", "midi", "mcp_server")
#: Where a room's processes are started, talked to and owned: the room's actor, and the
#: primitives that are the scsynth and sclang protocols.
OWNERS = ("actors/room/", "scorch/primitives/scsynth/", "scorch/primitives/sclang/")
#: What holds a way to a room's scsynth or sclang: a client, a process, a socket's wire.
HOLDERS = {"OscClient", "SclangSession", "Sclang", "Scsynth", "UdpWire", "Wire", "FakeScsynth",
           "VoiceSender"}
#: The one voice sender's users (issue 39): the MIDI router's voices and the partner's answers.
VOICES = {"VoiceSender": ("actors/router/sender.py", "actors/router/answer.py")}
#: UDP sockets outside the owners: free-port probes that bind, close and never send.
UDP_PROBES = ("scorch/primitives/system/udp_ports.py",)


def modules() -> Iterator[tuple[str, ast.Module]]:
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))


def owned(where: str) -> bool:
    return where.startswith(OWNERS)


def held_names(tree: ast.Module) -> set[str]:
    """The holders a module imports, by name."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found |= {alias.name for alias in node.names} & HOLDERS
    return found


def udp_sockets(tree: ast.Module) -> int:
    """Calls of ``socket.socket(...)`` that name an internet address family and UDP."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("socket.socket", "socket"):
            text = ast.unparse(node)
            if "SOCK_DGRAM" in text and "AF_INET" in text:
                count += 1
    return count


def test_the_source_holds_modules_to_check() -> None:
    found = dict(modules())
    assert len(found) > 150
    assert udp_sockets(found["scorch/primitives/scsynth/wire.py"]) == 1  # the check sees one
    assert held_names(found["actors/room/processes.py"]) >= {"OscClient", "Sclang"}


def test_no_module_but_the_rooms_actor_and_the_primitives_holds_a_client_of_a_room() -> None:
    held = {where: names for where, tree in modules() if not owned(where)
            if (names := {n for n in held_names(tree) if where not in VOICES.get(n, ())})}
    assert held == {}, "reach a room's processes through its door (tree.doors, scorch.state.door)"


def test_no_module_but_the_primitives_opens_a_udp_socket() -> None:
    opened = {where: count for where, tree in modules()
              if not where.startswith(("scorch/primitives/scsynth/", *UDP_PROBES))
              if (count := udp_sockets(tree))}
    assert opened == {}, "OSC to a room goes through its door or the voice sender"


def reachable(start: object, depth: int = 6) -> Iterator[object]:
    """Every object reachable from ``start`` through attributes, dicts and sequences."""
    seen: set[int] = set()
    todo: list[tuple[object, int]] = [(start, 0)]
    while todo:
        item, level = todo.pop()
        if id(item) in seen or level > depth or isinstance(item, str | bytes | int | float):
            continue
        seen.add(id(item))
        yield item
        children: list[Any] = []
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            children = list(item)
        else:
            children = list(getattr(item, "__dict__", {}).values())
            children += [getattr(item, s) for s in getattr(type(item), "__slots__", ())
                         if hasattr(item, s)]
        todo += [(child, level + 1) for child in children]


WAYS_IN = (OscClient, SclangSession, ScsynthDoor, SclangDoor, UdpWire, FakeScsynth,
           socket.socket)


def test_the_view_carries_no_way_to_its_processes_while_its_doors_are_open() -> None:
    view = RoomView("lobby", None, Bus())
    door = doors_of(view)
    client = OscClient(57110, wire=FakeScsynth())
    try:
        door.scsynth.open(client)
        assert door.scsynth.is_open
        ways = [type(x).__name__ for x in reachable(view) if isinstance(x, WAYS_IN)]
        assert ways == []
        # the walk finds what a view would carry
        assert any(isinstance(x, OscClient) for x in reachable(door))
    finally:
        client.close()


@pytest.mark.parametrize("name", ["osc", "sclang", "door", "doors", "client", "session"])
def test_the_view_has_no_attribute_that_would_hand_one_out(name: str) -> None:
    assert not hasattr(RoomView("lobby", None), name)
