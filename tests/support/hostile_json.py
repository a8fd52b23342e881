"""Generated hostile JSON lines: nested past any limit, many-keyed, or not JSON at all.

Shared by the tests of every parser a client reaches (the control wire's
codec and server, the MCP server's line check), so each meets the same input.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

#: Words that would say something of scorch's insides, not of the request.
INTERNALS = ("Traceback", "RecursionError", "pydantic", "errors.pydantic.dev", 'File "',
             "InternalError", "scorch/")


def _deep(head: bytes, depth: int, opener: bytes, closed: bool) -> bytes:
    closer = {b"[": b"]", b"{": b"}", b'{"a":': b"}", b'["x",': b"]"}[opener]
    return head + opener * depth + (closer * depth if closed else b"")


def lines(head: bytes = b'{"id": 1, "method": "ping", "args": ') -> st.SearchStrategy[bytes]:
    """Lines that start like a request (``head``) and then go wrong, or are noise."""
    def many(keys: int) -> bytes:
        args = {f"k{i}": [i] for i in range(keys)}
        return head + json.dumps(args).encode() + b"}"

    return st.one_of(
        st.binary(max_size=400),
        st.builds(_deep, st.just(head), st.integers(60, 5_000),
                  st.sampled_from([b"[", b"{", b'{"a":', b'["x",']), st.booleans()),
        st.builds(many, st.integers(0, 12_000)),
        json_values().map(lambda v: json.dumps(v).encode()),
    )


def json_values() -> st.SearchStrategy[Any]:
    """Small JSON values with the keys a request has, and a few it has not."""
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(
            ["id", "method", "args", "key", "jsonrpc", "params", "x"]),
                          inner, max_size=4),
        max_leaves=20)


def leaks(message: str) -> bool:
    """True if ``message`` tells of scorch's insides."""
    return any(word in message for word in INTERNALS)
