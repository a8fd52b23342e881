"""What one request to sclang gave back: its value, its posts, its error, all from records.

A :class:`Transcript` collects one request's records and text as they arrive;
:meth:`Transcript.result` turns them into an :class:`ExecuteResult`. The value
is exactly what sclang prints after ``-> `` (``asString``); posted text is the
request's own, partial last line included; an error carries its fields as
sclang's error object has them, its frames from the stack, never from text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CONTEXT_LINES = 2
#: Bytes of posted text kept from each end of one request; the middle is counted.
KEEP_POSTED = 64 * 1024
#: Frames shown of each kind (the user's, the library's, the protected stack).
MAX_FRAMES = 12

_PARSE_POSITION = re.compile(r"^\s*line (\d+) char (\d+):", re.M)
_ERROR_LINE = re.compile(rb"^ERROR:", re.M)


@dataclass(frozen=True)
class SclangError:
    """A structured sclang error: what, where in the user's code, and the stack."""

    kind: str
    """``parse`` (did not compile), ``runtime`` (threw), ``aborted`` (left early), or
    ``timeout``, ``unavailable``, ``interrupted`` (the request did not complete)."""
    message: str
    """sclang's message, without ``ERROR:`` (several lines when sclang gives several)."""
    line: int | None = None
    """1-based line in the submitted code (parse errors)."""
    char: int | None = None
    """1-based character in that line, as sclang counts it (parse errors)."""
    context: str = ""
    """The offending source lines with a caret under the position."""
    error_class: str | None = None
    """The error's class (``DoesNotUnderstandError``, ``PrimitiveFailedError``...)."""
    receiver: str | None = None
    """The object that received the failing message, on one line (runtime errors)."""
    selector: str | None = None
    """The message that was not understood."""
    call_stack: tuple[str, ...] = ()
    """The user's own frames, innermost first: the closures of the submitted code."""
    library_frames: tuple[str, ...] = ()
    """Class-library frames, innermost first (``Class:method``)."""
    protected_call_stack: tuple[str, ...] = ()
    """Where the error was made, when inside try/protect (sclang's PROTECTED CALL STACK)."""

    def describe(self) -> str:
        """Render the error for a person: message, position, source, receiver, stack."""
        head = f"{self.kind} error: {self.message}"
        if self.line is not None:
            head += f" (line {self.line}, char {self.char})"
        parts = [head]
        if self.context:
            parts.append(self.context)
        if self.receiver is not None:
            parts.append(f"receiver: {self.receiver}")
        if self.call_stack:
            parts.append("in your code: " + " <- ".join(self.call_stack))
        if self.library_frames:
            parts.append("in the class library: " + " <- ".join(self.library_frames))
        return "\n".join(parts)


@dataclass(frozen=True)
class ExecuteResult:
    """What one evaluation gave back."""

    ok: bool
    value: str | None = None
    """Exactly what sclang prints after ``-> ``, when the code returned."""
    posted: tuple[str, ...] = ()
    """What sclang printed for the request before its value, in order: what the code (and
    the user's preprocessor) posted, and what the compiler said about the code (an
    open-ended comment, a warning), which are also in ``warnings``. A last line without
    newline is kept as is. A parse error's own report is ``error``, not posted."""
    error: SclangError | None = None
    elapsed: float = 0.0
    """Seconds from sending the code to its end."""
    room: str = ""
    warnings: tuple[str, ...] = field(default=())
    request: int = 0
    """The request's number in this sclang's console notes (``after #N``)."""
    late: str | None = None
    """What the code left running did after it returned (posted, failed), if anything."""
    console_since: int | None = None
    """Console seq at the end of the request: later output is read from there."""
    server_errors: tuple[str, ...] = ()
    """What scsynth posted about the messages the code sent before it returned
    (``FAILURE IN SERVER /s_new SynthDef not found``...): the code itself ran, so ``ok``
    does not change."""
    answered: float = 0.0
    """Unix time the caller had this answer (0: none came). What the code made after it,
    a routine's synth a second later, is not the code's own."""


class Transcript:
    """One request's records and text, as they arrive (the session's lock held)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.compile_output = bytearray()
        self.compile_at: int | None = None
        """Where in the posts the compiler spoke (after what the preprocessor posted)."""
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.value: bytes | None = None
        self.value_size: int | None = None
        self.error: dict[str, str] = {}
        self.frames: list[str] = []
        self.protected: list[str] = []
        self.status: str | None = None
        """``ok``, ``error``, ``parse`` or ``aborted`` (from the ``end`` record)."""
        self.server_sent: tuple[str, ...] = ()
        """The commands the code sent to ``s`` while it ran, as sclang named them (``/s_new``,
        ``s_new``, ``9``; ``*`` a raw packet): a ``server-sent`` record."""

    def post(self, text: bytes) -> None:
        """Text the code posted; the middle of a flood is counted, not kept."""
        room = KEEP_POSTED - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail += text
            if len(self.tail) > KEEP_POSTED:
                cut = len(self.tail) - KEEP_POSTED
                del self.tail[:cut]
                self.dropped += cut

    def compiling(self) -> None:
        """The compiler starts: what it prints goes after the posts so far."""
        self.compile_at = len(self.head)

    def compiler_said(self) -> bytes:
        """What the compiler printed, less a parse error's own report (that is the error)."""
        text = bytes(self.compile_output)
        if self.status == "parse":
            found = _ERROR_LINE.search(text)
            text = text[:found.start()] if found else b""
        return text

    def record(self, name: str, payload: bytes) -> None:
        """Take one of the request's records."""
        text = payload.decode(errors="replace")
        if name == "value":
            self.value = payload
        elif name == "value-size":
            self.value_size = int(text or 0)
        elif name == "end":
            self.status = text
        elif name == "server-sent":
            self.server_sent = tuple(text.split())
        elif name == "error-frame":
            self.frames.append(text)
        elif name == "error-protected":
            self.protected.append(text)
        elif name.startswith("error-"):
            self.error[name[len("error-"):]] = text

    def posted_lines(self) -> list[str]:
        """The posted text as lines (a last line without newline included), with what the
        compiler said where sclang prints it: after the preprocessor's posts, before the code's."""
        at = len(self.head) if self.compile_at is None else self.compile_at
        text = bytes(self.head[:at]) + self.compiler_said() + bytes(self.head[at:])
        if self.dropped:
            text += f"\n... ({self.dropped} bytes not kept) ...\n".encode()
        text += bytes(self.tail)
        return list(_lines(text.decode(errors="replace")))

    def result(self, elapsed: float, room: str, request: int) -> ExecuteResult:
        """The request's result, once its closing record arrived."""
        posted = tuple(self.posted_lines())
        compiler = self.compile_output.decode(errors="replace")
        error = self._error(compiler)
        # what the compiler says about code that compiles is a warning, whatever its words
        said = _lines(self.compiler_said().decode(errors="replace"))
        warnings = tuple(line for line in said if line.strip()) + tuple(
            line for line in _lines(bytes(self.head + self.tail).decode(errors="replace"))
            if line.startswith("WARNING:"))
        value = None
        if error is None and self.value is not None:
            value = self.value.decode(errors="replace")
            if self.value_size is not None:
                value += f"...({self.value_size} bytes in all; the first {len(self.value)} shown)"
        return ExecuteResult(ok=error is None, value=value, posted=posted, error=error,
                             elapsed=elapsed, room=room, warnings=warnings,
                             request=request)

    def _error(self, compiler: str) -> SclangError | None:
        if self.status == "parse":
            return parse_error(compiler, self.code)
        if self.status == "error":
            return self._runtime_error()
        if self.status != "ok":
            return SclangError(kind="aborted", message=(
                "the code ended before returning a value (a top-level ^, halt, or the "
                "interpreter's error handler replaced); what it posted is kept"))
        return None

    def _runtime_error(self) -> SclangError:
        fields = self.error
        message = fields.get("string", "").removeprefix("ERROR: ").strip() or "an error"
        receiver = fields.get("receiver")
        if receiver is not None:
            receiver = _receiver(" ".join(receiver.split()), fields.get("receiver-class"))
        user: list[str] = []
        library: list[str] = []
        for frame in self.frames:
            origin, _, where = frame.partition("\t")
            (user if origin == "user" else library).append(_frame_text(where))
        return SclangError(
            kind="runtime", message=message, error_class=fields.get("class"),
            receiver=receiver, selector=fields.get("selector"),
            call_stack=tuple(user[:MAX_FRAMES]), library_frames=tuple(library[:MAX_FRAMES]),
            protected_call_stack=tuple(_frame_text(f.partition("\t")[2])
                                       for f in self.protected[:MAX_FRAMES]))


def _lines(text: str) -> tuple[str, ...]:
    """``text`` as lines: a last line without newline kept, no empty line after the last."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return tuple(lines)


def _receiver(text: str, cls: str | None) -> str:
    """The receiver on one line as sclang's own report names it: ``Integer 7``, ``nil``."""
    if not cls or cls in ("Nil", "True", "False") or text.split(" ", 2)[:2] in (
            ["a", cls], ["an", cls]):
        return text
    return f"{cls} {text}"


def _frame_text(where: str) -> str:
    """``Class:method``, or a closure's first line of source."""
    kind, _, source = where.partition("\t")
    if kind != "a FunctionDef":
        return where
    first = source.strip().split("\n", 1)[0]
    return f"{{ {first[:80]} }}" if first and not first.startswith("{") else first[:80] or kind


def parse_error(compiler: str, code: str) -> SclangError:
    """A parse error from the compiler's own text (position relative to ``code``)."""
    message = next((line[len("ERROR:"):].strip() for line in compiler.splitlines()
                    if line.startswith("ERROR:")), "the code does not parse")
    found = _PARSE_POSITION.search(compiler)
    line_no = int(found.group(1)) if found else None
    char_no = int(found.group(2)) if found else None
    return SclangError(kind="parse", message=message.rstrip("."), line=line_no, char=char_no,
                       context=source_context(code, line_no, char_no))


def source_context(code: str, line: int | None, char: int | None) -> str:
    """Show the lines up to ``line`` (1-based) with a caret under ``char``."""
    if line is None:
        return ""
    source = code.split("\n")
    line = max(1, min(line, len(source)))
    first = max(1, line - CONTEXT_LINES)
    width = len(str(line))
    out = [f"{n:>{width}} | {source[n - 1]}" for n in range(first, line + 1)]
    if char is not None:
        # sclang counts bytes of UTF-8; the caret goes under the character they end in.
        text = source[line - 1]
        column = len(text.encode()[:max(char - 1, 0)].decode(errors="ignore")) + 1
        column = max(1, min(column, len(text) + 1))
        out.append(" " * width + " | " + " " * (column - 1) + "^")
    return "\n".join(out)
