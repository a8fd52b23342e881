"""A param changed by MCP ``set``, a MIDI knob, a scene recall and ``undo`` reaches every
reader of the change bus once and in order: the MIDI router, the page's stream and the
panel (docs/architecture.md, "The change bus"). Another host's knob: test_hosts_bus.py.

One real room, a real JACK MIDI port as the knob, the page's server with its real
server-sent-events stream read over HTTP, the panel's ``live`` long poll through a real
MCP client (in memory), and the changes made through MCP tools as Claude makes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.web.serve import WebServer
from tests.conftest import MakeConfig
from tests.support.hosts.harness import free_tcp_port
from tests.support.mcp.calls import call
from tests.support.midi.devices import Hardware
from tests.support.web.stream import PageStream, params_changes

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

KNOB = "scorchtest-busknob"
ROOM = """
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.pad]
synthdef = "sine"
params = { freq = 220, amp = 0.001 }
"""
MIDI = f"""
[midi]
backend = "jack"
rescan_interval = 0.1
[[midi.controls]]
port = "{KNOB}"
cc = 74
instance = "lobby"
node = "pad"
param = "freq"
range = [100, 1000]
curve = "lin"
takeover = "immediate"
"""
#: (by, freq) of each change of lobby's pad the test makes, in order.
EXPECTED = [("set", 300.0), ("midi", 1000.0), ("scene", 220.0), ("undo", 1000.0)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def orch(make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra]) -> Orchestra:
    orchestra = start_orchestra(make_config(ROOM, extra=MIDI, tag="bus"))
    assert orchestra.midi.error is None
    return orchestra


@pytest.fixture
def page(orch: Orchestra) -> Iterator[list[dict[str, Any]]]:
    """The page's stream, read over HTTP in a thread: every ``change`` event it sends."""
    port = free_tcp_port()
    server = WebServer(LocalService(orch), orch, "127.0.0.1", port, orch.config.state_path(),
                       meter_hz=5.0, open_loopback=True)
    server.start()
    try:
        with PageStream("127.0.0.1", port) as stream:
            yield stream.changes
    finally:
        server.stop()


def pad_changes(changes: list[dict[str, Any]]) -> list[tuple[int, str, float]]:
    """(seq, by, freq) of every ParamsChanged of lobby's pad, as a reader got them."""
    return params_changes(changes, "lobby", "pad", "freq")


async def test_a_param_changed_every_way_reaches_the_router_the_page_and_the_panel_once_in_order(
    orch: Orchestra, page: list[dict[str, Any]]
) -> None:
    knob = Hardware(KNOB, "scorchtest-hw", orch.config.audio.jack_server)
    try:
        await changed_every_way(orch, page, knob)
    finally:
        knob.unplug()


async def changed_every_way(orch: Orchestra, page: list[dict[str, Any]],
                            knob: Hardware) -> None:
    deadline = time.monotonic() + 10
    while not any(KNOB in p for p in orch.midi.ports()["inputs"]):
        assert time.monotonic() < deadline, "the knob's port never opened"
        await anyio.sleep(0.05)
    panel: list[dict[str, Any]] = []
    async with Client(build_server(LocalService(orch))) as client:
        await call(client, "scene", action="save", name="calm", instance="lobby")
        seq = (await call(client, "live"))["seq"]
        done = anyio.Event()

        async def follow(since: int) -> None:  # as mcp_server/panel.html does
            while not done.is_set():
                view = await call(client, "live", since=since, wait=1.0)
                panel.extend(view["changes"])
                since = view["seq"]

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follow, seq)
            await call(client, "set", instance="lobby", node="pad", params={"freq": 300.0})
            knob.send(0xB0, 74, 127)  # the top of the range: 1000 Hz
            while orch.rooms.nodes("lobby")["pad"].params["freq"] != 1000.0:  # kept there
                assert time.monotonic() < deadline + 10, orch.rooms.nodes("lobby")
                await anyio.sleep(0.02)
            await call(client, "scene", action="recall", name="calm", instance="lobby")
            await call(client, "undo", action="undo")  # the recall: back to 1000
            while len(pad_changes(panel)) < len(EXPECTED) or len(pad_changes(page)) < len(
                    EXPECTED):
                assert time.monotonic() < deadline + 20, (pad_changes(panel), pad_changes(page))
                await anyio.sleep(0.05)
            await anyio.sleep(0.3)  # anything sent twice would come now
            done.set()
    router = orch.bus.subscriptions()["midi-router"]
    assert orch.bus.settle(5.0)
    by_page, by_panel = pad_changes(page), pad_changes(panel)
    assert [(by, freq) for _, by, freq in by_page] == EXPECTED
    assert by_panel == by_page  # the same changes, the same seqs, the same order
    seqs = [seq for seq, _, _ in by_page]
    assert seqs == sorted(seqs)
    taken = orch.bus.subscriptions()["midi-router"]["recent"]
    assert [s for s in taken if s in seqs] == seqs, (taken, seqs)  # once each, in order
    assert router["failed"] == 0 and router["missed"] == 0
    assert orch.rooms.nodes("lobby")["pad"].params["freq"] == 1000.0
