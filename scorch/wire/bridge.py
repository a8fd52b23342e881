"""``scorch bridge``: the control wire over stdin and stdout, for ``ssh HOST scorch bridge``.

A coordinator on another machine runs ``ssh HOST scorch bridge --config FILE
--host NAME`` and speaks the control socket's wire (``scorch.wire.envelope``)
on the ssh channel. The bridge hands each request line to the host's
``scorch run`` over its control socket and writes the answer back. Requests
run in parallel (a slow ``execute`` never holds a ``status`` behind it), so
answers may come out of order: each carries its request's ``id``.

When no ``scorch run`` answers on the socket, each request is answered with a
``NotRunning`` error and the bridge stays: the coordinator sees the host
reachable but not running, and the next request reaches a ``scorch run`` that
has started meanwhile. The bridge ends when its input ends (ssh went away).
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from scorch.errors import NotRunning, ScorchError
from scorch.wire.client import ControlClient
from scorch.wire.envelope import MAX_REQUEST

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
                if not line.strip():
                    continue
                self._slots.acquire()  # at most IN_FLIGHT at once: the rest wait in the pipe
                self._pool.submit(self._answer, line).add_done_callback(
                    lambda _: self._slots.release())
        finally:
            self._pool.shutdown(wait=True)
            self._client.close()

    def _answer(self, line: bytes) -> None:
        request_id: Any = None
        try:
            request = json.loads(line)
            request_id = request.get("id") if isinstance(request, dict) else None
            method = str(request.get("method")) if isinstance(request, dict) else "?"
            if len(line) > MAX_REQUEST:
                raise ScorchError(f"a request is at most {MAX_REQUEST} bytes")
            reply = self._client.roundtrip(line if line.endswith(b"\n") else line + b"\n",
                                           method, ANSWER_WITHIN)
            if reply.get("id") is None:  # the server's closing line names no request
                reply["id"] = request_id
                reply.pop("closed", None)
                reply.pop("evicted", None)
        except ValueError as err:
            reply = _error(request_id, "InvalidRequest", f"not a JSON request line: {err}")
        except NotRunning as err:
            reply = _error(request_id, "NotRunning", str(err))
        except ScorchError as err:
            reply = _error(request_id, type(err).__name__, str(err))
        except Exception as err:  # an answer for every request, whatever happened
            log.exception("bridge request failed")
            reply = _error(request_id, "InternalError", f"the bridge failed: {err}")
        self._write(reply)

    def _write(self, reply: dict[str, Any]) -> None:
        data = json.dumps(reply).encode() + b"\n"
        with self._write_lock:
            self._sink.write(data)
            self._sink.flush()


def _error(request_id: Any, kind: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"type": kind, "message": message}}
