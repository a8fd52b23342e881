"""At most once, on a real room: a request resent after its connection dropped mid-call runs once.

A counter in sclang proves it: the code adds one to it, then keeps sclang busy
for half a second, during which the caller's connection is dropped and the
same request (same key) is sent on a new connection, directly to the control
socket and through ``scorch bridge``. The resend gets the first run's answer;
the counter says one. The same code under another key runs again (the
counter says so too), so the test can fail.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.api.remote import RemoteService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.wire.server import ControlServer
from tests.conftest import jack_name
from tests.support.bridge_pipe import Piped

pytestmark = pytest.mark.integration

CONFIG = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{jack}"
[midi]
enabled = false
[instances.room]
"""


def counting(name: str) -> str:
    """Code that adds one to counter ``name``, then holds sclang for 0.5 s; its value."""
    return (f"var t = Main.elapsedTime; Library.put(\\{name}, (Library.at(\\{name}) ? 0) + 1); "
            f"while {{ (Main.elapsedTime - t) < 0.5 }} {{ }}; Library.at(\\{name})")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlServer]:
    state = tmp_path_factory.mktemp("once") / "state"
    orch = Orchestra(parse_config(CONFIG.format(state=state, jack=jack_name("once")),
                                  state.parent / "config.toml"))
    server = ControlServer(LocalService(orch), state)
    try:
        assert orch.start() == {"room": None}
        server.start()
        yield server
    finally:
        server.stop()
        orch.stop()


def line(request_id: int, code: str, key: str | None) -> bytes:
    request: dict[str, Any] = {"id": request_id, "method": "execute",
                               "args": {"instance": "room", "code": code, "timeout_s": 5.0}}
    if key is not None:
        request["key"] = key
    return json.dumps(request).encode() + b"\n"


def running(server: ControlServer, before: list[Any]) -> None:
    """Wait until the server has read the first call: a connection not in ``before``
    (those it served already) has a request."""
    deadline = time.monotonic() + 5.0
    while not any(conn.requests for conn in server._conns if conn not in before):
        assert time.monotonic() < deadline, "the first call never arrived"
        time.sleep(0.005)


def ask(path: Path, data: bytes) -> dict[str, Any]:
    """Send one line on a new connection and read its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10.0)
        sock.connect(str(path))
        sock.sendall(data)
        with sock.makefile("rb") as reader:
            answer: dict[str, Any] = json.loads(reader.readline())
    return answer


def counter(server: ControlServer, name: str) -> str | None:
    remote = RemoteService(server.path)
    try:
        result = remote.call("execute", {"instance": "room", "code": f"Library.at(\\{name})"})
    finally:
        remote.close()
    value: str | None = result.model_dump()["results"][0]["value"]
    return value


def test_a_request_resent_on_a_new_connection_after_a_drop_mid_call_runs_once(
        served: ControlServer) -> None:
    code = counting("onceDirect")
    before = list(served._conns)
    dropped = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dropped.connect(str(served.path))
    dropped.sendall(line(1, code, "direct-1"))
    running(served, before)
    with contextlib.suppress(OSError):
        dropped.shutdown(socket.SHUT_RDWR)
    dropped.close()  # mid-call: the client never reads the answer
    started = time.monotonic()
    answer = ask(served.path, line(2, code, "direct-1"))
    assert answer["id"] == 2 and "error" not in answer, answer
    assert answer["result"]["results"][0]["value"] == "1"  # the first run's answer
    assert time.monotonic() - started < 5.0
    assert counter(served, "onceDirect") == "1"
    again = ask(served.path, line(3, code, "direct-2"))  # another request: it runs
    assert again["result"]["results"][0]["value"] == "2"
    assert counter(served, "onceDirect") == "2"


def test_a_request_resent_through_a_new_bridge_after_the_first_dropped_runs_once(
        served: ControlServer) -> None:
    code = counting("onceBridge")
    before = list(served._conns)
    first = Piped(served.path)
    first.send(line(1, code, "bridge-1"))
    running(served, before)
    first.requests.close()  # as when ssh drops: the coordinator never reads this answer
    second = Piped(served.path)
    second.send(line(2, code, "bridge-1"))
    answer = second.answer()
    assert answer["id"] == 2 and answer["result"]["results"][0]["value"] == "1", answer
    assert counter(served, "onceBridge") == "1"
    second.send(line(3, code, "bridge-2"))
    assert second.answer()["result"]["results"][0]["value"] == "2"
    assert second.close() == 0
    first.thread.join(timeout=10)
    assert json.loads(first.answers.read())["result"]["results"][0]["value"] == "1"
    first.answers.close()
    assert counter(served, "onceBridge") == "2"


def test_an_old_client_without_a_key_still_works_and_each_send_runs(
        served: ControlServer) -> None:
    code = counting("onceOld")
    assert ask(served.path, line(1, code, None))["result"]["results"][0]["value"] == "1"
    assert ask(served.path, line(2, code, None))["result"]["results"][0]["value"] == "2"


def test_the_attached_client_sends_again_itself_when_its_connection_drops_mid_call(
        served: ControlServer, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = RemoteService(served.path)
    before = list(served._conns)
    taken: list[Any] = []
    take = remote.client._take

    def recorded() -> Any:
        conn = take()
        taken.append(conn[0])
        return conn

    monkeypatch.setattr(remote.client, "_take", recorded)
    done: list[Any] = []
    caller = threading.Thread(target=lambda: done.append(remote.call(
        "execute", {"instance": "room", "code": counting("onceClient")}, key="client-1")))
    caller.start()
    try:
        running(served, before)
        taken[0].sock.shutdown(socket.SHUT_RDWR)  # the connection drops under the waiting call
        caller.join(timeout=10)
        assert done and done[0].results[0].value == "1"
        assert len(taken) == 2  # sent again once, on a new connection
    finally:
        caller.join(timeout=10)
        remote.close()
    assert counter(served, "onceClient") == "1"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_each_attached_tools_call_carries_its_own_request_key(
        served: ControlServer) -> None:
    """A key per tools/call, kept for what is not idempotent only: each call runs."""
    remote = RemoteService(served.path)
    try:
        async with Client(build_server(remote)) as attached:
            kept = len(served.once)
            for expected in ("1", "2"):
                ran = await attached.call_tool("execute", {
                    "instance": "room", "code": counting("onceMcp")})
                assert not ran.is_error and ran.structured_content is not None
                assert ran.structured_content["results"][0]["value"] == expected
            status = await attached.call_tool("status", {"instance": "room"})
            assert not status.is_error
            assert len(served.once) == kept + 2
    finally:
        remote.close()
