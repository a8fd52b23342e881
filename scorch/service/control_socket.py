"""Serve the API on the installation's control socket (see ``scorch.service.wire``).

``scorch run`` serves its orchestra here, so ``scorch mcp`` and the operator's
CLI attach to it instead of booting a second set of processes. Every operation
of :data:`scorch.service.api.OPERATIONS` is served, validated by its own schema.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorch.errors import InvalidRequest, ScorchError
from scorch.service.local import LocalService
from scorch.service.wire import MAX_LINE, answers, socket_path

if TYPE_CHECKING:
    from scorch.service.orchestra import Orchestra

log = logging.getLogger(__name__)


class ControlServer:
    """Serve an orchestra's operations on ``state_dir/control.sock`` (threads)."""

    def __init__(self, orchestra: Orchestra, state_dir: Path) -> None:
        self.path = socket_path(state_dir)
        self.service = LocalService(orchestra)
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
            if answers(self.path):
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
            try:
                request = json.loads(line)
            except ValueError as err:
                raise InvalidRequest(f"a control request must be one JSON object: {err}") from None
            if not isinstance(request, dict):
                raise InvalidRequest("a control request must be a JSON object")
            request_id = request.get("id")
            args = request.get("args") or {}
            if not isinstance(args, dict):
                raise InvalidRequest("args must be a JSON object")
            result = self.service.call(str(request.get("method")), args)
            return {"id": request_id, "result": result.model_dump(mode="json")}
        except ScorchError as err:
            return {"id": request_id, "error": {"type": type(err).__name__, "message": str(err)}}
        except Exception as err:
            log.exception("control request failed")
            return {"id": request_id, "error": {
                "type": "InternalError",
                "message": f"internal error ({type(err).__name__}: {err}); the installation's "
                "log has the details"}}


def _same_user(conn: socket.socket) -> bool:
    if not sys.platform.startswith("linux"):
        return True  # the 0600 socket in a 0700 directory already keeps others out
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid in (os.getuid(), 0)
