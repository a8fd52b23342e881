"""The OSC door without rooms: its address space, its allow list, hostile datagrams, and
feedback to surfaces, with python-osc as the surface on the other side of loopback."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import ThreadingOSCUDPServer
from pythonosc.udp_client import SimpleUDPClient

from scorch.config.osc import OscConfig
from scorch.errors import InvalidRequest
from scorch.osc.addresses import CueGo, Nothing, Panic, Scene, SetParam, Surface, parse
from scorch.osc.door import OscDoor
from scorch.primitives.osc import OscMessage, encode_message


def free_port() -> int:
    """A UDP port free now on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class FakeService:
    """Records the operations the door runs."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.called = threading.Event()

    def call(self, name: str, args: Mapping[str, Any]) -> Any:
        self.calls.append((name, dict(args)))
        self.called.set()
        return None


class Listener:
    """A python-osc server standing in for a surface: what it was sent."""

    def __init__(self) -> None:
        self.got: list[tuple[str, tuple[Any, ...]]] = []
        dispatcher = Dispatcher()
        dispatcher.set_default_handler(lambda address, *args: self.got.append((address, args)))
        self.server = ThreadingOSCUDPServer(("127.0.0.1", 0), dispatcher)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, wanted, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not wanted(self.got):
            assert time.monotonic() < deadline, self.got
            time.sleep(0.005)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service() -> FakeService:
    return FakeService()


@pytest.fixture
def door(service: FakeService) -> Iterator[OscDoor]:
    made = OscDoor(service, OscConfig(listen=f"127.0.0.1:{free_port()}"),
                   current=lambda: {("lobby", "drone", "freq"): 220.0})
    made.start()
    yield made
    made.stop()


@pytest.fixture
def surface() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


@pytest.mark.parametrize(("address", "args", "command"), [
    ("/scorch/lobby/drone/freq", (440.0,), SetParam("lobby", "drone", "freq", 440.0)),
    ("/scorch/lobby/drone/freq", (3,), SetParam("lobby", "drone", "freq", 3.0)),
    ("/scorch/lobby/drone/freq", (), SetParam("lobby", "drone", "freq", None)),
    ("/scorch/scene/recall", ("night",), Scene("recall", "night", None)),
    ("/scorch/scene/recall", ("night", 1.0), Scene("recall", "night", None)),
    ("/scorch/scene/recall", ("night", 0.0), Nothing()),
    ("/scorch/scene/morph", ("night", 0.25), Scene("morph", "night", 0.25)),
    ("/scorch/cue/go", (12,), CueGo("12", None)),
    ("/scorch/cue/go", ("10a", 1.8e9), CueGo("10a", 1.8e9)),
    ("/scorch/cue/go", (2.5,), CueGo("2.5", None)),
    ("/scorch/panic", (), Panic()),
    ("/scorch/panic", (0,), Nothing()),
    ("/scorch/surface/add", (), Surface(True, None)),
    ("/scorch/surface/add", (9001,), Surface(True, 9001)),
    ("/scorch/surface/remove", (), Surface(False, None)),
])
def test_the_address_space(address: str, args: tuple[Any, ...], command: Any) -> None:
    assert parse(OscMessage(address, args)) == command


@pytest.mark.parametrize(("address", "args", "says"), [
    ("/other/lobby/drone/freq", (1.0,), "not under /scorch/"),
    ("/scorch/lobby/drone/freq", ("loud",), "finite number"),
    ("/scorch/lobby/drone/freq", (float("nan"),), "finite number"),
    ("/scorch/lobby/drone/freq", (1.0, 2.0), "one value"),
    ("/scorch/lo by/drone/freq", (1.0,), "not a room name"),
    ("/scorch/scene/morph", ("night", 2.0), "0..1"),
    ("/scorch/scene/recall", (3,), "scene's name"),
    ("/scorch/cue/go", ("; rm -rf",), "cue number"),
    ("/scorch/surface/add", (70000,), "1-65535"),
    ("/scorch/lobby", (), "no such address"),
])
def test_wrong_messages_say_what_is_wrong(address: str, args: tuple[Any, ...],
                                          says: str) -> None:
    with pytest.raises(InvalidRequest) as err:
        parse(OscMessage(address, args))
    assert says in str(err.value)


_args = st.lists(st.one_of(st.integers(-2**31, 2**31 - 1), st.floats(width=32),
                           st.text(max_size=20), st.booleans(), st.none(),
                           st.binary(max_size=20)), max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60).map(lambda s: "/" + s), _args)
def test_any_message_is_a_command_or_an_invalid_request(address: str, args: list[Any]) -> None:
    with contextlib.suppress(InvalidRequest):
        parse(OscMessage(address, tuple(args)))


def test_a_surface_sets_a_param_through_the_service_and_a_change_comes_back(
        door: OscDoor, service: FakeService, surface: Listener) -> None:
    assert door.address is not None
    client = SimpleUDPClient(*door.address)
    client.send_message("/scorch/surface/add", surface.port)
    surface.wait(lambda got: ("/scorch/lobby/drone/freq", (220.0,)) in got)  # what is now
    client.send_message("/scorch/lobby/drone/freq", 330.0)
    assert service.called.wait(5.0)
    assert service.calls == [("set", {"instance": "lobby", "node": "drone",
                                      "params": {"freq": 330.0}})]
    door.changed("lobby", "drone", {"freq": 440.0, "amp": 0.2})
    surface.wait(lambda got: ("/scorch/lobby/drone/freq", (440.0,)) in got and
                 any(a == "/scorch/lobby/drone/amp" for a, _ in got))


def test_a_value_is_not_sent_back_to_the_surface_it_came_from(
        door: OscDoor, service: FakeService) -> None:
    assert door.address is not None
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.5)
    try:
        sock.sendto(encode_message("/scorch/surface/add"), door.address)
        assert sock.recv(1024).startswith(b"/scorch/lobby/drone/freq")
        sock.sendto(encode_message("/scorch/lobby/drone/freq", 500.0), door.address)
        assert service.called.wait(5.0)
        door.changed("lobby", "drone", {"freq": 500.0})  # the change it made, heard back
        door.changed("lobby", "drone", {"amp": 0.1})
        assert sock.recv(1024).startswith(b"/scorch/lobby/drone/amp")
    finally:
        sock.close()


def test_scenes_cues_and_panic_run_and_errors_are_answered(
        door: OscDoor, service: FakeService, surface: Listener) -> None:
    assert door.address is not None
    client = SimpleUDPClient(*door.address)
    client._sock.bind(("127.0.0.1", 0))  # the answers come back to this socket
    client.send_message("/scorch/scene/morph", ["night", 0.5])
    client.send_message("/scorch/panic", [])
    client.send_message("/scorch/cue/go", 7)
    deadline = time.monotonic() + 5
    while len(service.calls) < 3:
        assert time.monotonic() < deadline, service.calls
        time.sleep(0.01)
    assert service.calls == [("scene", {"action": "morph", "name": "night", "position": 0.5}),
                             ("midi", {"action": "panic"}),
                             ("cue", {"action": "go", "cue": "7"})]
    client.send_message("/scorch/nowhere", [])
    client._sock.settimeout(2.0)
    answer = client._sock.recv(1024)
    assert answer.startswith(b"/scorch/error") and b"no such address" in answer


def test_only_this_machine_and_the_allowed_addresses_are_heard() -> None:
    config = OscConfig(allow=("192.168.1.0/24", "10.0.0.7"))
    assert config.allowed("127.0.0.1") and config.allowed("::1")
    assert config.allowed("192.168.1.200") and config.allowed("10.0.0.7")
    assert not config.allowed("10.0.0.8") and not config.allowed("8.8.8.8")
    assert not config.allowed("not an address")
    with pytest.raises(ValueError):
        OscConfig(allow=("lobby",))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_hostile_datagrams_leave_the_door_open(data: bytes) -> None:
    service = FakeService()
    door = _shared_door(service)
    assert door.address is not None
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.sendto(data, door.address)
        sock.sendto(encode_message("/scorch/panic"), door.address)  # still heard after it
    finally:
        sock.close()
    deadline = time.monotonic() + 5
    while ("midi", {"action": "panic"}) not in _SHARED[1].calls:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    _SHARED[1].calls.clear()


_SHARED: list[Any] = []


def _shared_door(service: FakeService) -> OscDoor:
    """One door for every hypothesis example (a socket each would take the time)."""
    if not _SHARED:
        door = OscDoor(service, OscConfig(listen=f"127.0.0.1:{free_port()}"))
        door.start()
        _SHARED[:] = [door, service]
    return _SHARED[0]
