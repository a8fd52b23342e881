"""The control socket: owner-only, one server per installation, same answers as in-process.

The socket's own behaviour (permissions, errors, the connection pool) is tested
on an Orchestra that is built but not started: names, groups, states and every
"not ready" error come from the facade without any process. Whether hosted and
attached give the same answers, on a real started orchestra: test_hosted_attached.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scorch.api.local import LocalService
from scorch.api.operation import Args, Result
from scorch.api.remote import IDLE_CONNECTIONS, ControlClient, RemoteService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import (
    InvalidRequest,
    NodeNotFound,
    NotFound,
    NotRunning,
    RemoteError,
    RoomNotFound,
    RoomNotReady,
    ScorchError,
    UnknownSynthDef,
    rebuild,
)
from scorch.wire.envelope import MAX_REQUEST, find_running
from scorch.wire.server import ControlServer
from tests.support.skips import only_on

CONFIG = """
[instances.alpha]
group = "rooms"
[instances.beta]
group = "rooms"
"""


@pytest.fixture
def orchestra(tmp_path: Path) -> Orchestra:
    return Orchestra(parse_config(CONFIG, tmp_path / "config.toml"))


@pytest.fixture
def served(orchestra: Orchestra, tmp_path: Path) -> Iterator[ControlServer]:
    server = ControlServer(LocalService(orchestra), tmp_path / "state")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(served: ControlServer) -> Iterator[ControlClient]:
    client = ControlClient(served.path)
    yield client
    client.close()


def test_socket_is_owner_only_in_an_owner_only_directory(served: ControlServer) -> None:
    assert stat.S_ISSOCK(served.path.stat().st_mode)
    assert stat.S_IMODE(served.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(served.path.parent.stat().st_mode) == 0o700


def test_find_running_sees_a_served_socket_and_nothing_once_stopped(
        served: ControlServer, tmp_path: Path) -> None:
    assert find_running(tmp_path / "state") == served.path
    served.stop()
    assert not served.path.exists()
    assert find_running(tmp_path / "state") is None


def test_a_stale_socket_file_is_replaced(orchestra: Orchestra, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(state / "control.sock"))  # bound, never listening: nobody answers
    dead.close()
    assert find_running(state) is None
    server = ControlServer(LocalService(orchestra), state)
    server.start()
    try:
        assert find_running(state) == server.path
    finally:
        server.stop()


def test_a_second_server_for_the_same_installation_is_refused(
        served: ControlServer, orchestra: Orchestra, tmp_path: Path) -> None:
    with pytest.raises(ScorchError, match="already serves this installation"):
        ControlServer(LocalService(orchestra), tmp_path / "state").start()
    assert find_running(tmp_path / "state") == served.path


def test_calls_return_the_operations_answers(client: ControlClient) -> None:
    assert client.call("ping")["instances"] == ["alpha", "beta"]
    rows = client.call("list_instances")["instances"]
    assert [(r["name"], r["group"], r["state"]) for r in rows] == [
        ("alpha", "rooms", "STOPPED"), ("beta", "rooms", "STOPPED")]


@pytest.mark.parametrize(("method", "args", "kind", "text"), [
    ("status", {"instance": "gamma"}, RoomNotFound, "known rooms: alpha, beta"),
    ("release", {"instance": "alpha", "node": "x"}, RoomNotReady, "not started"),
    ("execute", {"instance": "alpha", "code": " "}, InvalidRequest, "code is empty"),
    ("synthdefs", {"action": "describe", "name": "nope"}, UnknownSynthDef,
     "unknown SynthDef 'nope'"),
])
def test_errors_come_back_as_the_same_kind_with_the_same_text(
        served: ControlServer, method: str, args: dict[str, Any], kind: type[Exception],
        text: str) -> None:
    remote = RemoteService(served.path)
    with pytest.raises(kind, match=text) as raised:
        remote.call(method, args)
    assert type(raised.value) is kind
    with pytest.raises(kind, match=text):  # the same kind as in process
        LocalService(served.service.orchestra).call(method, args)
    remote.close()


def test_only_operations_are_served(client: ControlClient) -> None:
    with pytest.raises(NotFound, match=r"no operation .__init__.; operations: .*execute"):
        client.call("__init__")
    with pytest.raises(NotFound, match="no operation 'orchestra'"):
        client.call("orchestra")


def test_garbage_gets_an_error_reply_and_the_connection_lives_on(served: ControlServer) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(served.path))
        reader = sock.makefile("rb")
        for garbage in (b"not json\n", b"[1, 2]\n", b'{"id": 4, "method": "ping", "args": 7}\n'):
            sock.sendall(garbage)
            assert b'"type": "InvalidRequest"' in reader.readline()
        sock.sendall(b'{"id": 5, "method": "ping", "args": {}}\n')
        assert reader.readline().startswith(b'{"id": 5, "result"')
        reader.close()


def nested_request(request_id: int, depth: int) -> bytes:
    return (b'{"id": %d, "method": "status", "args": {"instance": ' % request_id
            + b"[" * depth + b"]" * depth + b"}}\n")


def json_line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_hostile_json_gets_an_error_with_its_id_and_the_connection_lives_on(
        served: ControlServer) -> None:
    hostile = [
        (nested_request(1, 1_000), "nested deeper than 64 levels"),
        (nested_request(2, 100_000), "nested deeper than 64 levels"),
        (b'{"id": 3, "args": ' + b"{" * 100_000 + b"\n", "nested deeper than 64 levels"),
        (json_line({"id": 4, "method": "status", "args": {f"k{i}": i for i in range(30_000)}}),
         "more than 20000 keys"),
        (json_line({"id": 5, "method": "status", "args": {"instance": "x" * (MAX_REQUEST - 99)}}),
         "instance: a room or group name must be"),
    ]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(served.path))
        reader = sock.makefile("rb")
        for number, (line, text) in enumerate(hostile, start=1):
            sock.sendall(line)
            reply = json.loads(reader.readline())
            assert reply["id"] == number and reply["error"]["type"] == "InvalidRequest"
            assert text in reply["error"]["message"] and len(reply["error"]["message"]) < 500
        sock.sendall(b'{"id": 9, "method": "ping", "args": {}}\n')
        assert json.loads(reader.readline())["result"]["instances"] == ["alpha", "beta"]
        reader.close()


def test_a_line_over_the_size_is_refused_and_closed_and_the_next_connection_is_served(
        served: ControlServer, client: ControlClient) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(served.path))
        reader = sock.makefile("rb")
        line = json_line({"id": 1, "method": "ping", "args": {"x": "y" * MAX_REQUEST}})

        def send() -> None:
            with contextlib.suppress(OSError):
                sock.sendall(line)

        sender = threading.Thread(target=send)
        sender.start()  # the server stops reading once past the size: the rest goes nowhere
        reply = json.loads(reader.readline())
        assert reply["closed"] is True and reply["error"]["type"] == "InvalidRequest"
        assert f"at most {MAX_REQUEST} bytes" in reply["error"]["message"]
        assert reader.readline() == b""  # closed
        sock.shutdown(socket.SHUT_RDWR)
        sender.join(timeout=10)
        reader.close()
    assert client.call("ping")["instances"] == ["alpha", "beta"]


def test_arguments_are_checked_by_the_operation_schema_on_the_server(
        client: ControlClient) -> None:
    with pytest.raises(InvalidRequest, match=r"(?s)execute: invalid arguments.*timeout_s"):
        client.call("execute", {"instance": "alpha", "code": "1", "timeout_s": "soon"})
    with pytest.raises(InvalidRequest, match=r"extra.*unknown argument"):
        client.call("status", {"instance": "alpha", "extra": 1})


def test_an_unknown_remote_error_kind_becomes_a_remote_error() -> None:
    error = rebuild("ZeroDivisionError", "boom")
    assert isinstance(error, RemoteError) and str(error) == "ZeroDivisionError: boom"
    same = rebuild("NodeNotFound", "no node 'x'")
    assert type(same) is NodeNotFound and str(same) == "no node 'x'"


def test_parallel_callers_each_get_their_own_answer(client: ControlClient) -> None:
    answers: list[Any] = []

    def ask() -> None:
        answers.append(client.call("status", {"instance": "beta"})["instances"][0]["name"])

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert answers == ["beta"] * 8


def test_a_stopped_installation_is_reported_not_crashed(served: ControlServer) -> None:
    client = ControlClient(served.path)
    client.call("ping")
    served.stop()
    with pytest.raises((RoomNotReady, NotRunning),
                       match=r"not running|closed the connection"):
        client.call("list_instances")
    client.close()


def client_ends(path: Path) -> int:
    """File descriptors of this process connected to the socket at ``path`` (client ends).

    A client end's peer is the socket path; the server's ends and the listening
    socket have none, so each connection counts once.
    """
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            dup = socket.socket(fileno=os.dup(int(fd)))
        except OSError:
            continue  # closed meanwhile, or the listing's own descriptor
        with dup:
            if dup.family == socket.AF_UNIX:
                try:
                    peer = dup.getpeername()
                except OSError:
                    continue
                count += peer == str(path)
    return count


def conn_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "control-conn"}


def run_threads(target: Callable[[], None], count: int, *, together: bool) -> None:
    """Run ``target`` in ``count`` short-lived threads, all at once or one after another."""
    threads = [threading.Thread(target=target) for _ in range(count)]
    for thread in threads:
        thread.start()
        if not together:
            thread.join(timeout=10)
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()


linux_only = only_on(sys.platform.startswith("linux"), "reads /proc (Linux's)")


@linux_only
def test_short_lived_threads_one_after_another_share_one_connection(
        client: ControlClient) -> None:
    answers: list[str] = []
    run_threads(lambda: answers.append(client.call("ping")["instances"][0]), 20,
                together=False)
    assert answers == ["alpha"] * 20
    assert client_ends(client.path) == 1


@linux_only
def test_fifty_short_lived_threads_leave_no_more_than_the_idle_pool_open(
        served: ControlServer) -> None:
    before = conn_threads()
    client = ControlClient(served.path)
    barrier = threading.Barrier(50, timeout=10)
    answers: list[str] = []

    def ask() -> None:
        barrier.wait()  # all 50 in flight together, so the pool has to grow
        answers.append(client.call("status", {"instance": "beta"})["instances"][0]["name"])

    run_threads(ask, 50, together=True)
    assert answers == ["beta"] * 50
    assert 1 <= client_ends(served.path) <= IDLE_CONNECTIONS
    serving = conn_threads() - before
    assert serving  # the server did run a thread per connection
    client.close()
    assert client_ends(served.path) == 0
    for thread in serving:  # each ends once its client end is closed
        thread.join(timeout=5)
    assert not [t for t in serving if t.is_alive()]


def test_a_long_call_does_not_hold_up_other_callers(
        served: ControlServer, orchestra: Orchestra, client: ControlClient) -> None:
    entered, done = threading.Event(), threading.Event()

    class Waiting(LocalService):
        def call(self, name: str, args: dict[str, Any] | Args) -> Result:
            if name == "wait_for":
                entered.set()
                done.wait(10)
            return super().call(name, args)

    served.service = Waiting(orchestra)
    waited: list[Any] = []
    waiter = threading.Thread(target=lambda: waited.append(client.call(
        "wait_for", {"instance": "alpha", "pattern": "x", "timeout_s": 0.01})))
    waiter.start()
    try:
        assert entered.wait(5)
        assert client.call("ping", timeout=5)["instances"] == ["alpha", "beta"]
    finally:
        done.set()
        waiter.join(timeout=5)
    assert waited == [{"matched": False, "line": None}]
