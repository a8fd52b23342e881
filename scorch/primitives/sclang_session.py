"""Match sclang's output to the requests that caused it.

The reader thread feeds every line; callers get a ``Future`` per request.
Pings (a marker round trip) tell the watchdog that the interpreter still answers.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from scorch.errors import InstanceNotReady
from scorch.primitives.sclang_protocol import EVAL_SILENT, ExecuteResult, Framer, parse_output

Writer = Callable[[bytes], None]


#: How long code sent without a timeout (startup code, restores) may take.
DEFAULT_TIMEOUT = 30.0


#: Lines kept from each end of one request's output; the middle of a flood of
#: posts is dropped (and counted) so no request can hold unbounded memory.
KEEP_LINES = 500


@dataclass
class _Pending:
    code: str
    future: Future[ExecuteResult]
    sent_at: float
    deadline: float
    head: list[str] = field(default_factory=list)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=KEEP_LINES))
    dropped: int = 0

    def add(self, line: str) -> None:
        if len(self.head) < KEEP_LINES:
            self.head.append(line)
            return
        if len(self.tail) == KEEP_LINES:
            self.dropped += 1
        self.tail.append(line)

    def lines(self) -> list[str]:
        if not self.dropped:
            return [*self.head, *self.tail]
        return [*self.head, f"... ({self.dropped} lines not kept) ...", *self.tail]


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
        """True while a request is being evaluated within its time (then sclang is not hung)."""
        now = time.monotonic()
        with self._lock:
            return bool(self._pending) and all(p.deadline > now for p in self._pending.values())

    def submit(
        self, code: str, timeout: float = DEFAULT_TIMEOUT
    ) -> tuple[int, Future[ExecuteResult]]:
        """Send ``code``, allowed ``timeout`` s; return its request id and a result future."""
        request_id = next(self._ids)
        data = self.framer.frame(request_id, code)
        future: Future[ExecuteResult] = Future()
        now = time.monotonic()
        with self._lock:
            self._pending[request_id] = _Pending(code, future, now, now + timeout)
        try:
            self._write(data)
        except OSError as err:
            with self._lock:
                self._pending.pop(request_id, None)
            raise InstanceNotReady(f"{self.instance or 'sclang'}: sclang is not reading its "
                                   f"input ({err}); it is being restarted") from err
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

    def feed(self, line: str) -> str | None:
        """Take one line sclang printed (in the reader thread); return what the console keeps.

        scorch's own markers and pings are protocol, not output: the console
        keeps only the text around them.
        """
        if self._ping_prefix in line:
            self.last_pong = time.monotonic()
            return line.split(self._ping_prefix, 1)[0] or None
        if self._marks:
            with self._lock:
                for marker, event in list(self._marks.items()):
                    if marker in line:
                        event.set()
                        del self._marks[marker]
                        return line.split(marker, 1)[0] or None
        found = self.framer.marker(line)
        with self._lock:
            if found is None:
                if self._current is not None and self._current in self._pending:
                    self._pending[self._current].add(line)
                return line
            kind, request_id, before = found
            pending = self._pending.get(request_id)
            if pending is None:
                return before or None
            self.last_pong = time.monotonic()
            if kind == "begin":
                self._current = request_id
                return before or None
            if before:
                pending.add(before)
            del self._pending[request_id]
            self._current = None
        result = parse_output(pending.lines(), pending.code)
        elapsed = time.monotonic() - pending.sent_at
        pending.future.set_result(
            ExecuteResult(result.ok, result.value, result.posted, result.error, elapsed,
                          self.instance, result.warnings)
        )
        return before or None

    def is_pending(self, request_id: int) -> bool:
        """True while request ``request_id`` has not finished."""
        with self._lock:
            return request_id in self._pending

    def fail_all(self, error: BaseException) -> None:
        """Fail every request in flight (sclang died or was restarted)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._current = None
        for item in pending.values():
            if not item.future.done():
                item.future.set_exception(error)
