"""The scan that bounds a JSON line before ``json.loads`` may recurse into it."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.wire.limits import REQUEST_LIMITS, Limits, OverLimit, check, loads

SMALL = Limits(size=1 << 20, depth=4, items=None)


def nested(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


def tokens_of(value: Any) -> int:
    """Containers, strings (keys too) and separators, counted from the value, not its text."""
    if isinstance(value, list):
        return 1 + max(len(value) - 1, 0) + sum(map(tokens_of, value))
    if isinstance(value, dict):
        members = len(value)
        return 1 + members + max(members - 1, 0) + sum(1 + tokens_of(v) for v in value.values())
    return isinstance(value, str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}",:\\ab\u00e9', max_size=6),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(alphabet='[]{}":,\\k', max_size=4), inner, max_size=4),
    max_leaves=30)


@pytest.mark.parametrize(("line", "why"), [
    (nested(4), None),
    (nested(5), "nested deeper than 4 levels"),
    ('{"a": {"b": {"c": {"d": 1}}}}', None),
    ('{"a": {"b": {"c": {"d": {}}}}}', "nested deeper than 4 levels"),
    ('["[[[[[[[[", "{{{{{{{{{"]', None),  # brackets in strings are text
    (r'["\"[[[[[[", "\\", [[1]]]', None),  # and so are escaped quotes
    ("]" + "[" * 100, None),  # closes first: not JSON, which json.loads says at once
])
def test_depth_counts_brackets_outside_strings(line: str, why: str | None) -> None:
    if why is None:
        check(line, SMALL)
    else:
        with pytest.raises(OverLimit, match=why):
            check(line, SMALL)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deep_line_is_refused_at_once_with_the_id_that_came_before(depth: int) -> None:
    line = '{"jsonrpc": "2.0", "id": 7, "params": ' + nested(depth) + "}"
    started = time.perf_counter()
    with pytest.raises(OverLimit, match="nested deeper than 64 levels") as raised:
        loads(line, REQUEST_LIMITS)
    assert raised.value.request_id == 7
    assert time.perf_counter() - started < 0.05


@pytest.mark.parametrize(("line", "request_id"), [
    ('{"id": "a-1", "x": ' + nested(99) + "}", "a-1"),
    ('{"x": ' + nested(99) + ', "id": 3}', None),  # after the violation: not read
    ('{"id": true, "x": ' + nested(99) + "}", None),  # not a JSON-RPC id
    ('{"id": 1.5, "x": ' + nested(99) + "}", None),
    ('{"inner": {"id": 4}, "x": ' + nested(99) + "}", None),  # not top level
    ('{"method": "id", "id": -12, "x": ' + nested(99) + "}", -12),
])
def test_only_a_top_level_string_or_integer_id_is_read(line: str, request_id: Any) -> None:
    with pytest.raises(OverLimit) as raised:
        check(line, REQUEST_LIMITS)
    assert raised.value.request_id == request_id


def test_many_keys_are_refused_before_decoding() -> None:
    many = json.dumps({"id": 9, "args": {f"k{i}": i for i in range(50_000)}})
    started = time.perf_counter()
    with pytest.raises(OverLimit, match="more than 20000 keys, items and strings") as raised:
        loads(many, REQUEST_LIMITS)
    assert raised.value.request_id == 9
    assert time.perf_counter() - started < 0.5
    with pytest.raises(OverLimit):
        check('""' * 1_000_000, REQUEST_LIMITS)  # empty strings are items too


def test_a_long_line_is_refused_with_the_id_it_starts_with() -> None:
    line = b'{"jsonrpc": "2.0", "id": "big", "params": "' + b"x" * 100 + b'"}'
    with pytest.raises(OverLimit, match="longer than 64 bytes") as raised:
        check(line, Limits(size=64))
    assert raised.value.request_id == "big"
    with pytest.raises(OverLimit) as raised:
        check(b'{"params": "' + b"x" * 100 + b'", "id": 1}', Limits(size=64))
    assert raised.value.request_id is None


def test_a_string_of_megabytes_is_within_the_limits() -> None:
    line = json.dumps({"id": 1, "method": "execute", "args": {"code": "x" * 7_000_000}})
    assert loads(line, REQUEST_LIMITS)["args"]["code"] == "x" * 7_000_000


@given(json_values)
def test_depth_is_refused_exactly_when_the_value_nests_deeper(value: Any) -> None:
    line = json.dumps(value, ensure_ascii=False)
    if depth_of(value) > SMALL.depth:
        with pytest.raises(OverLimit, match="nested deeper"):
            check(line, SMALL)
    else:
        assert loads(line, SMALL) == value


@given(json_values, st.integers(0, 40))
def test_items_are_refused_exactly_when_the_value_holds_more(value: Any, most: int) -> None:
    limits = Limits(size=1 << 20, depth=1000, items=most)
    line = json.dumps(value)
    if tokens_of(value) > most:
        with pytest.raises(OverLimit, match="more than"):
            check(line, limits)
    else:
        check(line, limits)


@settings(max_examples=300)
@given(st.one_of(
    st.binary(max_size=300),
    st.text(alphabet='[]{}",:\\ 0a', max_size=300),
    st.builds(lambda d, c: "[" * d + c, st.integers(0, 3000), st.text(max_size=5)),
))
def test_any_input_ends_in_a_value_or_a_value_error_never_a_recursion(line: bytes | str) -> None:
    with contextlib.suppress(ValueError):  # OverLimit is one, so are JSONDecodeError and
        loads(line, REQUEST_LIMITS)  # UnicodeDecodeError; RecursionError is not


@pytest.mark.parametrize("line,limits,at", [
    (b'{"a": [[[1]]]}', Limits(size=100, depth=3, items=None), 8),  # the fourth opening
    (b'["x", "y", "z"]', Limits(size=100, depth=3, items=4), 9),  # the second comma
])
def test_the_offset_where_a_limit_broke_is_kept_for_a_files_reader(
        line: bytes, limits: Limits, at: int) -> None:
    with pytest.raises(OverLimit) as refused:
        check(line, limits)
    assert refused.value.at == at
