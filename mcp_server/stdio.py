"""The protocol's own streams: private file descriptors, lines read without a thread.

Only the protocol reaches stdout: file descriptor 1 points at stderr for the
whole run (children, stray prints, C libraries), and the protocol writes to a
private duplicate of the real stdout. stdin is read without a thread, so a
signal's cancel ends the read at once.

A line that is not JSON-RPC is answered as JSON-RPC 2.0 says (-32700 parse
error, -32600 invalid request) here, before the SDK sees it: the SDK drops such
lines without an answer, and a client would wait for one forever.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class _PipeLines:
    """Lines of text from a file descriptor, read without a thread so a cancel ends it.

    (A thread blocked in ``read()`` would hold shutdown until the client writes again.)
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False
        os.set_blocking(fd, False)

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        while b"\n" not in self._buffer:
            if self._eof:
                if not self._buffer:
                    raise StopAsyncIteration
                line, self._buffer = self._buffer, b""
                return line.decode("utf-8", errors="replace")
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            except OSError as err:
                if err.errno != errno.EBADF:
                    log.warning("reading stdin failed: %s", err)
                chunk = b""
            if not chunk:
                self._eof = True
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace") + "\n"


class _Writer:
    """The async text writer stdio_server expects, on the private stdout duplicate."""

    def __init__(self, fd: int) -> None:
        self._file = open(fd, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        self._lock = threading.Lock()  # the SDK and error answers write from two tasks

    def _write(self, text: str, flush: bool) -> None:
        with self._lock:
            self._file.write(text)
            if flush:
                self._file.flush()

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._write, text, False)

    async def flush(self) -> None:
        await anyio.to_thread.run_sync(self._write, "", True)


class _Checked:
    """The lines the SDK reads, less the malformed ones, which are answered here."""

    def __init__(self, lines: Any, writer: _Writer) -> None:
        self._lines = lines
        self._writer = writer

    def __aiter__(self) -> _Checked:
        return self

    async def __anext__(self) -> str:
        async for line in self._lines:
            if not line.strip():
                continue
            answer = error_answer(line)
            if answer is None:
                return str(line)
            log.info("answered a malformed JSON-RPC line: %s", answer["error"]["message"])
            await self._writer.write(json.dumps(answer) + "\n")
            await self._writer.flush()
        raise StopAsyncIteration


def error_answer(line: str) -> dict[str, Any] | None:
    """The JSON-RPC error answer for a line that is no JSON-RPC message; None if it is one."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError:
        pass
    try:
        data = json.loads(line)
    except ValueError as err:
        return _error(None, PARSE_ERROR, f"Parse error: {err}")
    request_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        request_id = None
    what = ("a batch (MCP has none)" if isinstance(data, list)
            else "not a JSON-RPC 2.0 request, notification or response")
    return _error(request_id, INVALID_REQUEST, f"Invalid Request: {what}")


def _error(request_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@contextlib.contextmanager
def protocol_streams() -> Iterator[tuple[Any, Any]]:
    """Move the protocol to private fds; point fd 0 at /dev/null and fd 1 at stderr."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    os.set_inheritable(wire_in, False)
    os.set_inheritable(wire_out, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        readable = stat.S_ISFIFO(os.fstat(wire_in).st_mode) or stat.S_ISSOCK(
            os.fstat(wire_in).st_mode)
        lines: Any = _PipeLines(wire_in) if readable else anyio.wrap_file(
            open(wire_in, encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115
        writer = _Writer(wire_out)
        yield _Checked(lines, writer), writer
    finally:
        os.set_blocking(wire_in, True)
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
