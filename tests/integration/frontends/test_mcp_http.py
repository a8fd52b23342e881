"""MCP over streamable HTTP through the SDK's own client: several clients, the token, Origins.

One ``scorch mcp --http`` on loopback hosts a room for the module; one ``scorch
run`` with ``[mcp] http`` on an address of a network namespace made here runs
another. Both ask every request for the token, loopback too. Nothing reaches past
the namespace's veth pair. Where namespaces cannot be made (not root), the token
off loopback is still tested: scorch's HTTP front on this machine's own
non-loopback address.
"""

from __future__ import annotations

import json
import socket
import stat
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_server.http import HttpFront, listen, url
from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.web.serve import WebServer
from scorch.wire.access import TOKEN_FILE, is_loopback
from tests.conftest import jack_name
from tests.support import hostile_json
from tests.support.hosts.harness import ScorchRun, free_tcp_port, namespaces, namespaces_allowed
from tests.support.mcp.http import HttpServer, client, wait_listening
from tests.support.mcp.stdio import one_room_config
from tests.support.skips import missing

pytestmark = pytest.mark.integration

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}}
#: What a streamable HTTP POST must accept.
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def loopback(tmp_path_factory: pytest.TempPathFactory, far: Guarded | str) -> Iterator[HttpServer]:
    """``scorch mcp --http`` on loopback hosting a room (``far`` first: both boot at once)."""
    folder = tmp_path_factory.mktemp("http")
    config = one_room_config(folder, jack_name("http"))
    server = HttpServer(config, "127.0.0.1", free_tcp_port(), folder / "scorch.log")
    try:
        yield server
    finally:
        code = server.stop()
        log = server.log.read_text()
        assert code == 0, log[-3000:]
        assert "orchestra stopped; no process left" in log


def post(url: str, body: bytes | dict[str, Any], **headers: str) -> httpx2.Response:
    """One raw POST, as any program (or a browser) could send it."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    return httpx2.post(url, content=data, timeout=30.0, headers={
        "content-type": "application/json", "accept": ACCEPT, **headers})


def reasons(error: BaseException) -> str:
    """What the errors in ``error`` (its groups, its causes) say, one line each."""
    said: list[str] = []
    stack = [error]
    while stack and len(said) < 100:
        here = stack.pop()
        if isinstance(here, BaseExceptionGroup):
            stack.extend(here.exceptions)
        else:
            said.append(f"{type(here).__name__}: {here}")
        stack.extend(e for e in (here.__cause__, here.__context__) if e is not None)
    return "\n".join(said)


def test_two_clients_at_once_play_and_see_the_same_room(loopback: HttpServer) -> None:
    async def both() -> None:
        async with client(loopback.url, **loopback.bearer) as first, \
                client(loopback.url, **loopback.bearer) as second:
            played = await first.call_tool("play", {
                "instance": "room", "synthdef": "sine", "name": "shared",
                "params": {"freq": 220, "amp": 0.001}})
            assert not played.is_error, played.content
            seen: dict[str, Any] = {}

            async def look(who: Any, key: str) -> None:
                result = await who.call_tool("playing", {"instance": "room"})
                assert not result.is_error, result.content
                seen[key] = result.structured_content

            async with anyio.create_task_group() as tasks:  # both at once
                tasks.start_soon(look, second, "second")
                tasks.start_soon(look, first, "first")
            for key in ("first", "second"):
                nodes = {n["name"] for room in seen[key]["rooms"] for n in room["nodes"]}
                assert "shared" in nodes, (key, seen[key])
            status = await second.call_tool("status", {"instance": "room"})
            assert "shared" in json.dumps(status.structured_content)
            released = await second.call_tool("release", {"instance": "room", "node": "shared"})
            assert not released.is_error, released.content

    anyio.run(both)
    log = loopback.log.read_text()
    # scorch mcp --http prints the token for the person who started it (on stderr).
    assert (f"MCP over streamable HTTP at {loopback.url}; every request needs the header "
            f"Authorization: Bearer {loopback.token} (the token kept in {loopback.token_file})"
            in log)


def test_on_loopback_a_request_without_the_token_is_refused(loopback: HttpServer) -> None:
    for authorization in (None, "Bearer wrong", f"Basic {loopback.token}",
                          f"Bearer {loopback.token[:-1]}"):
        headers = {"authorization": authorization} if authorization else {}
        refused = post(loopback.url, INITIALIZE, **headers)
        assert refused.status_code == 401, refused.text
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert stat.S_IMODE(loopback.token_file.stat().st_mode) == 0o600

    async def anonymous() -> None:
        with pytest.raises(BaseException) as refused:
            async with client(loopback.url) as nobody:
                await nobody.call_tool("list_instances", {})
        assert "scorch asks every request for its token" in reasons(refused.value)

    anyio.run(anonymous)


def test_a_foreign_origin_or_host_is_refused_and_a_loopback_one_passes(
        loopback: HttpServer) -> None:
    refused = post(loopback.url, INITIALIZE, origin="http://evil.example", **loopback.bearer)
    assert refused.status_code == 403, refused.text
    assert "evil.example" in refused.json()["error"]["message"]
    assert post(loopback.url, INITIALIZE, origin="http://attacker.test:80",
                **loopback.bearer).status_code == 403
    # DNS rebinding: a page's own origin and host, resolved to this machine; the token or not.
    for headers in ({}, loopback.bearer):
        rebound = post(loopback.url, INITIALIZE, host=f"evil.example:{loopback.port}", **headers)
        assert rebound.status_code == 421, rebound.text
        assert "DNS rebinding" in rebound.json()["error"]["message"]
    for origin in (f"http://127.0.0.1:{loopback.port}", "http://localhost:3000"):
        assert post(loopback.url, INITIALIZE, origin=origin,
                    **loopback.bearer).status_code == 200, origin

    async def through_the_sdk() -> None:
        async with client(loopback.url, origin="http://localhost:6274",
                          **loopback.bearer) as inspector:
            pinged = await inspector.call_tool("list_instances", {})
            assert not pinged.is_error, pinged.content
        with pytest.raises(BaseException) as refused:
            async with client(loopback.url, origin="https://evil.example",
                              **loopback.bearer) as foreign:
                await foreign.call_tool("list_instances", {})
        assert "origin 'https://evil.example' may not use this scorch" in reasons(refused.value)

    anyio.run(through_the_sdk)


HEADER_VALUE = st.one_of(
    st.binary(max_size=120).map(lambda v: v.replace(b"\r", b"").replace(b"\n", b"")),
    st.sampled_from([b"http://localhost:1", b"Bearer x", ACCEPT.encode(), b"application/json",
                     b"2025-06-18", b"2026-07-28", b"http://[::1", b"null"]))
HEADERS = st.dictionaries(
    st.sampled_from([b"origin", b"authorization", b"content-type", b"accept", b"mcp-session-id",
                     b"mcp-protocol-version", b"last-event-id", b"host", b"transfer-encoding"]),
    HEADER_VALUE, max_size=6)
BODIES = st.one_of(
    hostile_json.lines(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": '),
    hostile_json.json_values().map(lambda v: json.dumps(v).encode()),
    st.just(json.dumps(INITIALIZE).encode()))


def raw_request(port: int, method: bytes, headers: dict[bytes, bytes], body: bytes,
                token: str) -> bytes:
    """One request written byte for byte (no client library tidies it); the status line.

    With the token unless ``headers`` bring an authorization of their own: what
    comes after the guard is fuzzed too.
    """
    head = [method + b" /mcp HTTP/1.1", b"connection: close",
            b"content-length: %d" % len(body)]
    if b"host" not in headers:
        head.append(b"host: 127.0.0.1:%d" % port)
    if b"authorization" not in headers:
        head.append(b"authorization: Bearer " + token.encode())
    head += [name + b": " + value for name, value in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=10.0) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        answer = b""
        while b"\r\n" not in answer and len(answer) < 4096:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=st.sampled_from([b"POST", b"POST", b"GET", b"DELETE", b"PUT", b"OPTIONS", b"\x00"]),
       headers=HEADERS, body=BODIES)
def test_hostile_headers_and_bodies_are_answered_and_never_crash_it(
        loopback: HttpServer, method: bytes, headers: dict[bytes, bytes], body: bytes) -> None:
    status = raw_request(loopback.port, method, headers, body, loopback.token)
    assert status.startswith(b"HTTP/1.1 "), status  # answered, not dropped
    code = int(status.split()[1])
    assert code < 500 or code == 503, status
    origin = headers.get(b"origin")
    if origin is not None and not origin.decode("latin-1").startswith(
            ("http://localhost:", "http://127.0.0.1:", "http://[::1]:")):
        assert code >= 400, (headers, status)
    assert loopback.proc.poll() is None


def test_after_hostile_requests_the_server_still_serves(loopback: HttpServer) -> None:
    async def call() -> None:
        async with client(loopback.url, **loopback.bearer) as fine:
            listed = await fine.call_tool("list_instances", {})
            assert [r["name"] for r in (listed.structured_content or {})["instances"]] == ["room"]

    anyio.run(call)
    assert "Traceback" not in loopback.log.read_text()


# --- off loopback: the token ---------------------------------------------------------------


def off_loopback() -> str:
    """An address of this machine that is not loopback, else every address (``0.0.0.0``)."""
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family == socket.AF_INET and not is_loopback(address.address):
                return str(address.address)
    return "0.0.0.0"


def test_off_loopback_without_namespaces_the_token_guards_scorchs_http_front(
        tmp_path: Path) -> None:
    """The front ``scorch run`` serves with ``[mcp] http``, on a real socket (not as root too)."""
    host = off_loopback()
    sock = listen(host, 0)
    port = int(sock.getsockname()[1])
    front = HttpFront.open(build_server(LocalService()), sock, host, tmp_path).start()
    endpoint = url("127.0.0.1" if host == "0.0.0.0" else host, port)
    try:
        token = (tmp_path / TOKEN_FILE).read_text().strip()
        assert front.access.token == token and len(token) >= 32
        for authorization in (None, "Bearer wrong", f"Basic {token}", f"Bearer {token}x"):
            headers = {"authorization": authorization} if authorization else {}
            refused = post(endpoint, INITIALIZE, **headers)
            assert refused.status_code == 401, (authorization, refused.text)
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert "asks every request for its token" in refused.json()["error"]["message"]
        served = post(endpoint, INITIALIZE, authorization=f"Bearer {token}")
        assert served.status_code == 200, served.text
        assert "serverInfo" in served.text

        async def through_the_sdk() -> set[str]:
            with pytest.raises(BaseException) as refused:
                async with client(endpoint) as anonymous:
                    await anonymous.list_tools()
            assert "scorch asks every request for its token" in reasons(refused.value)
            async with client(endpoint, authorization=f"Bearer {token}") as bearer:
                return {tool.name for tool in (await bearer.list_tools()).tools}

        assert {"doctor", "list_instances", "listen"} <= anyio.run(through_the_sdk)
    finally:
        front.stop()


def test_a_page_stopped_in_this_process_leaves_mcps_streamed_answers_whole(
        tmp_path: Path) -> None:
    """``scorch run`` serves the page and MCP over HTTP in one process. The page's stop once
    went through uvicorn's ``handle_exit``, which sse-starlette patches to mark the whole
    process as ending: every streamed MCP answer after it was cut mid-body."""
    sock = listen("127.0.0.1", 0)
    front = HttpFront.open(build_server(LocalService()), sock, "127.0.0.1", tmp_path)
    page = WebServer(None, None, "127.0.0.1", free_tcp_port(),  # type: ignore[arg-type]
                     tmp_path / "page", 15.0)
    page.start()
    page.stop()
    front.start()
    try:
        token = (tmp_path / TOKEN_FILE).read_text().strip()
        served = post(url("127.0.0.1", int(sock.getsockname()[1])), INITIALIZE,
                      authorization=f"Bearer {token}")
        assert served.status_code == 200 and "serverInfo" in served.text, served.text
    finally:
        front.stop()


# --- off loopback: scorch run with [mcp] http in a namespace -------------------------------


class Guarded:
    """``scorch run`` in a namespace, serving MCP at its non-loopback address."""

    def __init__(self, folder: Path, address: str, netns: str) -> None:
        self.state = folder / "state"
        self.port = free_tcp_port()
        self.url = f"http://{address}:{self.port}/mcp"
        self.config = folder / "config.toml"
        self.config.write_text(textwrap.dedent(f"""
            state_dir = "{self.state}"
            [audio]
            driver = "dummy"
            jack_server = "{jack_name('http-ns')}"
            [midi]
            enabled = false
            [docs]
            build = "on-demand"
            [mcp]
            http = "{address}:{self.port}"
            [instances.far]
            """))
        self.address = address
        self.run = ScorchRun(self.config, None, folder / "run.log", netns=netns)

    def wait(self) -> None:
        """Until its rooms booted and HTTP answers."""
        self.run.wait_serving(self.state)
        wait_listening(self.address, self.port, self.run.proc, self.run.log)


@pytest.fixture(scope="module")
def far(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded | str]:
    """``scorch run`` in a namespace, started and not yet waited for; or why it cannot be."""
    why = namespaces_allowed()
    if why is not None:
        yield why
        return
    with namespaces(1) as (space,):
        made = Guarded(tmp_path_factory.mktemp("http-ns"), space.address, space.name)
        try:
            yield made
        finally:
            assert made.run.stop() == 0, made.run.tail()


@pytest.fixture
def guarded(far: Guarded | str) -> Guarded:
    if isinstance(far, str):
        missing(far)
    far.wait()
    return far


def test_off_loopback_a_request_without_the_token_is_refused_and_with_it_served(
        guarded: Guarded) -> None:
    token_file = guarded.state / TOKEN_FILE
    token = token_file.read_text().strip()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    log = guarded.run.log.read_text()
    assert f"at {guarded.url}; every request needs the token in {token_file}" in log
    assert token not in log
    for authorization in (None, "Bearer wrong", f"Basic {token}", f"Bearer {token[:-1]}"):
        headers = {"authorization": authorization} if authorization else {}
        refused = post(guarded.url, INITIALIZE, **headers)
        assert refused.status_code == 401, refused.text
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert post(guarded.url, INITIALIZE, authorization=f"Bearer {token}").status_code == 200

    async def calls() -> None:
        with pytest.raises(BaseException) as refused:
            async with client(guarded.url) as anonymous:
                await anonymous.call_tool("list_instances", {})
        assert "scorch asks every request for its token" in reasons(refused.value)
        async with client(guarded.url, authorization=f"Bearer {token}") as bearer:
            listed = await bearer.call_tool("list_instances", {})
            assert not listed.is_error, listed.content
            rows = (listed.structured_content or {})["instances"]
            assert [(r["name"], r["state"]) for r in rows] == [("far", "READY")]

    anyio.run(calls)


def test_two_clients_of_an_attached_server_each_run_their_own_calls(
        guarded: Guarded, tmp_path: Path) -> None:
    """Both clients' first call has the same JSON-RPC id: two calls, not one sent twice."""
    attached = HttpServer(guarded.config, "127.0.0.1", free_tcp_port(), tmp_path / "http.log")
    try:
        async def both(mode: str) -> set[str]:
            async with client(attached.url, mode, **attached.bearer) as one, \
                    client(attached.url, mode, **attached.bearer) as two:
                async def play(who: Any, name: str) -> None:
                    played = await who.call_tool("play", {
                        "instance": "far", "synthdef": "sine", "name": name,
                        "params": {"freq": 330, "amp": 0.001}})
                    assert not played.is_error, played.content

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(play, one, f"{mode}-one")
                    tasks.start_soon(play, two, f"{mode}-two")
                seen = await one.call_tool("playing", {"instance": "far"})
                names = {n["name"] for room in (seen.structured_content or {})["rooms"]
                         for n in room["nodes"]}
                for name in (f"{mode}-one", f"{mode}-two"):
                    await two.call_tool("release", {"instance": "far", "node": name})
                return names

        for mode in ("legacy", "auto"):
            assert {f"{mode}-one", f"{mode}-two"} <= anyio.run(both, mode), mode
    finally:
        assert attached.stop() == 0
    assert "attaching to the running installation" in attached.log.read_text()
