"""``scorch bridge``: the control wire over stdin and stdout, for ``ssh HOST scorch bridge``.

A coordinator on another machine runs ``ssh HOST scorch bridge --config FILE
--host NAME`` and speaks the control socket's wire (``scorch.wire.envelope``)
on the ssh channel. The bridge hands each request line to the host's
``scorch run`` over its control socket and writes the answer back. Requests
run in parallel (a slow ``execute`` never holds a ``status`` behind it), so
answers may come out of order: each carries its request's ``id``. A request's
``key`` goes on to the server as it came: a keyed request whose connection to
the server drops mid-call is sent again on a new one, and runs once.

When no ``scorch run`` answers on the socket, each request is answered with a
``NotRunning`` error and the bridge stays: the coordinator sees the host
reachable but not running, and the next request reaches a ``scorch run`` that
has started meanwhile. The bridge ends when its input ends (ssh went away).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from scorch.errors import ScorchError
from scorch.wire.client import ControlClient
from scorch.wire.envelope import (
    MAX_REQUEST,
    BadRequest,
    Reply,
    WireError,
    decode_request,
    encode,
)

log = logging.getLogger(__name__)

#: Requests one bridge runs at once (each holds one control connection of the 64).
IN_FLIGHT = 8
#: Seconds the bridge waits for one answer; the coordinator gives up sooner on its own.
ANSWER_WITHIN = 900.0


class Bridge:
    """Carry request lines from ``source`` to the control socket at ``path``, answers back."""

    def __init__(self, path: Path, source: BinaryIO, sink: BinaryIO,
                 in_flight: int = IN_FLIGHT) -> None:
        self.path = Path(path)
        self._source = source
        self._sink = sink
        self._client = ControlClient(self.path, idle=in_flight)
        self._write_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(in_flight)
        self._pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="bridge")

    def run(self) -> int:
        """Serve until the input ends; 0."""
        try:
            while True:
                line = self._source.readline(MAX_REQUEST + 1)
                if not line:
                    return 0
                if not line.endswith(b"\n") and len(line) > MAX_REQUEST:
                    self._skip_line()  # one answer for the whole line, from its head
                if not line.strip():
                    continue
                self._slots.acquire()  # at most IN_FLIGHT at once: the rest wait in the pipe
                self._pool.submit(self._answer, line).add_done_callback(
                    lambda _: self._slots.release())
        finally:
            self._pool.shutdown(wait=True)
            self._client.close()

    def _skip_line(self) -> None:
        """Read on to the end of an over-long line."""
        while (rest := self._source.readline(MAX_REQUEST)) and not rest.endswith(b"\n"):
            pass

    def _answer(self, line: bytes) -> None:
        request_id: Any = None
        try:
            request = decode_request(line)
            request_id = request.id
            reply = self._client.roundtrip(encode(request), request.method, ANSWER_WITHIN,
                                           resend=request.key is not None)
            if reply.closed:  # the server's closing line names no request
                reply = Reply(id=request_id, error=reply.error)
        except BadRequest as err:
            reply = Reply.failed(err.request_id, err)
        except ScorchError as err:
            reply = Reply.failed(request_id, err)
        except Exception as err:  # an answer for every request, whatever happened
            log.exception("bridge request failed")
            reply = Reply(id=request_id, error=WireError(
                type="InternalError", code="INTERNAL", message=f"the bridge failed: {err}"))
        data = encode(reply)
        with self._write_lock:
            self._sink.write(data)
            self._sink.flush()
