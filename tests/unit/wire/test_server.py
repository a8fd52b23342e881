"""The control server's answer to any line: a reply with the request's id, never an internal error.

``ControlServer.handle`` on an orchestra that is built but not started (its
views answer ``ping``); the socket itself is tested in
tests/integration/frontends/test_control.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import CODES
from scorch.wire.envelope import Request, decode_reply, encode
from scorch.wire.server import ControlServer
from tests.support import hostile_json


@pytest.fixture
def server(tmp_path: Path) -> ControlServer:
    orchestra = Orchestra(parse_config("[instances.alpha]\n", tmp_path / "config.toml"))
    return ControlServer(LocalService(orchestra), tmp_path / "state")  # not started: no socket


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile_json.lines(head=b'{"id": 1, "method": "status", "args": '))
def test_any_line_is_answered_with_a_kind_the_client_knows_and_nothing_internal(
        server: ControlServer, line: bytes) -> None:
    reply = decode_reply(encode(server.handle(line)))  # as the client reads it
    if reply.error is not None:
        assert reply.error.type != "InternalError", reply.error.message
        assert not hostile_json.leaks(reply.error.message), reply.error.message
        assert len(reply.error.message) < 200_000


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile_json.lines(head=b'{"id": 1, "method": "instance", "args": {"action": "quit", '
                          b'"name": "alpha"}, "key": '))
def test_any_request_key_is_answered_with_a_kind_the_client_knows(
        server: ControlServer, line: bytes) -> None:
    reply = decode_reply(encode(server.handle(line)))
    if reply.error is not None:
        assert reply.error.type != "InternalError", reply.error.message
        assert reply.error.code in CODES
        assert not hostile_json.leaks(reply.error.message), reply.error.message


def test_the_request_id_comes_back_on_an_answer_and_on_an_error(server: ControlServer) -> None:
    answer = server.handle(encode(Request(id="a", method="ping")))
    assert answer.id == "a" and answer.unwrap()["instances"] == ["alpha"]
    refused = server.handle(b'{"id": 12, "method": "ping", "args": ' + b"[" * 1000 + b"}")
    assert refused.id == 12 and refused.error is not None
    assert refused.error.type == "InvalidRequest"
