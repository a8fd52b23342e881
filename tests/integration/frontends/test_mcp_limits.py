"""A real ``scorch mcp`` over stdio: hostile lines are answered, and the session goes on.

Nested 1,000 and 100,000 deep, many-keyed and over-long lines each get the
JSON-RPC error with their id; then a tool call on the same session succeeds,
and the server ends only when its input does (a 1,000-deep ``params`` used to
end it at once, with status 0).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from scorch.wire.limits import REQUEST_LIMITS
from tests.conftest import jack_name
from tests.support.mcp.stdio import INITIALIZE, INITIALIZED, Session, one_room_config

pytestmark = pytest.mark.integration


def deep(request_id: int, depth: int, closed: bool = True) -> bytes:
    return (b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list", "params": {"x": ' % request_id
            + b"[" * depth + (b"]" * depth + b"}}" if closed else b"") + b"\n")


def message(**fields: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode() + b"\n"


HOSTILE = {
    2: (deep(2, 1_000), "nested deeper than 64 levels"),
    3: (deep(3, 100_000), "nested deeper than 64 levels"),
    4: (deep(4, 100_000, closed=False), "nested deeper than 64 levels"),
    5: (message(id=5, method="tools/list", params={f"k{i}": i for i in range(30_000)}),
        "more than 20000 keys"),
    6: (message(id=6, method="tools/call", params={
        "name": "execute", "arguments": {"instance": "room", "code": "x" * REQUEST_LIMITS.size}}),
        f"longer than {REQUEST_LIMITS.size} bytes"),
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return one_room_config(tmp_path, jack_name("limits"))


def test_hostile_lines_get_json_rpc_errors_and_the_session_goes_on(
        config: Path, tmp_path: Path) -> None:
    session = Session(config, tmp_path / "cache")
    try:
        session.send(INITIALIZE, INITIALIZED)
        assert "result" in session.answers(1)[0]
        assert session.proc.stdin is not None
        stdin = session.proc.stdin

        def send_all() -> None:  # megabytes: written while the server reads them
            for line, _ in HOSTILE.values():
                stdin.write(line)
            stdin.flush()

        sender = threading.Thread(target=send_all)
        sender.start()
        errors = {a["id"]: a for a in session.answers(len(HOSTILE))}
        sender.join(timeout=30)
        for request_id, (_, text) in HOSTILE.items():
            error = errors[request_id]["error"]
            assert error["code"] == -32600 and text in error["message"], error
        session.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "synthdefs", "arguments": {"action": "list"}}})
        (called,) = session.answers(1)
        assert called["id"] == 9 and not called["result"].get("isError")
        assert session.nothing_more(0.5)
    finally:
        log = session.close()
    assert session.proc.returncode == 0
    assert "RecursionError" not in log and "Traceback" not in log
