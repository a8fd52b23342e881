"""The control wire's messages and their one codec: the bytes older scorches speak, both ways."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorch.errors
from scorch.errors import InvalidRequest, RemoteError, ScorchError, by_name, rebuild
from scorch.wire.envelope import (
    MAX_REQUEST,
    BadRequest,
    Reply,
    Request,
    WireError,
    decode_reply,
    decode_request,
    encode,
)
from tests.support import hostile_json

ERROR_KINDS = sorted(name for name in dir(scorch.errors) if by_name(name) is not None)


def old_line(message: dict[str, Any]) -> bytes:
    """A line as the hand-built envelopes before the models wrote it."""
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize(("message", "before"), [
    (Request(id=1, method="status", args={"instance": "lobby"}),
     {"id": 1, "method": "status", "args": {"instance": "lobby"}}),
    (Request(id=2, method="ping"), {"id": 2, "method": "ping", "args": {}}),
    (Reply(id=1, result={"instances": ["a"]}), {"id": 1, "result": {"instances": ["a"]}}),
    (Reply(id="x", result=None), {"id": "x", "result": None}),
    (Request(id=3, method="execute", args={}, key="k1"),
     {"id": 3, "method": "execute", "args": {}, "key": "k1"}),
    (Reply.failed(3, InvalidRequest("bad")),
     {"id": 3, "error": {"type": "InvalidRequest", "message": "bad",
                         "code": "INVALID_ARGUMENT", "retryable": False, "argument": None}}),
    (Reply(error=WireError(type="ControlBusy", message="full"), closed=True, evicted=True),
     {"id": None, "error": {"type": "ControlBusy", "message": "full", "code": None,
                            "retryable": None, "argument": None},
      "closed": True, "evicted": True}),
])
def test_lines_are_byte_for_byte_what_older_scorches_wrote_and_new_keys_come_after(
        message: Request | Reply, before: dict[str, Any]) -> None:
    """A request without key is the old line; an error's new keys follow type and message."""
    assert encode(message) == old_line(before)


def test_an_older_servers_error_gets_its_class_code_and_a_newer_ones_code_wins() -> None:
    old = decode_reply(old_line({"id": 1, "error": {"type": "InstanceNotFound",
                                                    "message": "no room"}}))
    with pytest.raises(ScorchError) as raised:
        old.unwrap()
    assert (raised.value.code, raised.value.retryable, raised.value.argument) == (
        "NOT_FOUND", False, None)
    new = decode_reply(old_line({"id": 1, "error": {
        "type": "InstanceNotReady", "message": "booting", "code": "BOOTING",
        "retryable": True, "argument": "instance"}}))
    with pytest.raises(ScorchError) as raised:
        new.unwrap()
    assert (raised.value.code, raised.value.retryable, raised.value.argument) == (
        "BOOTING", True, "instance")


@pytest.mark.parametrize(("kind", "sent"), sorted(scorch.errors.WIRE_NAMES.items()))
def test_a_room_error_crosses_by_its_former_name_and_either_name_reads_back(
        kind: str, sent: str) -> None:
    line = encode(Reply.failed(3, rebuild(kind, "no room 'x'")))
    assert json.loads(line)["error"]["type"] == sent  # what a scorch before the rename reads
    for name in (kind, sent):
        with pytest.raises(ScorchError) as raised:
            decode_reply(old_line({"id": 3, "error": {"type": name, "message": "m"}})).unwrap()
        assert type(raised.value) is getattr(scorch.errors, kind)


def test_an_unknown_code_from_the_other_side_is_not_taken() -> None:
    err = WireError(type="NotFound", message="x", code="SOMETHING_NEW").exception()
    assert err.code == "NOT_FOUND"


def test_an_older_servers_closing_line_is_read_as_closed() -> None:
    line = old_line({"id": None, "closed": True, "evicted": False,
                     "error": {"type": "InvalidRequest", "message": "too long"}})
    reply = decode_reply(line)
    assert reply.closed and not reply.evicted and reply.id is None
    with pytest.raises(InvalidRequest, match="too long"):
        reply.unwrap()


def test_a_reply_with_keys_of_a_newer_scorch_still_reads() -> None:
    reply = decode_reply(old_line({"id": 4, "result": 5, "took_ms": 3}))
    assert reply.unwrap() == 5


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_every_error_kind_crosses_as_itself(kind: str) -> None:
    sent = rebuild(kind, f"the {kind} text")
    line = encode(Reply.failed(8, sent))
    with pytest.raises(ScorchError) as raised:
        decode_reply(line, "status").unwrap()
    assert type(raised.value) is type(sent) and str(raised.value) == f"the {kind} text"
    assert (raised.value.code, raised.value.retryable) == (sent.code, sent.retryable)


@pytest.mark.parametrize("key", ["", "k" * 129, 12])
def test_a_request_key_is_a_short_string(key: Any) -> None:
    line = json.dumps({"id": 4, "method": "execute", "args": {}, "key": key}).encode()
    with pytest.raises(BadRequest, match="key") as raised:
        decode_request(line)
    assert raised.value.request_id == 4


def test_an_error_class_the_other_side_cannot_know_crosses_as_its_nearest_known_kind() -> None:
    assert WireError.of(BadRequest("no", request_id=3)).type == "InvalidRequest"
    unknown = WireError(type="SomethingNew", message="hm").exception()
    assert type(unknown) is RemoteError and str(unknown) == "SomethingNew: hm"


@given(st.one_of(st.none(), st.integers(), st.text(max_size=10)),
       st.text(min_size=1, max_size=20),
       st.dictionaries(st.text(max_size=8), st.one_of(
           st.none(), st.floats(allow_nan=False), st.text(max_size=10),
           st.lists(st.integers(), max_size=4)), max_size=5))
def test_a_request_comes_back_as_it_went(request_id: Any, method: str,
                                        args: dict[str, Any]) -> None:
    request = Request(id=request_id, method=method, args=args, key=method[:128])
    assert decode_request(encode(request)) == request


@pytest.mark.parametrize(("line", "request_id", "text"), [
    (b"not json", None, "must be one JSON object"),
    (b"[1, 2]", None, "must be a JSON object"),
    (b'{"id": 4, "method": "ping", "args": 7}', 4, "args: Input should be a valid dictionary"),
    (b'{"id": 5, "args": {}}', 5, "method: this key is required"),
    (b'{"id": 6, "method": 12}', 6, "method: Input should be a valid string"),
    (b'{"id": 7, "method": "ping", "args": ' + b"[" * 1000 + b"]" * 1000 + b"}", 7,
     "nested deeper than 64 levels"),
    (b'{"id": 8, "args": ' + b"{" * 100_000, 8, "nested deeper than 64 levels"),
    (b'{"id": 9, "method": "x", "args": {' + b", ".join(
        b'"k%d": %d' % (i, i) for i in range(30_000)) + b"}}", 9, "more than 20000 keys"),
    (b'{"id": 10, "method": "x", "args": {"code": "' + b"x" * MAX_REQUEST + b'"}}', 10,
     f"longer than {MAX_REQUEST} bytes"),
])
def test_a_line_that_is_no_request_says_why_with_its_id_when_readable(
        line: bytes, request_id: Any, text: str) -> None:
    with pytest.raises(BadRequest, match=text) as raised:
        decode_request(line)
    assert raised.value.request_id == request_id
    assert WireError.of(raised.value).type == "InvalidRequest"


@settings(max_examples=150, deadline=None)
@given(hostile_json.lines())
def test_hostile_lines_end_in_a_request_or_a_bad_request_that_leaks_nothing(line: bytes) -> None:
    try:
        decode_request(line)
    except BadRequest as err:
        reply = decode_reply(encode(Reply.failed(err.request_id, err)))
        assert reply.error is not None and reply.error.type == "InvalidRequest"
        assert not hostile_json.leaks(reply.error.message), reply.error.message
        assert len(reply.error.message) < 4096


@settings(max_examples=100, deadline=None)
@given(hostile_json.lines(head=b'{"id": 1, "result": '))
def test_a_line_that_is_no_reply_is_a_remote_error(line: bytes) -> None:
    try:
        reply = decode_reply(line, "ping")
    except RemoteError as err:
        assert "the answer to 'ping'" in str(err)
    else:
        assert isinstance(reply, Reply)


def test_a_reply_of_more_items_than_the_limit_is_a_remote_error_and_the_next_reads() -> None:
    from scorch.wire.envelope import REPLY_LIMITS

    assert REPLY_LIMITS.items is not None
    many = b'{"id": 1, "result": [' + b"1," * REPLY_LIMITS.items + b'1]}\n'
    with pytest.raises(RemoteError, match=r"the answer to 'status' is more than 1000000 keys"):
        decode_reply(many, "status")
    assert decode_reply(b'{"id": 2, "result": [1, 2]}\n', "status").unwrap() == [1, 2]
