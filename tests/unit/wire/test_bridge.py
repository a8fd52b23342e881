"""``scorch bridge``: the control wire over a byte stream, against a real control server.

The server serves an orchestra that is not started (no process needed: its
views answer ``ping``, ``list_instances`` and ``wait_for``); the bridge reads
request lines from a pipe and writes the answers to another, as under ssh.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.wire.envelope import MAX_REQUEST, socket_path
from scorch.wire.server import ControlServer
from tests.support.bridge_pipe import Piped

CONFIG = """
[instances.alpha]
group = "rooms"
"""




@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def served(tmp_path: Path, state: Path) -> Iterator[ControlServer]:
    orchestra = Orchestra(parse_config(CONFIG, tmp_path / "config.toml"))
    server = ControlServer(LocalService(orchestra), state)
    server.start()
    yield server
    server.stop()


def request(request_id: int, method: str, **args: Any) -> bytes:
    return json.dumps({"id": request_id, "method": method, "args": args}).encode() + b"\n"


def test_answers_carry_their_ids_and_a_slow_one_holds_no_other(served: ControlServer) -> None:
    bridge = Piped(served.path)
    started = time.monotonic()
    bridge.send(request(1, "wait_for", instance="alpha", pattern="never", timeout_s=1.5))
    bridge.send(request(2, "ping"))
    first = bridge.answer()
    assert first["id"] == 2 and first["result"]["instances"] == ["alpha"]
    assert time.monotonic() - started < 1.0  # not behind the wait
    second = bridge.answer()
    assert second["id"] == 1 and second["result"] == {"matched": False, "line": None}
    assert time.monotonic() - started >= 1.4
    assert bridge.close() == 0


def test_an_operation_error_crosses_as_the_servers_error(served: ControlServer) -> None:
    bridge = Piped(served.path)
    bridge.send(request(7, "status", instance="nobody"))
    answer = bridge.answer()
    assert answer["id"] == 7
    assert answer["error"]["type"] == "InstanceNotFound"
    assert "known rooms: alpha" in answer["error"]["message"]
    assert bridge.close() == 0


def test_without_a_scorch_run_each_request_says_so_and_the_next_finds_one(
        tmp_path: Path, state: Path) -> None:
    bridge = Piped(socket_path(state))
    bridge.send(request(1, "ping"))
    answer = bridge.answer()
    assert answer["id"] == 1 and answer["error"]["type"] == "NotRunning"
    assert "not running" in answer["error"]["message"]
    orchestra = Orchestra(parse_config(CONFIG, tmp_path / "config.toml"))
    server = ControlServer(LocalService(orchestra), state)
    server.start()
    try:
        bridge.send(request(2, "ping"))
        answer = bridge.answer()
        direct = server.handle(request(0, "ping")).result
        assert answer["id"] == 2
        assert abs(answer["result"].pop("time") - direct.pop("time")) < 5.0
        assert answer["result"] == direct
    finally:
        assert bridge.close() == 0
        server.stop()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")),
    st.text(max_size=200).map(lambda t: t.replace("\n", "").encode()),
    st.dictionaries(st.sampled_from(["id", "method", "args", "x"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=20),
                              st.lists(st.integers(), max_size=3)),
                    max_size=4).map(lambda d: json.dumps(d).encode())),
    min_size=1, max_size=8))
def test_any_line_gets_one_answer_and_the_bridge_goes_on(
        served: ControlServer, lines: list[bytes]) -> None:
    bridge = Piped(served.path)
    wanted = [line for line in lines if line.strip()]
    for line in wanted:
        bridge.send(line + b"\n")
    answers = [bridge.answer() for _ in wanted]
    for answer in answers:
        assert set(answer) <= {"id", "result", "error"}
        assert ("result" in answer) != ("error" in answer)
        if "error" in answer:
            assert answer["error"]["type"] and answer["error"]["message"]
    bridge.send(request(99, "ping"))
    assert bridge.answer()["id"] == 99
    assert bridge.close() == 0


def nested_request(request_id: int, depth: int) -> bytes:
    return (b'{"id": %d, "method": "status", "args": {"instance": ' % request_id
            + b"[" * depth + b"]" * depth + b"}}\n")


HOSTILE = {
    "nested 1,000 deep": (nested_request(5, 1_000), "nested deeper than 64 levels"),
    "nested 100,000 deep": (nested_request(5, 100_000), "nested deeper than 64 levels"),
    "unclosed 100,000 deep": (b'{"id": 5, "args": ' + b"{" * 100_000 + b"\n",
                              "nested deeper than 64 levels"),
    "many keys": (request(5, "status", **{f"k{i}": i for i in range(30_000)}),
                  "more than 20000 keys"),
    "over the size": (request(5, "execute", instance="alpha", code="x" * MAX_REQUEST),
                      f"longer than {MAX_REQUEST} bytes"),
}


@pytest.mark.parametrize("line", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_line_gets_one_error_with_its_id_and_the_bridge_goes_on(
        served: ControlServer, line: tuple[bytes, str]) -> None:
    data, text = line
    bridge = Piped(served.path)
    sender = threading.Thread(target=bridge.send, args=(data,))
    sender.start()  # a line over the pipe's size is written while the bridge reads it
    answer = bridge.answer()
    sender.join(timeout=10)
    assert answer["id"] == 5 and answer["error"]["type"] == "InvalidRequest"
    assert text in answer["error"]["message"] and len(answer["error"]["message"]) < 200
    bridge.send(request(6, "ping"))
    assert bridge.answer()["result"]["instances"] == ["alpha"]
    assert bridge.close() == 0  # and nothing more was answered


def test_a_large_request_within_the_limits_reaches_the_server(served: ControlServer) -> None:
    bridge = Piped(served.path)
    sender = threading.Thread(target=bridge.send, args=(
        request(5, "status", instance="x" * (MAX_REQUEST - 100)),))
    sender.start()
    answer = bridge.answer()
    sender.join(timeout=10)
    assert answer["id"] == 5 and answer["error"]["type"] == "InvalidRequest"
    assert "instance" in answer["error"]["message"]  # the operation's schema said so
    bridge.send(request(6, "ping"))
    assert bridge.answer()["id"] == 6
    assert bridge.close() == 0


def test_a_keyed_request_sent_again_through_a_new_bridge_runs_once(tmp_path: Path) -> None:
    """As when ssh drops mid-call and the coordinator asks again through a new bridge."""
    state = tmp_path / "own-state"
    config = parse_config(f'state_dir = "{state}"\n{CONFIG}', tmp_path / "config.toml")
    server = ControlServer(LocalService(Orchestra(config)), state)
    server.start()
    save = {"id": 1, "method": "snippet", "key": "once-1", "args": {
        "action": "save", "name": "once", "code": "1 + 1", "description": "a test"}}
    try:
        dropped = Piped(server.path)
        dropped.send(json.dumps(save).encode() + b"\n")
        dropped.requests.close()  # gone before its answer came: it may or may not have run
        dropped.thread.join(timeout=10)
        dropped.answers.close()
        bridge = Piped(server.path)
        bridge.send(json.dumps({**save, "id": 2}).encode() + b"\n")
        answer = bridge.answer()
        assert answer["id"] == 2 and "error" not in answer, answer
        assert answer["result"]["snippet"]["name"] == "once"
        bridge.send(json.dumps({**save, "id": 3, "key": "once-2"}).encode() + b"\n")
        other = bridge.answer()  # another key: it runs, and the snippet was saved once
        assert other["error"]["type"] == "SnippetExists"
        assert other["error"]["code"] == "INVALID_ARGUMENT"
        assert bridge.close() == 0
    finally:
        server.stop()
