"""The protocol's own streams, as the SDK reads and writes them, behind the early front.

Only the protocol reaches stdout: :class:`~mcp_server.early.EarlyFront` moved
it to private file descriptors before anything else ran (fd 1 points at stderr
for the whole run: children, stray prints, C libraries). The SDK reads the
client's lines from the front's pipe, without a thread, so a signal's cancel
ends the read at once; it writes through the front, past the filter that drops
its answers to what the front answered early.

A line that is not JSON-RPC is answered as JSON-RPC 2.0 says (-32700 parse
error, -32600 invalid request) here, before the SDK sees it: the SDK drops such
lines without an answer, and a client would wait for one forever. So is a line
over :data:`~scorch.wire.limits.REQUEST_LIMITS` (too long, too deep, too many
keys: -32600, with its id when it came first), before anything decodes it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError

from mcp_server.early import AnswerFilter, EarlyFront
from scorch.wire import REQUEST_LIMITS, OverLimit, check

log = logging.getLogger(__name__)


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
    """The async text writer stdio_server expects: the front's stream, past its filter."""

    def __init__(self, front: EarlyFront, answers: AnswerFilter) -> None:
        self._front = front
        self._answers = answers
        self._lock = threading.Lock()  # the SDK and error answers write from two tasks

    def _write(self, text: str) -> None:
        with self._lock:
            passed = self._answers.passes(text)
            if passed:
                self._front.write(passed)

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._write, text)

    async def flush(self) -> None:
        """Nothing to do: every whole line is written at once."""


class _Checked:
    """The lines the SDK reads, less the malformed ones, which are answered here."""

    def __init__(self, lines: Any, writer: _Writer, answers: AnswerFilter) -> None:
        self._lines = lines
        self._writer = writer
        self._answers = answers

    def __aiter__(self) -> _Checked:
        return self

    async def __anext__(self) -> str:
        async for line in self._lines:
            if not line.strip():
                continue
            answer = error_answer(line)
            if answer is None:
                self._answers.saw(line)
                return str(line)
            log.info("answered a malformed JSON-RPC line: %s", answer.error.message)
            await self._writer.write(answer.model_dump_json(by_alias=True, exclude_unset=True)
                                     + "\n")
            await self._writer.flush()
        raise StopAsyncIteration


def error_answer(line: str) -> JSONRPCError | None:
    """The JSON-RPC error answer for a line that is no JSON-RPC message; None if it is one."""
    try:
        check(line, REQUEST_LIMITS)
    except OverLimit as err:
        return _error(err.request_id, INVALID_REQUEST, f"Invalid Request: {err}")
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


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


@contextlib.contextmanager
def protocol_streams(front: EarlyFront) -> Iterator[tuple[Any, Any]]:
    """The SDK's streams: lines from the front's pipe, answers through the front."""
    answers = AnswerFilter(front)
    writer = _Writer(front, answers)
    try:
        yield _Checked(_PipeLines(front.sdk_in), writer, answers), writer
    finally:
        os.close(front.sdk_in)
