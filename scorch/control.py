"""The local control socket: one orchestra per installation, reachable by its owner.

``scorch run`` serves its orchestra on a Unix domain socket in the state
directory (the directory 0700, the socket 0600, peers of another user refused),
so a ``scorch mcp`` started later attaches to it instead of booting a second set
of processes. The wire is newline-delimited JSON::

    -> {"id": 1, "method": "status", "args": {"selector": "lobby"}}
    <- {"id": 1, "result": [...]}    or    {"id": 1, "error": {"type": ..., "message": ...}}

Only the methods of the backend's table are served (``scorch.backend.METHODS``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import socket
import struct
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorch import errors as _errors
from scorch.backend import METHODS, LocalBackend
from scorch.errors import InstanceNotReady, ScorchError, SynthDefError, UnknownSynthDef

if TYPE_CHECKING:
    from scorch.service.orchestra import Orchestra

log = logging.getLogger(__name__)

SOCKET_NAME = "control.sock"
MAX_LINE = 16 * 1024 * 1024  # bytes in one request or reply: code and consoles are small
IDLE_CONNECTIONS = 4  # a client keeps at most this many idle connections open


class RemoteError(ScorchError):
    """The installation answered with an error of a kind this side does not know."""


def _known_errors() -> dict[str, type[Exception]]:
    found: dict[str, type[Exception]] = {
        name: cls for name, cls in vars(_errors).items()
        if isinstance(cls, type) and issubclass(cls, Exception)
    }
    found.update({"UnknownSynthDef": UnknownSynthDef, "SynthDefError": SynthDefError,
                  "ValueError": ValueError, "TimeoutError": TimeoutError})
    return found


def socket_path(state_dir: Path) -> Path:
    """Where the control socket of the installation with this state directory lives."""
    return Path(state_dir) / SOCKET_NAME


# --- server ------------------------------------------------------------------


class ControlServer:
    """Serve an orchestra's backend methods on ``state_dir/control.sock`` (threads)."""

    def __init__(self, orchestra: Orchestra, state_dir: Path) -> None:
        self.path = socket_path(state_dir)
        self.backend = LocalBackend(orchestra)
        self._methods = frozenset(METHODS)
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        """Bind the socket (refusing if another scorch answers on it) and serve in a thread."""
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        if self.path.exists() or self.path.is_symlink():
            if _answers(self.path):
                raise ScorchError(f"another scorch already serves this installation on "
                                  f"{self.path}; stop it first, or attach with `scorch mcp`")
            log.info("removing stale control socket %s", self.path)
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The directory is 0700, so nobody else can reach the socket before the chmod.
        sock.bind(str(self.path))
        os.chmod(self.path, 0o600)
        sock.listen(16)
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
            for conn in list(self._conns):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _accept(self) -> None:
        """Accept connections until stopped (runs in the accept thread)."""
        while not self._stopping.is_set() and self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                break
            if not _same_user(conn):
                log.warning("refused a control connection from another user")
                conn.close()
                continue
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), name="control-conn",
                             daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        """Answer one connection's requests in order until the client closes it (own thread)."""
        try:
            with conn, conn.makefile("rb") as reader:
                while True:
                    line = reader.readline(MAX_LINE)
                    if not line:
                        return
                    reply = self.handle(line)
                    conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError as err:
            log.debug("control connection closed: %s", err)
        finally:
            with self._lock:
                self._conns.discard(conn)

    def handle(self, line: bytes) -> dict[str, Any]:
        """Answer one request line; never raises."""
        request_id: Any = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            method = request.get("method")
            args = request.get("args") or {}
            if method not in self._methods:
                raise ValueError(f"unknown control method {method!r}")
            if not isinstance(args, dict):
                raise ValueError("args must be an object")
            result = getattr(self.backend, method)(**args)
            return {"id": request_id, "result": result}
        except Exception as err:
            if not isinstance(err, ScorchError | KeyError | ValueError | TimeoutError):
                log.exception("control request failed")
            kind = type(err).__name__
            if isinstance(err, json.JSONDecodeError):
                kind = "ValueError"
            return {"id": request_id, "error": {"type": kind, "message": str(err)}}


def _same_user(conn: socket.socket) -> bool:
    if not sys.platform.startswith("linux"):
        return True  # the 0600 socket in a 0700 directory already keeps others out
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid in (os.getuid(), 0)


# --- client ------------------------------------------------------------------


class _Connection:
    """One connected socket and its line reader."""

    def __init__(self, path: Path) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
        except OSError as err:
            sock.close()
            raise InstanceNotReady(
                f"the scorch installation behind {path} is not running ({err.strerror}); "
                "start it again (`scorch run`), then restart scorch in Claude Desktop"
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

    def __init__(self, path: Path, errors: Mapping[str, type[Exception]] | None = None,
                 idle: int = IDLE_CONNECTIONS) -> None:
        self.path = Path(path)
        self._errors = _known_errors()
        self._errors.update(errors or {})
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
             timeout: float = 30.0) -> Any:
        """Call ``method``; re-raise a remote error as the same exception kind."""
        request_id = next(self._ids)
        payload = json.dumps({"id": request_id, "method": method, "args": args or {}}).encode()
        while True:
            conn, reused = self._take()
            conn.sock.settimeout(timeout)
            try:
                conn.sock.sendall(payload + b"\n")
                line = conn.reader.readline(MAX_LINE)
            except TimeoutError as err:
                # A late answer would be read by the next call on this connection.
                conn.close()
                raise InstanceNotReady(f"the installation did not answer {method!r} "
                                       f"within {timeout:g} s") from err
            except OSError:
                line = b""
            if line:
                break
            conn.close()
            if not reused:
                raise InstanceNotReady(f"the scorch installation behind {self.path} "
                                       "closed the connection (did it stop?)")
            # An idle connection the server has closed: try the next one, or a new one.
        if not line.endswith(b"\n"):
            conn.close()  # the rest of this answer is still on the wire
            raise RemoteError(f"the answer to {method!r} is longer than {MAX_LINE} bytes")
        self._give_back(conn)
        reply = json.loads(line)
        if "error" in reply:
            raise self._error(reply["error"])
        return reply.get("result")

    def _error(self, error: dict[str, Any]) -> Exception:
        kind = str(error.get("type", "")), str(error.get("message", ""))
        cls = self._errors.get(kind[0])
        if cls is None:
            return RemoteError(f"{kind[0]}: {kind[1]}")
        # Rebuilt without __init__: some kinds take structured arguments locally.
        err = cls.__new__(cls, kind[1])
        err.args = (kind[1],)
        return err

    def close(self) -> None:
        """Close the idle connections; those in use close when their call ends."""
        with self._lock:
            self._closed = True
            conns, self._idle = self._idle, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()


def _answers(path: Path, timeout: float = 1.0) -> bool:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        sock.sendall(b'{"id": 0, "method": "ping", "args": {}}\n')
        with sock.makefile("rb") as reader:
            return bool(reader.readline(MAX_LINE))
    except OSError:
        return False
    finally:
        sock.close()


def find_running(state_dir: Path) -> Path | None:
    """The control socket of a running installation with this state directory, if one answers."""
    path = socket_path(state_dir)
    return path if path.exists() and _answers(path) else None
