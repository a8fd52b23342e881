"""One sclang's requests in flight, fed from its stdout: results, console, pings.

The reader thread feeds every chunk of stdout to :meth:`SclangSession.feed`.
Records (``sclang_protocol``) resolve requests; text goes to the request that
is running (its posts, or its compiler messages) and always to the console,
where output that arrives after a request returned is marked as coming from
something that request left running (``after #N``).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

from scorch.errors import BootError, RoomNotReady
from scorch.primitives.sclang import protocol
from scorch.primitives.sclang.protocol import Record, RecordStream
from scorch.primitives.sclang.result import ExecuteResult, Transcript
from scorch.primitives.system import Console

log = logging.getLogger(__name__)

Writer = Callable[[bytes], None]
ServerFailures = Callable[[int, tuple[str, ...]], tuple[str, ...]]
"""Given a console mark and the commands a request sent, wait until scsynth performed
them; return its failures of those commands since the mark."""

#: How long code sent without a timeout (startup code, restores) may take.
DEFAULT_TIMEOUT = 30.0
#: Seconds between looks at an attach's abort condition while it waits.
ABORT_POLL = 0.05
#: A request that returned but whose closing record has not come (something the code
#: left running holds the interpreter) is answered this long before its deadline, at
#: most a quarter of its time, so the caller, waiting to the same deadline, gets it.
STUCK_MARGIN = 0.5
#: Requests run later (``at``) remembered until they begin; older ones are forgotten.
MAX_SCHEDULED = 256
WELCOME = b"*** Welcome to SuperCollider"


@dataclass
class _Request:
    number: int
    wire_id: str
    transcript: Transcript
    future: Future[ExecuteResult]
    sent_at: float
    deadline: float
    phase: str = "sent"
    """sent, compile, start, end: where the records have got to."""
    echo: bool = True
    """Show the value or error in the console, as sclang's post window does."""
    console_since: int = 0
    late_lines: int = 0
    late_error: str | None = None
    ended_at: float = 0.0
    answered: bool = False
    """Answered before its closing record: the code returned, then sclang got stuck."""
    console_start: int = 0
    """Console seq when it was sent: scsynth's failures after it may be the code's."""


@dataclass
class _AsyncError:
    """An error in something a request left running (``async-*`` records)."""

    after: int
    fields: dict[str, str] = field(default_factory=dict)


class SclangSession:
    """One sclang process's requests in flight; thread-safe."""

    def __init__(self, write: Writer, console: Console, room: str = "",
                 on_server_request: Callable[[str], None] = lambda what: None,
                 on_recompiled: Callable[[], None] = lambda: None,
                 server_failures: ServerFailures | None = None,
                 on_pattern: Callable[[str, str], None] = lambda name, payload: None) -> None:
        self._write = write
        self._console = console
        self.room = room
        self.token = protocol.new_id()
        """This session's id: records about no request (pongs, late errors) carry it."""
        self._on_server_request = on_server_request
        self._on_recompiled = on_recompiled
        self._server_failures = server_failures
        """Fences scsynth and returns its failure lines after a console mark (blocks)."""
        self._on_pattern = on_pattern
        """Told each ``pattern*`` record (``ScorchPatterns.sc``): its name and payload."""
        self._stream = RecordStream(self._accepts)
        self._numbers = itertools.count(1)
        self._pending: dict[str, _Request] = {}
        self._current: _Request | None = None
        self._last = 0
        self._scheduled: dict[str, int] = {}
        """Requests run later (``at``), by wire id: their number, until they begin."""
        """The number of the last request that returned (for console notes)."""
        self._waits: dict[str, tuple[threading.Event, list[Record]]] = {}
        self._async: _AsyncError | None = None
        self._dump_note = ""
        """While sclang prints its report of an error noted here, its lines get this note."""
        self._dump_ending = False
        self._partial = b""
        self.installed = False
        self.compiles = 1
        """How many class libraries this sclang compiled (a recompile forgets the clock)."""
        self.client_id = 0
        """sclang's ``s.clientID`` once attached (its node ids lie in that client's range)."""
        self.async_errors: deque[dict[str, str]] = deque(maxlen=50)
        """The latest errors in things left running: their fields, and ``after``."""
        self._lock = threading.RLock()
        self._stuck = threading.Condition(self._lock)
        self._watcher: threading.Thread | None = None
        """Runs while a request that returned waits for its closing record."""
        self.last_pong = time.monotonic()
        """``time.monotonic()`` when sclang last sent scorch a record."""

    # --- sending -----------------------------------------------------------------

    def submit(self, code: str, timeout: float = DEFAULT_TIMEOUT, *, raw: bool = False,
               check_only: bool = False, at: float | None = None,
               ) -> tuple[int, Future[ExecuteResult]]:
        """Send ``code``, allowed ``timeout`` s; return its request number and a result future.

        ``raw``: scorch's own code, which the user's preprocessor must not see.
        ``check_only``: compile without running. ``at``: compile now, run so that
        scsynth hears it at this Unix time (the value says when it runs).
        """
        wire_id = protocol.new_id()
        number = next(self._numbers)
        future: Future[ExecuteResult] = Future()
        now = time.monotonic()
        data = (protocol.check(wire_id, code) if check_only
                else protocol.evaluate(wire_id, code, raw=raw, at=at))
        with self._lock:
            self._pending[wire_id] = _Request(number, wire_id, Transcript(code), future, now,
                                              now + timeout, echo=not raw,
                                              console_start=self._console.mark())
            if at is not None and not check_only:
                self._scheduled[wire_id] = number
                while len(self._scheduled) > MAX_SCHEDULED:  # the oldest never ran (a restart)
                    del self._scheduled[next(iter(self._scheduled))]
        try:
            self._write(data)
        except OSError as err:
            with self._lock:
                self._pending.pop(wire_id, None)
            raise RoomNotReady(f"{self.room or 'sclang'}: sclang is not reading its "
                                   f"input ({err}); it is being restarted") from err
        return number, future

    def call(self, build: Callable[[str], bytes], answers: tuple[str, ...],
             timeout: float, abort: Callable[[], str | None] | None = None) -> Record | None:
        """Send what ``build(id)`` makes and wait for a record named in ``answers``.

        Returns None when ``timeout`` passes first. ``abort`` is asked every
        :data:`ABORT_POLL` seconds while waiting: when it names a reason (the
        scsynth this attaches to died), the wait ends at once with a BootError.
        """
        wait_id = protocol.new_id()
        event: threading.Event = threading.Event()
        got: list[Record] = []
        with self._lock:
            self._waits[wait_id] = (event, got)
        deadline = time.monotonic() + timeout
        try:
            self._write(build(wait_id))
            while (remaining := deadline - time.monotonic()) > 0:
                if event.wait(min(remaining, ABORT_POLL) if abort else remaining):
                    with self._lock:
                        found = next((r for r in got if r.name in answers), None)
                        event.clear()
                    if found is not None:
                        return found
                if abort is not None and (reason := abort()) is not None:
                    raise BootError(reason)
            return None
        finally:
            with self._lock:
                self._waits.pop(wait_id, None)

    def ping(self) -> None:
        """Ask sclang for a pong (answered only if the interpreter runs)."""
        self._write(protocol.ping(self.token))

    def busy(self) -> bool:
        """True while a request is being evaluated within its time (then sclang is not hung)."""
        now = time.monotonic()
        with self._lock:
            return bool(self._pending) and all(p.deadline > now for p in self._pending.values())

    def is_pending(self, number: int) -> bool:
        """True while request ``number`` has not finished."""
        with self._lock:
            return any(p.number == number for p in self._pending.values())

    def fail_all(self, error: BaseException) -> None:
        """Fail every request in flight (sclang died or was restarted)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._current = None
        for item in pending.values():
            if not item.future.done():
                item.future.set_exception(error)

    # --- reading (the reader thread) ---------------------------------------------------

    def _accepts(self, record_id: str) -> bool:
        return (record_id == self.token or record_id in self._pending
                or record_id in self._waits)

    def feed(self, data: bytes) -> list[str]:
        """Take a chunk of stdout; the console lines are appended here (returns none)."""
        done: list[tuple[_Request, ExecuteResult]] = []
        with self._lock:
            for event in self._stream.feed(data):
                if isinstance(event, Record):
                    self.last_pong = time.monotonic()
                    finished = self._record(event)
                    if finished is not None:
                        done.append(finished)
                else:
                    self._text(event)
            if any(p.phase == "end" and not p.answered for p in self._pending.values()):
                if self._watcher is None:
                    self._watcher = threading.Thread(target=self._watch_stuck, daemon=True,
                                                     name=f"sclang-stuck-{self.room}")
                    self._watcher.start()
                else:
                    self._stuck.notify()  # a new one may be due sooner
        for request, result in done:  # outside the lock: callbacks may call back
            if request.transcript.server_sent and self._server_failures is not None:
                # never block the reader thread: the fence waits for scsynth
                threading.Thread(target=self._answer_with_server_errors, args=(request, result),
                                 daemon=True, name=f"sclang-fence-{self.room}").start()
            else:
                request.future.set_result(result)
        return []

    def _answer_with_server_errors(self, request: _Request, result: ExecuteResult) -> None:
        """Answer a request that sent scsynth messages with what scsynth said about them."""
        assert self._server_failures is not None
        try:
            errors = self._server_failures(request.console_start, request.transcript.server_sent)
        except Exception:  # a result without them beats no result
            log.exception("%s: scsynth's failures for #%d", self.room, request.number)
            errors = ()
        if not request.future.done():
            request.future.set_result(replace(result, server_errors=errors))

    def _watch_stuck(self) -> None:
        """Answer requests that returned but whose closing record does not come in time.

        sclang runs what the code scheduled (a routine, a pattern) between two
        chunks of input; when that never yields, the request's closing chunk is
        never read. The code did return, and sclang printed its value: the caller
        gets the value, told that what the code left running holds sclang (the
        watchdog restarts sclang if it stays stuck), not a timeout of the code.
        """
        while True:
            answered: list[tuple[_Request, ExecuteResult]] = []
            with self._stuck:
                waiting = [p for p in self._pending.values()
                           if p.phase == "end" and not p.answered]
                if not waiting:
                    self._watcher = None
                    return
                now = time.monotonic()
                for request in waiting:
                    if now >= _answer_by(request):
                        answered.append((request, self._answer_stuck(request, now)))
                if not answered:
                    self._stuck.wait(min(_answer_by(p) for p in waiting) - now)
            for request, result in answered:
                if not request.future.done():
                    request.future.set_result(result)

    def _answer_stuck(self, request: _Request, now: float) -> ExecuteResult:
        request.answered = True
        self._flush_partial()
        result = self._result(request)
        stuck = (f"the code returned, then sclang stayed busy for "
                 f"{now - request.ended_at:.1f} s without reading its next input: something "
                 "the code left running (a routine, a pattern, a scheduled function) has not "
                 "yielded; if it never does, the watchdog restarts sclang (the sound on "
                 f"scsynth goes on). What it posts is in the console, marked "
                 f"'after #{request.number}' (console since={request.console_since})")
        return replace(result, late=stuck if result.late is None else f"{stuck}; {result.late}")

    def _text(self, text: bytes) -> None:
        request = self._current
        if request is not None and request.phase == "compile":
            request.transcript.compile_output += text
        elif request is not None and request.phase == "start":
            request.transcript.post(text)
        self._to_console(text)

    def _to_console(self, text: bytes) -> None:
        lines = (self._partial + text).split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            self._console_line(raw)

    def _flush_partial(self) -> None:
        if self._partial:
            partial, self._partial = self._partial, b""
            self._console_line(partial)

    def _console_line(self, raw: bytes) -> None:
        text = raw.decode(errors="replace").rstrip("\r")
        note = self._dump_note or self._late_line()
        if self._dump_note:
            # sclang's error report ends with the line after its "^^ " line
            if self._dump_ending:
                self._dump_note, self._dump_ending = "", False
            elif text.startswith("^^ "):
                self._dump_ending = True
        if self.installed and raw.startswith(WELCOME):
            self.installed = False
            self.compiles += 1
            self._on_recompiled()
        self._console.append("sclang", text, note)

    def _late_line(self) -> str:
        """The note of a line posted outside any request; counted for requests closing now."""
        if self._current is not None or not self._last:
            return ""
        for request in self._pending.values():
            if request.phase == "end" and request.number == self._last:
                request.late_lines += 1
        return f"after #{self._last}"

    def _record(self, record: Record) -> tuple[_Request, ExecuteResult] | None:
        if record.id == self.token:
            self._session_record(record)
            return None
        wait = self._waits.get(record.id)
        if wait is not None:
            wait[1].append(record)
            wait[0].set()
            return None
        request = self._pending.get(record.id)
        if request is None:
            return None
        name = record.name
        if name == "prepare":  # the user's preprocessor runs: what it posts is the request's
            request.phase = "start"
            self._current = request
        elif name == "compile":
            request.phase = "compile"
            request.transcript.compiling()
            self._current = request
        elif name == "start":
            request.phase = "start"
        elif name == "end":
            request.transcript.record(name, record.payload)
            request.phase = "end"
            request.ended_at = time.monotonic()
            self._flush_partial()
            self._current = None
            self._last = request.number
            request.console_since = self._console.mark()
        elif name == "done":
            return self._finish(request)
        else:
            request.transcript.record(name, record.payload)
        return None

    def _finish(self, request: _Request) -> tuple[_Request, ExecuteResult] | None:
        del self._pending[request.wire_id]
        if request.answered:  # answered while sclang was stuck after the code returned
            return None
        if self._current is request:  # ended without its end record: aborted
            self._flush_partial()
            self._current = None
            self._last = request.number
        return request, self._result(request)

    def _result(self, request: _Request) -> ExecuteResult:
        """The request's result as it stands, echoed to the console as sclang would."""
        if not request.console_since:
            request.console_since = self._console.mark()
        result = request.transcript.result(time.monotonic() - request.sent_at, self.room,
                                           request.number)
        if request.echo and result.value is not None:
            for line in f"-> {result.value}".split("\n"):
                self._console.append("sclang", line)
        elif request.echo and result.error is not None and result.error.kind == "runtime":
            self._console.append("sclang", f"ERROR: {result.error.message.splitlines()[0]}")
        return replace(result, late=_late(request), console_since=request.console_since)

    def _session_record(self, record: Record) -> None:
        name, text = record.name, record.payload.decode(errors="replace")
        if name == "installed":
            self.installed = True
        elif name == "running":  # code run later (``at``) begins: what follows is its
            number = self._scheduled.pop(text, None)
            if number is not None and self._current is None:
                self._last = number
        elif name == "server-request":
            self._on_server_request(text)
        elif name.startswith("pattern"):
            self._on_pattern(name, text)
        elif name.startswith("async-"):
            self._async_record(name[len("async-"):], text)
        elif name == "exiting":
            log.info("%s: sclang says it is exiting", self.room)

    def _async_record(self, key: str, text: str) -> None:
        if self._async is None:
            self._async = _AsyncError(self._last)
        if key == "end":
            error, self._async = self._async, None
            message = error.fields.get("string", "").removeprefix("ERROR: ").split("\n", 1)[0]
            self.async_errors.append({**error.fields, "after": str(error.after)})
            for request in self._pending.values():
                if request.phase == "end" and request.number == error.after:
                    request.late_error = message
            self._dump_note = f"error after #{error.after}" if error.after else "error"
            self._dump_ending = False
        elif key not in ("frame", "protected"):
            self._async.fields[key] = text


def _answer_by(request: _Request) -> float:
    """When a request stuck after returning is answered: just before its deadline."""
    return request.deadline - min(STUCK_MARGIN, (request.deadline - request.sent_at) / 4)


def _late(request: _Request) -> str | None:
    """What the request's code left running did before the request closed."""
    if not request.late_lines and request.late_error is None:
        return None
    parts = []
    if request.late_lines:
        parts.append(f"posted {request.late_lines} line(s)")
    if request.late_error is not None:
        parts.append(f"failed: {request.late_error}")
    return (f"the code left something running that {' and '.join(parts)} after it returned; "
            f"those lines are in the console, marked 'after #{request.number}' "
            f"(console since={request.console_since})")

