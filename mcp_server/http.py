"""``scorch mcp --http`` and ``[mcp] http``: the same tools over MCP's streamable HTTP.

The SDK's streamable HTTP app (``MCPServer.streamable_http_app``) serves one MCP
session per client at ``http://ADDR:PORT/mcp``; every session calls the one
service, so several clients at once see the same rooms. In front of it, a small
ASGI guard applies scorch's HTTP policy (:mod:`scorch.wire.access`): a ``Host``
that is not this listener's is refused (421, DNS rebinding), a foreign ``Origin``
too (403), and a request without the state folder's token (401), on every address,
loopback included, unless ``[mcp] open_loopback`` opens a loopback listener; a body
is held to the control socket's limits (:data:`~scorch.wire.limits.REQUEST_LIMITS`)
before anything decodes it.

The SDK's own Host and Origin checks are turned off: the guard makes them, once,
with the rules the page shares (an SDK list of hosts cannot say "any address, or
this machine's name"), and two checks that disagreed would answer one request
two ways.

uvicorn serves it on a socket bound here first, so a taken port is a clear error
before anything starts; its log goes to scorch's (stderr), never to stdout.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_server.server import server_for
from scorch.config import Config, default_state_path, load_config
from scorch.errors import CannotListen, ConfigError
from scorch.wire import REQUEST_LIMITS, TOKEN_FILE, Access, OverLimit, check, load_token

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)

#: The endpoint's path.
PATH = "/mcp"
#: Clients' sessions open at once; a request for one more is answered 503.
MAX_SESSIONS = 128
#: Seconds the open streams get to close at a stop before they are cut.
GRACE = 2.0
#: The SDK's own checks, off: :class:`Guard` checks Host and Origin (see above).
SDK_CHECKS = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def url(host: str, port: int) -> str:
    """The endpoint's URL for a listener (an IPv6 address in brackets)."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{PATH}"


class Guard:
    """ASGI middleware: scorch's access policy and input limits before the SDK's app."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the orchestra's start and stop
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.access.refusal(host=headers.get("host"),
                                      authorization=headers.get("authorization"),
                                      origin=headers.get("origin"))
        if refusal is not None:
            status, reason = refusal
            peer = scope.get("client") or ("?", 0)
            log.warning("HTTP %s from %s refused (%d): %s", scope.get("method"), peer[0],
                        status, reason)
            extra = {"WWW-Authenticate": 'Bearer realm="scorch"'} if status == 401 else None
            await _error(reason, status, extra)(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, more = await _read_body(receive, REQUEST_LIMITS.size)
        if more:
            await _error(f"the body is larger than {REQUEST_LIMITS.size} bytes", 413)(
                scope, receive, send)
            return
        try:
            check(body, REQUEST_LIMITS)
        except OverLimit as err:
            await _error(str(err), 400)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The request's body up to ``limit`` bytes, and whether more was sent."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body read already, then what the client sends next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> Response:
    """A JSON-RPC error without id, as the SDK answers what it refuses."""
    body = JSONRPCError(jsonrpc="2.0", id=None,
                        error=ErrorData(code=INVALID_REQUEST, message=message))
    return Response(body.model_dump_json(by_alias=True, exclude_unset=True),
                    status_code=status, media_type="application/json", headers=headers)


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host``:``port``; CannotListen says why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said outright: asyncio turns Nagle off (TCP_NODELAY) only on connections
    # of a socket whose proto says TCP, and socket.create_server leaves it 0; with Nagle on,
    # every answer written in two parts (headers, body) waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(128)
        return sock
    except OSError as err:
        sock.close()
        why = err.strerror or str(err)
        raise CannotListen(f"cannot serve MCP over HTTP at {host}:{port}: {why}"
                           + ("; is another scorch on that port?" if err.errno == 98 else "")
                           ) from err


@dataclass
class HttpFront:
    """One MCP server on one listening socket, served by uvicorn until :meth:`stop`."""

    server: MCPServer[Any]
    access: Access
    sock: socket.socket
    state_dir: Path = Path()
    """Where the token is."""
    show_token: bool = False
    """Print the token at start (``scorch mcp --http``, to stderr): the person who started
    it needs it. ``scorch run`` names its file only: its log may go to a journal."""

    def __post_init__(self) -> None:
        app = self.server.streamable_http_app(
            streamable_http_path=PATH, transport_security=SDK_CHECKS,
            host=self.access.host, max_sessions=MAX_SESSIONS,
            max_request_body_size=REQUEST_LIMITS.size)
        config = uvicorn.Config(Guard(app, self.access), log_config=None, access_log=False,
                                lifespan="on", timeout_graceful_shutdown=int(GRACE),
                                server_header=False)
        self.uvicorn: uvicorn.Server = _QuietServer(config)
        self._thread: threading.Thread | None = None

    @classmethod
    def open(cls, server: MCPServer[Any], sock: socket.socket, host: str, state_dir: Path,
             open_loopback: bool = False, show_token: bool = False) -> HttpFront:
        """Serve on ``sock``, listening on ``host`` (:func:`listen`); the token in ``state_dir``."""
        port = int(sock.getsockname()[1])
        try:
            access = Access.for_listener(host, port, state_dir, open_loopback)
            front = cls(server, access, sock, state_dir, show_token)
        except BaseException:
            sock.close()
            raise
        return front

    async def serve(self) -> None:
        """Serve in this event loop until :meth:`stop` (or a stop asked by a signal)."""
        where = url(self.access.host, self.access.port)
        if self.access.token is None:
            log.warning("MCP over streamable HTTP at %s, open to every account of this "
                        "machine ([mcp] open_loopback = true): no token asked", where)
        elif self.show_token:
            log.info("MCP over streamable HTTP at %s; every request needs the header "
                     "Authorization: Bearer %s (the token kept in %s)", where,
                     self.access.token, self.state_dir / TOKEN_FILE)
        else:
            log.info("MCP over streamable HTTP at %s; every request needs the token in %s "
                     "(Authorization: Bearer)", where, self.state_dir / TOKEN_FILE)
        await self.uvicorn.serve(sockets=[self.sock])

    def start(self) -> HttpFront:
        """Serve in a thread of its own (``scorch run``)."""
        self._thread = threading.Thread(target=anyio.run, args=(self.serve,),
                                        name="mcp-http", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving: open streams get :data:`GRACE` s, then the server's lifespan ends."""
        self.uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self.sock.close()


class _QuietServer(uvicorn.Server):
    """uvicorn's server without its signal handlers: scorch handles its own signals.

    uvicorn replaces SIGINT's and SIGTERM's handlers in the main thread and raises
    the signal again once it stopped, which would end the process before the
    installation's own shutdown; here the caller sets ``should_exit``.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_until_signal(front: HttpFront) -> None:
    """Serve ``front`` until SIGTERM, SIGINT or SIGHUP (``scorch mcp --http``)."""

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for signum in signals:
                log.info("%s: stopping", signal.Signals(signum).name)
                front.uvicorn.should_exit = True
                return

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(stop_on_signal)
        await front.serve()
        tasks.cancel_scope.cancel()



def serve_http(config_path: Path, host: str, port: int, option: str | None = None) -> None:
    """``scorch mcp --http``: serve the installation of ``config_path`` until a signal
    (``option``: the tools ``--tools`` asks for)."""
    config: Config | None = None
    try:
        config = load_config(config_path)
    except ConfigError:  # the tools say the mistakes (server_for); the token still guards them
        state_dir = default_state_path(config_path)
        log.warning("%s has mistakes: the token is the one of its default state folder, %s",
                    config_path, state_dir)
    else:
        state_dir = config.state_path()
    load_token(state_dir)  # before the port listens: whoever finds it open finds the token
    sock = listen(host, port)  # a taken port says so before any room boots
    try:
        server, close = server_for(config_path, config=config, option=option)
        try:
            front = HttpFront.open(server, sock, host, state_dir, show_token=True,
                                   open_loopback=config is not None and config.mcp.open_loopback)
            anyio.run(serve_until_signal, front)
        finally:
            close()
    finally:
        sock.close()
