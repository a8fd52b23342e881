"""The HTTP front's pure parts: the guard asks the token and checks Host and Origin; call keys."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from starlette.responses import Response
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from mcp_server.http import SDK_CHECKS, Guard, listen, url
from mcp_server.tools import call_key
from scorch.errors import CannotListen
from scorch.wire.access import Access


def guarded(access: Access) -> TestClient:
    """The guard in front of an app that answers 200 to whatever reaches it."""

    async def inner(scope: Scope, receive: Receive, send: Send) -> None:
        await Response("reached", status_code=200)(scope, receive, send)

    return TestClient(Guard(inner, access), base_url=f"http://{access.host}:57180")


def test_on_loopback_every_request_needs_the_token() -> None:
    web = guarded(Access("127.0.0.1", 57180, "t0ken"))
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic t0ken"},
                    {"Authorization": f"Bearer {'r' * 43}"}):  # the page's read-only token
        refused = web.post("/mcp", headers=headers, content=b"{}")
        assert refused.status_code == 401, headers
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "token" in refused.json()["error"]["message"]
    assert web.post("/mcp", headers={"Authorization": "Bearer t0ken"}, content=b"{}").text == (
        "reached")


def test_a_foreign_host_is_refused_before_the_token_dns_rebinding() -> None:
    web = guarded(Access("127.0.0.1", 57180, "t0ken", frozenset({"studio"})))
    token = {"Authorization": "Bearer t0ken"}
    for host in ("evil.example:57180", "127.0.0.1.evil.example", "10.0.0.5:57180", ""):
        refused = web.get("/mcp", headers={**token, "Host": host})
        assert refused.status_code == 421, host
    for host in ("localhost:57180", "[::1]:57180", "studio:57180", "127.0.0.1:9000"):
        assert web.get("/mcp", headers={**token, "Host": host}).status_code == 200, host
    assert web.post("/mcp", headers={**token, "Origin": "http://evil.example"},
                    content=b"{}").status_code == 403


def test_open_loopback_asks_no_token_and_still_checks_host_and_origin() -> None:
    web = guarded(Access("127.0.0.1", 57180, None))
    assert web.post("/mcp", content=b"{}").status_code == 200
    assert web.post("/mcp", headers={"Host": "evil.example"}, content=b"{}").status_code == 421
    assert web.post("/mcp", headers={"Origin": "http://evil.example"},
                    content=b"{}").status_code == 403


def test_the_sdks_own_host_check_is_off_the_guard_makes_it() -> None:
    assert SDK_CHECKS.enable_dns_rebinding_protection is False


def test_urls_bracket_ipv6() -> None:
    assert url("::1", 8) == "http://[::1]:8/mcp"
    assert url("10.0.0.1", 8) == "http://10.0.0.1:8/mcp"


def context(request_id: str, headers: dict[str, str] | None) -> Any:
    return SimpleNamespace(request_id=request_id, headers=headers)


def test_call_keys_are_the_jsonrpc_id_on_stdio_and_per_session_over_http() -> None:
    assert call_key("n", context("3", None)) == "n:3"
    one = call_key("n", context("3", {"mcp-session-id": "aaa"}))
    two = call_key("n", context("3", {"mcp-session-id": "bbb"}))
    assert one == "n:aaa:3" and two == "n:bbb:3"
    # Without a session two clients' id 3 are two calls, never one.
    assert call_key("n", context("3", {})) != call_key("n", context("3", {}))


def test_a_bad_address_on_the_command_line_is_refused_naming_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    from scorch.cli.main import main

    assert main(["mcp", "--http", "studio:99999"]) == 2
    assert "scorch mcp --http: the port must be a number from 1 to 65535, found '99999'" in (
        capsys.readouterr().err)


def test_a_taken_port_is_a_clear_error_before_anything_starts() -> None:
    taken = listen("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(CannotListen, match=f"127.0.0.1:{port}: Address already in use"):
            listen("127.0.0.1", port)
    finally:
        taken.close()


def test_connections_of_the_listening_socket_send_without_nagle() -> None:
    """Else an answer written as headers then body waits ~40 ms for a delayed ACK."""
    import asyncio
    import socket

    async def accepted_nodelay() -> int:
        sock = listen("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handle(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            raw = writer.get_extra_info("socket")
            seen.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            try:
                return await asyncio.wait_for(seen, 10.0)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) == 1
