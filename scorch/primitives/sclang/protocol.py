"""Talk to sclang over stdin, and read back what it says as records posted text cannot fake.

scorch loads its own classes into every sclang (``classes/``): the
``Scorch`` evaluator compiles and runs each request under its own error
handler, and reports what happened as *records* on stdout::

    @@scorch:<id>:<name>:<payload length in bytes>@@<payload>\\n

A record is accepted only when ``<id>`` is the session's token or a request
still in flight, and exactly ``length`` bytes are taken as its payload; so
nothing user code prints (markers included) can end a request, forge a value
or swallow output. Everything outside records is ordinary posted text.

Requests go to stdin as silent chunks (``\\x1b``); the code travels as an
sclang string literal, newlines and all, so error lines match the user's code.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Callable
from typing import NamedTuple

from scorch.values import no_nul

EVAL_SILENT = b"\x1b"
PREFIX = b"@@scorch:"
HEADER = re.compile(rb"@@scorch:([0-9A-Za-z]{1,64}):([a-z][a-z-]{0,40}):(\d{1,10})@@")
_MAX_HEADER = len(PREFIX) + 64 + 1 + 41 + 1 + 10 + 2
#: A payload longer than this is not a record (the evaluator bounds values to 1 MiB).
MAX_PAYLOAD = 64 * 1024 * 1024


class Record(NamedTuple):
    """One record: who it is for, what it says, and its payload."""

    id: str
    name: str
    payload: bytes


Event = bytes | Record
"""What the stream yields: posted text (bytes) or a record."""


def new_id() -> str:
    """A fresh, unguessable id for a request or a session (48 bits)."""
    return secrets.token_hex(6)


def sc_string(text: str) -> str:
    """An sclang expression that evaluates to ``text``, byte for byte.

    Inside a literal sclang understands ``\\\\ \\" \\n \\t \\f \\r \\v`` and keeps raw
    newlines; ``\\x0c`` would end the stdin chunk, so it is written ``\\f``;
    ``\\x1b`` has no escape, so the literal is split around ``27.asAscii``.
    """
    no_nul(text)
    parts = ['"' + p.replace("\\", "\\\\").replace('"', '\\"').replace("\x0c", "\\f") + '"'
             for p in text.split("\x1b")]
    return " ++ 27.asAscii ++ ".join(parts) if len(parts) > 1 else parts[0]


def _chunk(code: str) -> bytes:
    return code.encode() + EVAL_SILENT


def install(token: str, reply_id: str) -> bytes:
    """Make ``Scorch`` the interpreter's error handler for session ``token``; ``installed``."""
    return _chunk(f'Scorch.install("{token}", "{reply_id}")')


def evaluate(request_id: str, code: str, raw: bool = False, at: float | None = None) -> bytes:
    """Run ``code`` (``raw``: without the user's preprocessor), then the closing chunk.

    ``at`` (Unix time): compile it now, and run it on sclang's SystemClock so that
    what it sends reaches scsynth stamped ``at`` (``Scorch.schedule``).
    """
    flag = "true" if raw else "false"
    if at is not None:
        if not math.isfinite(at):
            raise ValueError(f"at must be a finite time, found {at!r}")
        flag += f", {float(at)!r}"
    return (_chunk(f'Scorch.eval("{request_id}", {sc_string(code)}, {flag})')
            + _chunk(f'Scorch.done("{request_id}")'))


def check(request_id: str, code: str) -> bytes:
    """Compile ``code`` without running it, then the closing chunk."""
    return (_chunk(f'Scorch.check("{request_id}", {sc_string(code)})')
            + _chunk(f'Scorch.done("{request_id}")'))


def attach(name: str, port: int, request_id: str, host: str = "127.0.0.1",
           descs: str | None = None) -> bytes:
    """Make ``s`` a ScorchServer for the scsynth on ``host:port``; answered by ``attached``
    (:func:`parse_attached`), or ``attach-failed`` when scsynth refuses the login.

    ``descs``: a directory of SynthDefs to read into the SynthDescLib first
    (:mod:`scorch.primitives.synthdefs.descs`).
    """
    if not re.fullmatch(r"[0-9A-Fa-f.:]{2,45}", host):
        raise ValueError(f"not an IP address: {host!r}")
    where = "nil" if descs is None else sc_string(descs)
    return _chunk(f'Scorch.attach(\\{name}, {port}, "{request_id}", "{host}", {where})')


def parse_attached(payload: str) -> tuple[int, int]:
    """The client id and the login's extra asks of an ``attached`` record ("0 2"; "0": none)."""
    fields = payload.split()
    try:
        client_id = int(fields[0]) if fields else 0
        asks = int(fields[1]) if len(fields) > 1 else 0
    except ValueError:
        return 0, 0
    return client_id, max(0, asks)


def read_descs(descs: str, names: list[str]) -> str:
    """Code that reads these SynthDefs from ``descs`` into the SynthDescLib again."""
    symbols = ", ".join(sc_string(name) for name in names)
    return f"Scorch.readDescs({sc_string(descs)}, [{symbols}]);"


def reattach(port: int, request_id: str) -> bytes:
    """Register ``s`` again with a restarted scsynth (same client id); ``reattached``."""
    return _chunk(f'Scorch.reattach(Server.default, {port}, "{request_id}")')


def scorch_call(code: str) -> bytes:
    """Run one of scorch's own class methods silently (it answers with a record, if any)."""
    return _chunk(code)


def ping(token: str) -> bytes:
    """Ask for a ``pong`` record: answered only while the interpreter runs."""
    return _chunk(f'Scorch.emit("{token}", "pong", "")')


class RecordStream:
    """Split sclang's stdout into posted text and records; ``accept`` says whose records count."""

    def __init__(self, accept: Callable[[str], bool]) -> None:
        self._buffer = bytearray()
        self._accept = accept

    def feed(self, data: bytes) -> list[Event]:
        """Take a chunk of output; return the text and records complete so far, in order."""
        self._buffer += data
        out: list[Event] = []
        buffer = self._buffer
        while True:
            at = buffer.find(PREFIX)
            if at < 0:
                keep = _partial_prefix(buffer)
                if len(buffer) > keep:
                    out.append(bytes(buffer[:len(buffer) - keep]))
                    del buffer[:len(buffer) - keep]
                return out
            if at:
                out.append(bytes(buffer[:at]))
                del buffer[:at]
            match = HEADER.match(buffer)
            if match is None:
                if len(buffer) < _MAX_HEADER and b"\n" not in buffer:
                    return out  # the header may still be arriving
                out.append(bytes(buffer[:len(PREFIX)]))  # only looked like one: text
                del buffer[:len(PREFIX)]
                continue
            length = int(match.group(3))
            request_id = match.group(1).decode()
            if length > MAX_PAYLOAD or not self._accept(request_id):
                out.append(bytes(buffer[:len(PREFIX)]))  # user text that looks like a record
                del buffer[:len(PREFIX)]
                continue
            end = match.end() + length
            if len(buffer) < end + 1:
                return out  # the payload (or its newline) is still arriving
            out.append(Record(request_id, match.group(2).decode(), bytes(buffer[match.end():end])))
            # A record ends with one newline, written by the same post as its payload.
            del buffer[:end + 1 if buffer[end:end + 1] == b"\n" else end]


def _partial_prefix(buffer: bytearray) -> int:
    """How many bytes at the end of ``buffer`` could be the start of a record's prefix."""
    for size in range(min(len(PREFIX) - 1, len(buffer)), 0, -1):
        if buffer.endswith(PREFIX[:size]):
            return size
    return 0
