"""The MCP server's own check of the client's lines: JSON-RPC errors, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_server.stdio import INVALID_REQUEST, PARSE_ERROR, error_answer
from scorch.wire.limits import REQUEST_LIMITS

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
@given(st.one_of(
    st.text(max_size=300),
    st.builds(lambda depth, opener: '{"jsonrpc": "2.0", "id": 1, "params": ' + opener * depth,
              st.integers(60, 20_000), st.sampled_from(["[", "{", '{"a":', '["x",'])),
    st.builds(lambda keys: line({**PING, "params": {str(i): [i] for i in range(keys)}}),
              st.integers(0, 8_000)),
))
def test_hostile_lines_get_an_error_answer_or_pass_on_never_raise(text: str) -> None:
    found = error_answer(text)
    if found is not None:
        assert found.error.code in (PARSE_ERROR, INVALID_REQUEST)
        assert "Traceback" not in found.error.message
        assert "RecursionError" not in found.error.message
        assert '"id":' in found.model_dump_json(by_alias=True, exclude_unset=True)
