"""Serve the API on the installation's control socket (see ``scorch.wire.envelope``).

``scorch run`` serves its operations here, so ``scorch mcp`` and the operator's
CLI attach to it instead of booting a second set of processes. Every operation
of :data:`scorch.api.ops.REGISTRY` is served, validated by its own schema.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from scorch.errors import ControlBusy, InvalidRequest, ScorchError
from scorch.wire.envelope import (
    MAX_REQUEST,
    BadRequest,
    Reply,
    Request,
    WireError,
    answers,
    decode_request,
    encode,
    socket_path,
)
from scorch.wire.once import JOURNAL, Once

log = logging.getLogger(__name__)

#: Connections served at once (a thread each): attached MCP servers keep a few
#: each, the operator's commands one per call.
MAX_CONNECTIONS = 64
#: Seconds a connection may stay silent between requests before it is closed.
IDLE_TIMEOUT = 600.0
#: Seconds a new connection may take to send its first request.
HELLO_TIMEOUT = 30.0
#: Seconds a reply may take to be taken by its client.
SEND_TIMEOUT = 30.0
#: Seconds to pause accepting when the process is out of file descriptors.
ACCEPT_PAUSE = 0.1
LOG_EVERY = 10.0


@dataclass
class _Connection:
    """One accepted connection, as the accept thread and its serving thread share it."""

    sock: socket.socket
    requests: int = 0
    evicted: bool = False


class Served(Protocol):
    """What the socket serves: operations by name (a ``scorch.api.local.LocalService``)."""

    def call(self, name: str, args: dict[str, Any]) -> BaseModel:
        """Run operation ``name`` with ``args``; raise a ScorchError to refuse."""
        ...

    def idempotent(self, name: str, args: dict[str, Any]) -> bool:
        """Whether running this call twice does what running it once does (no key kept)."""
        ...


class ControlServer:
    """Serve a service's operations on ``state_dir/control.sock`` (threads, bounded).

    At most ``max_connections`` are served at once, a thread each. When one more
    arrives, the oldest connection that has sent nothing yet is closed with a
    line saying why (a client that connects and waits holds no slot from one that
    asks); when every slot has sent a request, the newcomer is refused with a
    line saying why. A connection silent for ``idle_timeout`` seconds (one that
    never sent anything: ``hello_timeout``) is closed. A request line longer than
    ``MAX_REQUEST`` bytes is answered with an error, and its connection closed.
    Running out of file descriptors pauses accepting; it never ends it.

    A request with a ``key`` whose call is not idempotent runs at most once
    (:class:`~scorch.wire.once.Once`): a resend gets the first run's reply.
    """

    def __init__(self, service: Served, state_dir: Path,
                 max_connections: int = MAX_CONNECTIONS, idle_timeout: float = IDLE_TIMEOUT,
                 hello_timeout: float = HELLO_TIMEOUT) -> None:
        self.path = socket_path(state_dir)
        self.service = service
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.hello_timeout = hello_timeout
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._conns: list[_Connection] = []  # oldest first
        self._lock = threading.Lock()
        self._complained = -LOG_EVERY
        self.once = Once(journal=state_dir / JOURNAL)
        """The keys of recent calls that are not idempotent, and their replies."""

    def start(self) -> None:
        """Bind the socket (refusing if another scorch answers on it) and serve in a thread."""
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        if self.path.exists() or self.path.is_symlink():
            if answers(self.path):
                raise ScorchError(f"another scorch already serves this installation on "
                                  f"{self.path}; stop it first, or attach with `scorch mcp`")
            log.info("removing stale control socket %s", self.path)
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The directory is 0700, so nobody else can reach the socket before the chmod.
        sock.bind(str(self.path))
        os.chmod(self.path, 0o600)
        sock.listen(64)
        self._sock = sock
        self._thread = threading.Thread(target=self._accept, name="control-accept", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, close every connection and remove the socket file."""
        self._stopping.set()
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    @property
    def connections(self) -> int:
        """How many connections are served now."""
        with self._lock:
            return sum(not c.evicted for c in self._conns)

    def _accept(self) -> None:
        """Accept connections until stopped (runs in the accept thread)."""
        while not self._stopping.is_set() and self._sock is not None:
            try:
                sock, _ = self._sock.accept()
            except OSError as err:
                if self._stopping.is_set() or self._sock is None:
                    return
                if err.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._out_of_descriptors(err)
                    self._stopping.wait(ACCEPT_PAUSE)
                continue
            if not _same_user(sock):
                log.warning("refused a control connection from another user")
                sock.close()
                continue
            self._admit(sock)

    def _admit(self, sock: socket.socket) -> None:
        conn = _Connection(sock)
        with self._lock:
            live = [c for c in self._conns if not c.evicted]
            full = len(live) >= self.max_connections
            victim = next((c for c in live if c.requests == 0), None) if full else None
            if full and victim is None:
                refused = True
            else:
                refused = False
                if victim is not None:
                    victim.evicted = True
                self._conns.append(conn)
        if refused:
            _close_with(sock, ControlBusy(
                f"scorch serves at most {self.max_connections} control connections at once, "
                "and every one is in use; try again shortly"))
            return
        if victim is not None:
            with contextlib.suppress(OSError):
                victim.sock.shutdown(socket.SHUT_RD)  # its thread says why, then closes it
        try:
            threading.Thread(target=self._serve, args=(conn,), name="control-conn",
                             daemon=True).start()
        except RuntimeError as err:  # no thread to be had: refuse rather than fall over
            self._forget(conn)
            _close_with(sock, ControlBusy(f"scorch could not serve this connection ({err})"))

    def _out_of_descriptors(self, err: OSError) -> None:
        now = time.monotonic()
        if now - self._complained >= LOG_EVERY:
            self._complained = now
            log.warning("control socket: cannot accept (%s); %d connections served; "
                        "waiting for descriptors to free up", err.strerror, self.connections)

    def _forget(self, conn: _Connection) -> None:
        with self._lock:
            if conn in self._conns:
                self._conns.remove(conn)

    def _serve(self, conn: _Connection) -> None:
        """Answer one connection's requests in order until the client closes it (own thread)."""
        sock = conn.sock
        try:
            sock.settimeout(self.hello_timeout)
            with sock, sock.makefile("rb") as reader:
                while True:
                    line = reader.readline(MAX_REQUEST + 1)
                    with self._lock:
                        evicted = conn.evicted
                        conn.requests += bool(line)
                    if evicted:
                        _send(sock, ControlBusy(
                            f"scorch closed this control connection: {self.max_connections} "
                            "were open and this one had sent nothing"), evicted=True)
                        return
                    if not line:
                        return
                    if len(line) > MAX_REQUEST:
                        _send(sock, InvalidRequest(
                            f"a control request is at most {MAX_REQUEST} bytes; this one was "
                            "longer, so the connection is closed"))
                        return
                    reply = self.handle(line)
                    sock.settimeout(SEND_TIMEOUT)  # a client that never reads is let go
                    sock.sendall(encode(reply))
                    sock.settimeout(self.idle_timeout)
        except TimeoutError:
            log.debug("control connection idle too long: closed")
        except OSError as err:
            log.debug("control connection closed: %s", err)
        finally:
            self._forget(conn)

    def handle(self, line: bytes) -> Reply:
        """Answer one request line; never raises."""
        try:
            request = decode_request(line)
        except BadRequest as err:
            return Reply.failed(err.request_id, err)
        if request.key is not None and not self._idempotent(request):
            return self.once.run(request, lambda: self._answer(request))
        return self._answer(request)

    def _idempotent(self, request: Request) -> bool:
        try:
            return self.service.idempotent(request.method, request.args)
        except ScorchError:
            return True  # a request its operation refuses runs nothing: no key to keep

    def _answer(self, request: Request) -> Reply:
        """Run one request; never raises."""
        request_id = request.id
        try:
            result = self.service.call(request.method, request.args)
            return Reply(id=request_id, result=result.model_dump(mode="json"))
        except ScorchError as err:
            return Reply.failed(request_id, err)
        except Exception as err:
            log.exception("control request failed")
            return Reply(id=request_id, error=WireError(
                type="InternalError", code="INTERNAL",
                message=f"internal error ({type(err).__name__}: {err}); the installation's "
                "log has the details"))


def _same_user(conn: socket.socket) -> bool:
    if not sys.platform.startswith("linux"):
        return True  # the 0600 socket in a 0700 directory already keeps others out
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid in (os.getuid(), 0)


def _send(sock: socket.socket, error: ScorchError, evicted: bool = False) -> None:
    """Send a closing error line: ``closed`` tells a client not to wait for more.

    ``evicted``: the connection was closed before it asked anything, so a
    client may ask again on a new one.
    """
    line = Reply(error=WireError.of(error), closed=True, evicted=evicted)
    with contextlib.suppress(OSError):
        sock.settimeout(1.0)
        sock.sendall(encode(line))


def _close_with(sock: socket.socket, error: ScorchError) -> None:
    _send(sock, error)
    sock.close()
