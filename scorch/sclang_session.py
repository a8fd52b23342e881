"""Match sclang's output to the requests that caused it.

The reader thread feeds every line; callers get a ``Future`` per request.
Pings (a marker round trip) tell the watchdog that the interpreter still answers.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from scorch.sclang_protocol import EVAL_SILENT, ExecuteResult, Framer, parse_output

Writer = Callable[[bytes], None]


@dataclass
class _Pending:
    code: str
    future: Future[ExecuteResult]
    sent_at: float
    lines: list[str] = field(default_factory=list)
    begun: bool = False


class SclangSession:
    """One sclang process's requests in flight; thread-safe."""

    def __init__(self, write: Writer, framer: Framer | None = None, instance: str = "") -> None:
        self._write = write
        self.framer = framer or Framer()
        self.instance = instance
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._current: int | None = None
        self._lock = threading.Lock()
        self.last_pong = time.monotonic()
        """``time.monotonic()`` when sclang last answered anything we sent."""
        self._ping_prefix = f"@@scorch-{self.framer.token}-ping@@"
        self._marks: dict[str, threading.Event] = {}

    def busy(self) -> bool:
        """True while a request is being evaluated (a busy sclang is not hung)."""
        with self._lock:
            return bool(self._pending)

    def submit(self, code: str) -> tuple[int, Future[ExecuteResult]]:
        """Send ``code``; return its request id and a future for the result."""
        request_id = next(self._ids)
        data = self.framer.frame(request_id, code)
        future: Future[ExecuteResult] = Future()
        with self._lock:
            self._pending[request_id] = _Pending(code, future, time.monotonic())
        try:
            self._write(data)
        except OSError as err:
            with self._lock:
                self._pending.pop(request_id, None)
            raise BrokenPipeError(f"sclang is not reading its input: {err}") from err
        return request_id, future

    def ping(self) -> None:
        """Ask sclang to print a ping marker (answered only if the interpreter runs)."""
        self._write(f'"{self._ping_prefix}".postln;'.encode() + EVAL_SILENT)

    def expect(self, marker: str) -> threading.Event:
        """Return an event set when a line containing ``marker`` appears."""
        event = threading.Event()
        with self._lock:
            self._marks[marker] = event
        return event

    def feed(self, line: str) -> None:
        """Take one line sclang printed (called from the reader thread)."""
        if self._ping_prefix in line:
            self.last_pong = time.monotonic()
            return
        if self._marks:
            with self._lock:
                for marker, event in list(self._marks.items()):
                    if marker in line:
                        event.set()
                        del self._marks[marker]
        found = self.framer.marker(line)
        with self._lock:
            if found is None:
                if self._current is not None and self._current in self._pending:
                    self._pending[self._current].lines.append(line)
                return
            kind, request_id, before = found
            pending = self._pending.get(request_id)
            if pending is None:
                return
            self.last_pong = time.monotonic()
            if kind == "begin":
                self._current = request_id
                pending.begun = True
                return
            if before:
                pending.lines.append(before)
            del self._pending[request_id]
            self._current = None
        result = parse_output(pending.lines, pending.code)
        elapsed = time.monotonic() - pending.sent_at
        pending.future.set_result(
            ExecuteResult(result.ok, result.value, result.posted, result.error, elapsed,
                          self.instance, result.warnings)
        )

    def forget(self, request_id: int) -> None:
        """Drop a request whose caller gave up."""
        with self._lock:
            self._pending.pop(request_id, None)

    def fail_all(self, error: BaseException) -> None:
        """Fail every request in flight (sclang died or was restarted)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._current = None
        for item in pending.values():
            if not item.future.done():
                item.future.set_exception(error)
