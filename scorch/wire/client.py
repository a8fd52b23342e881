"""A client of a control socket: a small pool of connections, calls in parallel.

The wire is ``scorch.wire.envelope``'s. This knows nothing of the operations
(``scorch.api.remote`` validates them), so the coordinator's channels and
``scorch bridge`` use it too.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from pathlib import Path
from typing import Any

from scorch.errors import NoAnswer, NotRunning, RemoteError, RoomNotReady
from scorch.wire.envelope import MAX_LINE, Reply, decode_reply, request_line

IDLE_CONNECTIONS = 4  # a client keeps at most this many idle connections open
EVICTIONS = 3  # times a call asks again after a busy server closed its new connection


class _Connection:
    """One connected socket and its line reader."""

    def __init__(self, path: Path) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
        except OSError as err:
            sock.close()
            raise NotRunning(
                f"the scorch installation behind {path} is not running ({err.strerror}); "
                "start it again (`scorch run`)"
            ) from err
        self.sock = sock
        self.reader = sock.makefile("rb")

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


class ControlClient:
    """Call a control server over a small pool of connections, so calls run in parallel.

    A call takes an idle connection (or opens one), and gives it back when the
    answer is in; at most ``idle`` connections are kept, extras are closed. The
    pool is not tied to threads: the MCP server's worker threads come and go,
    and a connection per thread would outlive them.
    """

    def __init__(self, path: Path, idle: int = IDLE_CONNECTIONS) -> None:
        self.path = Path(path)
        self._ids = itertools.count(1)
        self._max_idle = idle
        self._idle: list[_Connection] = []  # most recently used last
        self._closed = False
        self._lock = threading.Lock()

    def _take(self) -> tuple[_Connection, bool]:
        """An idle connection (True: it may have gone stale) or a new one."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return _Connection(self.path), False

    def _give_back(self, conn: _Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def call(self, method: str, args: dict[str, Any] | None = None,
             timeout: float = 30.0, key: str | None = None) -> Any:
        """Call ``method``; re-raise a remote error as the same exception kind.

        ``key``: the request's own id (``Request.key``), so that it may be sent again
        when its connection drops mid-call and still run once.
        """
        line = request_line(next(self._ids), method, args or {}, key)
        return self.roundtrip(line, method, timeout, resend=key is not None).unwrap()

    def roundtrip(self, payload: bytes, method: str, timeout: float,
                  resend: bool = False) -> Reply:
        """Send one request line and return its answer (asking again when evicted).

        A connection that was idle may have been closed by the server: the request
        goes again on another. ``resend``: the request carries a key, so it goes
        again once on a new connection after its own dropped mid-call too (the
        server answers a key it ran with its first reply).
        """
        evictions = 0
        while True:
            conn, reused = self._take()
            conn.sock.settimeout(timeout)
            try:
                conn.sock.sendall(payload)
                line = conn.reader.readline(MAX_LINE)
            except TimeoutError as err:
                # A late answer would be read by the next call on this connection.
                conn.close()
                raise NoAnswer(f"the installation did not answer {method!r} "
                                       f"within {timeout:g} s") from err
            except OSError:
                line = b""
            if not line:
                conn.close()
                if not reused and not resend:
                    raise RoomNotReady(f"the scorch installation behind {self.path} "
                                           "closed the connection (did it stop?)")
                resend = resend and reused  # once on a new connection, not again
                continue  # an idle connection the server has closed: the next, or a new one
            if not line.endswith(b"\n"):
                conn.close()  # the rest of this answer is still on the wire
                raise RemoteError(f"the answer to {method!r} is longer than {MAX_LINE} bytes")
            try:
                reply = decode_reply(line, method)
            except RemoteError:
                conn.close()
                raise
            if not reply.closed:
                self._give_back(conn)
                break
            conn.close()  # the server's last line on this connection
            if not (reply.evicted and evictions < EVICTIONS):
                break
            evictions += 1  # closed by a busy server before it read the request: ask again
        return reply

    def close(self) -> None:
        """Close the idle connections; those in use close when their call ends."""
        with self._lock:
            self._closed = True
            conns, self._idle = self._idle, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()
