"""Talk to sclang over stdin: frame code, then read back its value, posts and errors.

sclang evaluates stdin text up to ``\\x0c`` and prints ``-> value``; ``\\x1b``
evaluates silently. Each request is sent as: a silent begin marker, the code
exactly as given (its newlines kept, so error lines match), and a silent end
marker. The lines between the two markers are that request's output.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

from scorch.errors import CodeRejected

EVAL_PRINT = b"\x0c"
EVAL_SILENT = b"\x1b"
CONTEXT_LINES = 2
STACK_FRAMES = 6

# Frames of sclang's own error machinery, not the user's code.
_NOISE_FRAMES = re.compile(
    r"^(\w+Error:reportError|\w+:handleError|Object:throw|Object:doesNotUnderstand|"
    r"Interpreter:interpretPrintCmdLine|Process:interpretPrintCmdLine|"
    r"Interpreter:interpretCmdLine|Process:interpretCmdLine|Object:primitiveFailed|"
    r"Thread:handleError|\w+Error:throw)$"
)
_PARSE_POSITION = re.compile(r"^\s*line (\d+) char (\d+):")



@dataclass(frozen=True)
class SclangError:
    """A structured sclang error: where, what, and the source around it."""

    kind: str
    """``parse`` (the code did not compile) or ``runtime`` (it threw)."""
    message: str
    """sclang's message, without the ``ERROR:`` prefix."""
    line: int | None = None
    """1-based line in the submitted code (parse errors)."""
    char: int | None = None
    """1-based character in that line, as sclang counts it (parse errors)."""
    context: str = ""
    """The offending source lines with a caret under the position."""
    receiver: str | None = None
    """The object that received the failing message (runtime errors)."""
    call_stack: tuple[str, ...] = ()
    """The first frames of the call stack, innermost first (runtime errors)."""

    def describe(self) -> str:
        """Render the error for a person: message, position, source, receiver, stack."""
        parts = [f"{self.kind} error: {self.message}"]
        if self.line is not None:
            parts[0] += f" (line {self.line}, char {self.char})"
        if self.context:
            parts.append(self.context)
        if self.receiver is not None:
            parts.append(f"receiver: {self.receiver}")
        if self.call_stack:
            parts.append("call stack: " + " <- ".join(self.call_stack))
        return "\n".join(parts)


@dataclass(frozen=True)
class ExecuteResult:
    """What one evaluation gave back."""

    ok: bool
    value: str | None = None
    """The printed result (after ``-> ``), when the code ran."""
    posted: tuple[str, ...] = ()
    """Lines the code posted while running."""
    error: SclangError | None = None
    elapsed: float = 0.0
    """Seconds from sending the code to reading its end marker."""
    instance: str = ""
    warnings: tuple[str, ...] = field(default=())


class Framer:
    """Frame requests with markers only this scorch process knows."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token or secrets.token_hex(4)
        self._begin = f"@@scorch-{self.token}-begin-"
        self._end = f"@@scorch-{self.token}-end-"

    def frame(self, request_id: int, code: str) -> bytes:
        """Return the bytes to write to sclang's stdin for one request."""
        if "\x0c" in code or "\x1b" in code:
            raise CodeRejected("code must not contain the bytes \\x0c or \\x1b (sclang delimiters)")
        begin = f'"{self._begin}{request_id}@@".postln;'.encode()
        end = f'"{self._end}{request_id}@@".postln;'.encode()
        # A marker is found anywhere in a line, so a partial line left by an
        # earlier .post needs no newline first.
        return (
            begin + EVAL_SILENT
            + code.encode() + EVAL_PRINT
            + end + EVAL_SILENT
        )

    def marker(self, line: str) -> tuple[str, int, str] | None:
        """Find a marker in ``line``: (``begin`` or ``end``, request id, text before it)."""
        for kind, prefix in (("begin", self._begin), ("end", self._end)):
            at = line.find(prefix)
            if at >= 0:
                rest = line[at + len(prefix):]
                number = rest.split("@@", 1)[0]
                if number.isdigit():
                    return kind, int(number), line[:at]
        return None


def parse_output(lines: list[str], code: str) -> ExecuteResult:
    """Turn the lines printed between a request's markers into a result."""
    error = _parse_error(lines, code)
    value: str | None = None
    posted: list[str] = []
    in_error = False
    for index, line in enumerate(lines):
        if line.startswith("ERROR:") or line.startswith("^^ "):
            in_error = True
        if in_error:
            continue
        if line.startswith("-> ") or line == "->":
            # A value may span lines; the last "-> " line starts it.
            if all(not later.startswith("-> ") for later in lines[index + 1 :]):
                value = "\n".join([line[3:], *lines[index + 1 :]]).rstrip("\n")
                break
            continue
        posted.append(line)
    warnings = tuple(line for line in posted if line.startswith("WARNING:"))
    if error is not None:
        return ExecuteResult(ok=False, posted=tuple(posted), error=error, warnings=warnings)
    return ExecuteResult(ok=True, value=value, posted=tuple(posted), warnings=warnings)


def _parse_error(lines: list[str], code: str) -> SclangError | None:
    for index, line in enumerate(lines):
        if not line.startswith("ERROR:"):
            continue
        message = line[len("ERROR:"):].strip()
        if message.startswith("syntax error") or message.startswith("Parse error") or any(
            _PARSE_POSITION.match(later) for later in lines[index + 1 : index + 4]
        ):
            return _parse_syntax_error(message, lines[index + 1 :], code)
        if message == "Command line parse failed":
            return SclangError(kind="parse", message=message)
        return _parse_runtime_error(message, lines[index + 1 :])
    return None


def _parse_syntax_error(message: str, rest: list[str], code: str) -> SclangError:
    line_no = char_no = None
    for line in rest[:4]:
        match = _PARSE_POSITION.match(line)
        if match:
            line_no, char_no = int(match.group(1)), int(match.group(2))
            break
    return SclangError(
        kind="parse",
        message=message.rstrip("."),
        line=line_no,
        char=char_no,
        context=source_context(code, line_no, char_no) if line_no else "",
    )


def _parse_runtime_error(message: str, rest: list[str]) -> SclangError:
    receiver: list[str] = []
    frames: list[str] = []
    section = ""
    for line in rest:
        if line.startswith("^^ "):
            break
        if line.startswith("RECEIVER:"):
            section = "receiver"
            inline = line[len("RECEIVER:"):].strip()
            if inline:
                receiver.append(inline)
            continue
        if line.startswith("ARGS:") or line.startswith("PATH:"):
            section = "args"
            continue
        if line.startswith("CALL STACK:"):
            section = "stack"
            continue
        if section == "receiver" and line.strip():
            receiver.append(line.strip())
        elif section == "stack" and line.startswith("\t") and not line.startswith("\t\t"):
            frame = line.strip()
            if not _NOISE_FRAMES.match(frame) and len(frames) < STACK_FRAMES:
                frames.append(frame)
    return SclangError(
        kind="runtime",
        message=message,
        receiver=" ".join(receiver) if receiver else None,
        call_stack=tuple(frames),
    )


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
        column = max(1, min(char, len(source[line - 1]) + 1))
        out.append(" " * width + " | " + " " * (column - 1) + "^")
    return "\n".join(out)
