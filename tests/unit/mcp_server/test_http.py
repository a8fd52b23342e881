"""The HTTP front's pure parts: the SDK's own checks agree with scorch's policy; call keys."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from mcp_server.http import listen, transport_security, url
from mcp_server.tools import call_key
from scorch.errors import CannotListen
from scorch.wire.access import Access


def request(host: str, origin: str | None) -> Request:
    headers = [(b"host", host.encode("latin-1"))]
    if origin is not None:
        headers.append((b"origin", origin.encode("latin-1")))
    return Request({"type": "http", "method": "GET", "path": "/mcp", "headers": headers})


async def sdk_refuses(access: Access, host: str, origin: str | None) -> int | None:
    checked = TransportSecurityMiddleware(transport_security(access))
    refused = await checked.validate_request(request(host, origin))
    return None if refused is None else refused.status_code


@pytest.mark.anyio
@pytest.mark.parametrize("origin", [
    None, "http://localhost:3000", "http://127.0.0.1:57180", "https://localhost:1",
    "http://[::1]:8080"])
async def test_on_loopback_the_sdk_passes_the_origins_scorch_passes(origin: str | None) -> None:
    access = Access("127.0.0.1", 57180, None)
    assert access.origin_ok(origin)
    assert await sdk_refuses(access, "127.0.0.1:57180", origin) is None
    assert await sdk_refuses(access, "localhost:57180", origin) is None


@pytest.mark.anyio
async def test_on_loopback_the_sdk_refuses_a_foreign_host_dns_rebinding() -> None:
    access = Access("127.0.0.1", 57180, None)
    assert await sdk_refuses(access, "evil.example:57180", None) == 421
    assert await sdk_refuses(access, "127.0.0.1:57180", "http://evil.example") == 403


@pytest.mark.anyio
async def test_off_loopback_the_token_guards_and_the_sdk_asks_no_host() -> None:
    access = Access("10.0.0.5", 57180, "t0ken")
    assert await sdk_refuses(access, "studio.local:57180", None) is None


NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,6}){0,2}", fullmatch=True)


@given(st.sampled_from(["http", "https"]), st.one_of(NAMES, st.sampled_from(
    ["localhost", "127.0.0.1", "[::1]"])), st.integers(1, 65535))
def test_scorch_and_the_sdk_agree_on_every_origin_a_browser_sends(
        scheme: str, host: str, port: int) -> None:
    """A browser's Origin is scheme://host:port: both checks pass it, or both refuse it."""
    import anyio

    access = Access("127.0.0.1", 57180, None)
    origin = f"{scheme}://{host}:{port}"
    sdk = anyio.run(sdk_refuses, access, "127.0.0.1:57180", origin)
    assert (sdk is None) == access.origin_ok(origin), origin


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
