"""The control socket's wire: where it lives, its two messages, their one codec, and a probe.

``scorch run`` serves its operations on a Unix domain socket in the state
directory (the directory 0700, the socket 0600, peers of another user refused).
The wire is newline-delimited JSON, one :class:`Request` and one :class:`Reply`
per line::

    -> {"id": 1, "method": "status", "args": {"instance": "lobby"}}
    <- {"id": 1, "result": {...}}   or   {"id": 1, "error": {"type": ..., "message": ...}}

A request may carry a ``key``, the caller's own id of it (``"key": "3f9c..."``):
a call that is not idempotent runs at most once per key, and a resend gets the
first run's answer (``scorch.wire.once``). An error carries, beside its class's
name and message, its ``code``, whether it is ``retryable`` and the ``argument``
at fault (docs/errors.md); an older scorch sends neither and ignores both.

A reply with ``"closed": true`` (and ``"id": null``) is the server's last on that
connection: too many connections, or a request too large. Errors cross by class
name (:class:`WireError`), so the caller raises the kind the installation raised.
:func:`encode` writes both messages; :func:`decode_request` and
:func:`decode_reply` read them, within :mod:`scorch.wire.limits` first.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scorch.errors import (
    InvalidRequest,
    RemoteError,
    ScorchError,
    by_name,
    rebuild,
    wire_name,
)
from scorch.values import describe_errors
from scorch.wire.limits import REQUEST_LIMITS, Limits, OverLimit, loads

SOCKET_NAME = "control.sock"
#: The one method that is no operation: changes another host made to rooms here (the
#: values its MIDI router sent them), published on this host's change bus.
PUBLISH = "publish"
MAX_LINE = 16 * 1024 * 1024  # bytes in one reply: consoles and results are small
MAX_REQUEST = REQUEST_LIMITS.size  # bytes in one request line
#: What one reply may hold: results nest a little deeper than arguments, and lists are long
#: (a room's 1,024 nodes with 64 controls each are some 200,000 items): a million are
#: checked and decoded in 0.5 s of CPU; 16 MB of one-digit items (8 million) took 3.8 s.
REPLY_LIMITS = Limits(size=MAX_LINE, depth=128, items=1_000_000)
MAX_KEY = 128  # characters in a request's key


class Request(BaseModel):
    """One call: an operation's name and its arguments."""

    model_config = ConfigDict(frozen=True)

    id: Any = None
    """Echoed in the reply, so a client with several calls in flight knows which it answers."""
    method: str = Field(strict=True)
    """The operation's name."""
    args: dict[str, Any] = {}
    """The operation's arguments (its schema checks them on the server)."""
    key: str | None = Field(None, strict=True, min_length=1, max_length=MAX_KEY)
    """The caller's own id of this request, the same on every resend: a call that is not
    idempotent runs at most once per key (``scorch.wire.once``); None (an older client):
    each arrival runs."""

    @field_validator("args", mode="before")
    @classmethod
    def _no_args(cls, value: Any) -> Any:
        return {} if value is None else value


class WireError(BaseModel):
    """An error as it crosses: its class's name and its message."""

    model_config = ConfigDict(frozen=True)

    type: str
    """The class's name in ``scorch.errors`` (else the caller raises a RemoteError)."""
    message: str
    code: str | None = None
    """Its code (``scorch.errors.CODES``); None from an older scorch: the class's."""
    retryable: bool | None = None
    """Whether the same request may succeed later; None from an older scorch: the class's."""
    argument: str | None = None
    """The request's argument at fault, where one is known."""

    @classmethod
    def of(cls, err: ScorchError) -> WireError:
        """``err`` as it crosses: named after its nearest class the other side knows."""
        known = next(k for k in type(err).__mro__ if by_name(k.__name__) is k)
        return cls(type=wire_name(known), message=str(err), code=err.code,
                   retryable=err.retryable, argument=err.argument)

    def exception(self) -> ScorchError:
        """The error to raise on this side: the same kind, message, code and argument."""
        return rebuild(self.type, self.message, self.code, self.retryable, self.argument)


class Reply(BaseModel):
    """The answer to one request: its result or its error."""

    model_config = ConfigDict(frozen=True)

    id: Any = None
    """The request's id; None on the closing line, or when the request's id could not be read."""
    result: Any = None
    error: WireError | None = None
    closed: bool = False
    """The server's last line on this connection."""
    evicted: bool = False
    """Closed before it asked anything: the client may ask again on a new connection."""

    @classmethod
    def failed(cls, request_id: Any, err: ScorchError) -> Reply:
        """The reply that carries ``err``."""
        return cls(id=request_id, error=WireError.of(err))

    def unwrap(self) -> Any:
        """The result, or raise the error the installation raised."""
        if self.error is not None:
            raise self.error.exception()
        return self.result


class BadRequest(InvalidRequest):
    """A line that is no request; ``request_id`` is its id when it could be read."""

    def __init__(self, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.request_id = request_id


def encode(message: Request | Reply) -> bytes:
    """One message as its line on the wire (the keys older scorches read, and no others).

    Values go to ``json.dumps`` as they are (an infinite float is ``Infinity``,
    as it always was), not through pydantic's JSON mode, which would make it null.
    """
    keys = None
    if isinstance(message, Request):
        keys = {"id", "method", "args"} | ({"key"} if message.key is not None else set())
    if isinstance(message, Reply):
        keys = {"id", "result" if message.error is None else "error"}
        keys |= {"closed", "evicted"} if message.closed else set()
    return json.dumps(message.model_dump(include=keys)).encode() + b"\n"


def decode_request(line: bytes) -> Request:
    """The request on ``line``; BadRequest (with the id when readable) if it is none."""
    try:
        data = loads(line, REQUEST_LIMITS)
    except OverLimit as err:
        raise BadRequest(f"a control request is {err}", err.request_id) from None
    except ValueError as err:
        raise BadRequest(f"a control request must be one JSON object: {err}") from None
    if not isinstance(data, dict):
        raise BadRequest("a control request must be a JSON object")
    try:
        return Request.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(describe_errors(err, noun="key"))
        raise BadRequest(f"not a control request: {problems}", data.get("id")) from None


def decode_reply(line: bytes, method: str | None = None) -> Reply:
    """The reply on ``line`` (to a call of ``method``); RemoteError if it is none."""
    what = f"the answer to {method!r}" if method else "an answer"
    try:
        return Reply.model_validate(loads(line, REPLY_LIMITS))
    except OverLimit as err:
        raise RemoteError(f"{what} is {err}") from None
    except ValidationError as err:
        problems = "; ".join(describe_errors(err, noun="key"))
        raise RemoteError(f"{what} is not a reply: {problems}") from None
    except ValueError as err:
        raise RemoteError(f"{what} is not JSON: {err}") from None


def request_line(request_id: int, method: str, args: dict[str, Any],
                 key: str | None = None) -> bytes:
    """One request, encoded for the wire (``key``: the caller's id of it, kept on resends)."""
    return encode(Request(id=request_id, method=method, args=args, key=key))


def socket_path(state_dir: Path) -> Path:
    """Where the control socket of the installation with this state directory lives."""
    return Path(state_dir) / SOCKET_NAME


def answers(path: Path, timeout: float = 1.0) -> bool:
    """True if a scorch answers a ping on the socket at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        sock.sendall(request_line(0, "ping", {}))
        with sock.makefile("rb") as reader:
            return bool(reader.readline(MAX_LINE))
    except OSError:
        return False
    finally:
        sock.close()


def find_running(state_dir: Path) -> Path | None:
    """The control socket of a running installation with this state directory, if one answers."""
    path = socket_path(state_dir)
    return path if path.exists() and answers(path) else None
