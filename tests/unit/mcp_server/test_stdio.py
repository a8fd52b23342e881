"""The MCP server's own check of the client's lines: JSON-RPC errors, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from mcp_server.stdio import INVALID_REQUEST, PARSE_ERROR, error_answer
from scorch.wire.limits import REQUEST_LIMITS
from tests.support import hostile_json

PING = {"jsonrpc": "2.0", "id": 3, "method": "ping"}


def line(message: Any) -> str:
    return json.dumps(message) + "\n"


@pytest.mark.parametrize(("text", "answer"), [
    (line(PING), None),
    ("not json\n", (None, PARSE_ERROR, "Parse error")),
    (line({"jsonrpc": "2.0", "id": 7, "methd": "x"}), (7, INVALID_REQUEST, "not a JSON-RPC")),
    ('{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": '
     + "[" * 1_000 + "]" * 1_000 + "}\n", (8, INVALID_REQUEST, "nested deeper than 64 levels")),
    ('{"jsonrpc": "2.0", "id": "deep", "params": ' + "{" * 100_000 + "\n",
     ("deep", INVALID_REQUEST, "nested deeper than 64 levels")),
    (line({**PING, "params": {f"k{i}": i for i in range(30_000)}}),
     (3, INVALID_REQUEST, "more than 20000 keys")),
    (line({**PING, "params": {"x": "y" * REQUEST_LIMITS.size}}),
     (3, INVALID_REQUEST, f"longer than {REQUEST_LIMITS.size} bytes")),
])
def test_each_line_gets_the_error_json_rpc_names_with_its_id_when_readable(
        text: str, answer: tuple[Any, int, str] | None) -> None:
    found = error_answer(text)
    if answer is None:
        assert found is None
        return
    assert found is not None
    got = json.loads(found.model_dump_json(by_alias=True, exclude_unset=True))  # as written
    request_id, code, words = answer
    assert got["jsonrpc"] == "2.0" and (got["id"], got["error"]["code"]) == (request_id, code)
    assert words in got["error"]["message"] and len(got["error"]["message"]) < 300


@settings(max_examples=200, deadline=None)
@given(hostile_json.lines(head=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '))
def test_hostile_lines_get_an_error_answer_or_pass_on_never_raise(data: bytes) -> None:
    found = error_answer(data.decode("utf-8", errors="replace"))  # as the pipe reader decodes
    if found is not None:
        assert found.error.code in (PARSE_ERROR, INVALID_REQUEST)
        assert not hostile_json.leaks(found.error.message), found.error.message
        assert '"id":' in found.model_dump_json(by_alias=True, exclude_unset=True)
