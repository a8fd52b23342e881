"""The control socket's wire: where it lives, how a line looks, and a probe.

``scorch run`` serves its operations on a Unix domain socket in the state
directory (the directory 0700, the socket 0600, peers of another user refused).
The wire is newline-delimited JSON, one request and one answer per line::

    -> {"id": 1, "method": "status", "args": {"instance": "lobby"}}
    <- {"id": 1, "result": {...}}   or   {"id": 1, "error": {"type": ..., "message": ...}}

A line with ``"closed": true`` (and ``"id": null``) is the server's last on that
connection: too many connections, or a request too large.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

SOCKET_NAME = "control.sock"
MAX_LINE = 16 * 1024 * 1024  # bytes in one reply: consoles and results are small
MAX_REQUEST = 8 * 1024 * 1024  # bytes in one request line


def socket_path(state_dir: Path) -> Path:
    """Where the control socket of the installation with this state directory lives."""
    return Path(state_dir) / SOCKET_NAME


def request_line(request_id: int, method: str, args: dict[str, Any]) -> bytes:
    """One request, encoded for the wire."""
    return json.dumps({"id": request_id, "method": method, "args": args}).encode() + b"\n"


def answers(path: Path, timeout: float = 1.0) -> bool:
    """True if a scorch answers a ping on the socket at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        sock.sendall(request_line(0, "ping", {}))
        with sock.makefile("rb") as reader:
            return bool(reader.readline(MAX_LINE))
    except OSError:
        return False
    finally:
        sock.close()


def find_running(state_dir: Path) -> Path | None:
    """The control socket of a running installation with this state directory, if one answers."""
    path = socket_path(state_dir)
    return path if path.exists() and answers(path) else None
