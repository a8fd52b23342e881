"""The OSC door of a running installation, with python-osc as the surface: a param set by OSC
reaches scsynth, a scene recalled by OSC sets its params, and a change made through MCP
arrives at the registered surface."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client
from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import ThreadingOSCUDPServer
from pythonosc.udp_client import SimpleUDPClient

from mcp_server.server import build_server
from scorch.api.firing import Firing
from scorch.api.local import LocalService
from scorch.api.ops import load_all
from scorch.app.orchestra import Orchestra
from scorch.config.osc import OscConfig
from scorch.osc.door import OscDoor, open_door
from tests.conftest import module_orchestra, node_param
from tests.support.mcp.calls import call

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

ROOMS = """
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.0 }

[[cues]]
number = 1
name = "up"
do = [{ op = "set", instance = "lobby", node = "drone", params = { freq = 770 } }]
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    with module_orchestra(tmp_path_factory.mktemp("osc"), "osc", ROOMS) as orchestra:
        orchestra.hours.start(Firing(orchestra, load_all))  # as scorch run does
        yield orchestra


@pytest.fixture
def door(orch: Orchestra) -> Iterator[OscDoor]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    opened = open_door(LocalService(orch), orch, OscConfig(listen=f"127.0.0.1:{port}"))
    yield opened
    opened.stop()


@pytest.fixture
def surface() -> Iterator[tuple[ThreadingOSCUDPServer, list[tuple[str, tuple[Any, ...]]]]]:
    got: list[tuple[str, tuple[Any, ...]]] = []
    dispatcher = Dispatcher()
    dispatcher.set_default_handler(lambda address, *args: got.append((address, args)))
    server = ThreadingOSCUDPServer(("127.0.0.1", 0), dispatcher)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, got
    server.shutdown()
    server.server_close()


@pytest.fixture
async def client(orch: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orch))) as session:
        yield session


def freq(orch: Orchestra) -> float:
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    return node_param(osc, orch.rooms.nodes("lobby")["drone"].node_id, "freq")


def wait(check, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_param_set_by_osc_is_on_scsynth_kept_for_restarts_and_undone(
        orch: Orchestra, door: OscDoor) -> None:
    assert door.address is not None
    before, kept = freq(orch), len(orch.undo.entries("lobby"))
    SimpleUDPClient(*door.address).send_message("/scorch/lobby/drone/freq", 330.0)
    wait(lambda: freq(orch) == pytest.approx(330.0))
    assert orch.rooms.nodes("lobby")["drone"].params["freq"] == pytest.approx(330.0)
    # journaled once the call returns, a moment after scsynth has the value (CI's undo
    # came first once: "nothing to undo")
    wait(lambda: len(orch.undo.entries("lobby")) > kept)
    LocalService(orch).call("undo", {"action": "undo", "instance": "lobby"})
    wait(lambda: freq(orch) == pytest.approx(before))  # journaled as MCP's set is


def test_a_scene_recalled_by_osc_sets_its_params(orch: Orchestra, door: OscDoor) -> None:
    assert door.address is not None
    orch.rooms.set("lobby", "drone", {"freq": 250.0})
    orch.scenes.save("low", "lobby")
    orch.rooms.set("lobby", "drone", {"freq": 600.0})
    SimpleUDPClient(*door.address).send_message("/scorch/scene/recall", ["low", 1])
    wait(lambda: freq(orch) == pytest.approx(250.0))


async def test_a_change_made_through_mcp_arrives_at_the_registered_surface(
        orch: Orchestra, door: OscDoor, surface, client: Client) -> None:
    server, got = surface
    assert door.address is not None
    SimpleUDPClient(*door.address).send_message("/scorch/surface/add",
                                                 server.server_address[1])
    wait(lambda: any(a == "/scorch/lobby/drone/freq" for a, _ in got))  # its first state
    got.clear()
    await call(client, "set", instance="lobby", node="drone", params={"freq": 444.0})
    wait(lambda: ("/scorch/lobby/drone/freq", (pytest.approx(444.0),)) in got)


def test_a_cue_gone_by_osc_fires_its_calls_and_is_undone_as_one_step(
        orch: Orchestra, door: OscDoor) -> None:
    assert door.address is not None
    before = freq(orch)
    SimpleUDPClient(*door.address).send_message("/scorch/cue/go", 1)
    wait(lambda: freq(orch) == pytest.approx(770.0))
    assert LocalService(orch).call("cue", {"action": "list"}).standby is None  # past cue 1
    LocalService(orch).call("undo", {"action": "undo", "instance": "lobby"})
    wait(lambda: freq(orch) == pytest.approx(before))
