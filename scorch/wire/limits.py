"""How much JSON a line from outside may hold, checked before ``json.loads`` sees it.

Python's ``json`` recurses once per nesting level and raises RecursionError
near a thousand (a thread that does not catch it ends); a line of a million
keys costs seconds and megabytes to decode and to list in an error. So every
line scorch reads from a client (the control socket, ``scorch bridge``'s
stdin, the MCP server's stdin) is scanned first: one linear pass over its
brackets, separators and strings, stopping at the first limit broken. Only a
line within :class:`Limits` is decoded.

Standard library only: the MCP server's early front imports this before the SDK.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: Strings (skipped whole, escapes included), brackets and separators.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)
#: A scalar value right after a key's colon.
_SCALAR = re.compile(rb'\s*(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|"[^"\\]*(?:\\.[^"\\]*)*")',
                     re.DOTALL)
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_QUOTE, _COLON = ord('"'), ord(":")


@dataclass(frozen=True)
class Limits:
    """The most a JSON line may hold."""

    size: int
    """Bytes in the line."""
    depth: int = 64
    """Arrays and objects nested in one another."""
    items: int | None = 20_000
    """Containers, strings and separators together, so a key counts about three times
    (None: only the size bounds them)."""


#: What one request from a client may hold, on the control socket and on MCP's stdin
#: (scorch's arguments are small: 64 params at most, code a string).
REQUEST_LIMITS = Limits(size=8 * 1024 * 1024)


class OverLimit(ValueError):
    """A JSON line breaks a :class:`Limits`; ``request_id`` is its top-level id if read before,
    ``at`` the offset in bytes where the limit broke (a file's reader names its line)."""

    def __init__(self, message: str, request_id: str | int | None = None, at: int = 0) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.at = at


def check(line: bytes | str, limits: Limits) -> None:
    """Raise OverLimit if ``line`` is larger, deeper or holds more than ``limits`` allow.

    One pass, stopping at the first limit broken, so its cost is bounded by the
    limits and not by what the line holds. It bounds; it does not validate:
    ``json.loads`` still says whether the line is JSON.
    """
    data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if len(data) > limits.size:
        raise OverLimit(f"longer than {limits.size} bytes", _leading_id(data))
    depth = items = 0
    request_id: str | int | None = None
    key: bytes | None = None  # the last string seen at depth 1
    for token in _TOKENS.finditer(data):
        kind = token[0][0]
        if kind in _CLOSE:
            depth -= 1
            if depth < 0:
                return  # not JSON: json.loads says so, without recursing
            continue
        items += 1
        if limits.items is not None and items > limits.items:
            raise OverLimit(f"more than {limits.items} keys, items and strings", request_id,
                            token.start())
        if kind in _OPEN:
            depth += 1
            if depth > limits.depth:
                raise OverLimit(f"nested deeper than {limits.depth} levels", request_id,
                                token.start())
        elif kind == _COLON and depth == 1 and key == b'"id"':
            request_id = _scalar(data, token.end())
        key = token[0] if kind == _QUOTE and depth == 1 else None


def loads(line: bytes | str, limits: Limits) -> Any:
    """``json.loads(line)`` once :func:`check` passed (OverLimit, or ValueError if not JSON)."""
    check(line, limits)
    return json.loads(line)


def _scalar(data: bytes, at: int) -> str | int | None:
    """The string or integer at ``at`` (after a key), else None."""
    found = _SCALAR.match(data, at)
    if found is None:
        return None
    try:
        value = json.loads(found[1])
    except ValueError:
        return None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _leading_id(data: bytes) -> str | int | None:
    """The top-level id of an over-long line, when it comes first (as JSON-RPC clients write it)."""
    head = data[:4096]
    found = re.match(rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:', head)
    return _scalar(head, found.end()) if found else None
