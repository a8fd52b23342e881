"""At most once: the server's table of request keys, and the server that keeps it.

``Once`` is driven with real threads and events; ``ControlServer.handle`` with
an orchestra that is built but not started, whose snippet library works without
rooms: saving a snippet is a change a second run would refuse (it exists).
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path

import pytest

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.wire.envelope import Reply, Request, encode
from scorch.wire.once import Once, derive
from scorch.wire.server import ControlServer


def request(key: str | None, request_id: int = 1, code: str = "1") -> Request:
    return Request(id=request_id, method="execute", args={"code": code}, key=key)


def test_a_resend_while_the_first_runs_waits_for_its_reply_and_runs_nothing() -> None:
    once = Once()
    entered, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def slow() -> Reply:
        runs.append(1)
        entered.set()
        assert release.wait(10)
        return Reply(id=1, result={"value": len(runs)})

    first: list[Reply] = []
    thread = threading.Thread(target=lambda: first.append(once.run(request("k"), slow)))
    thread.start()
    assert entered.wait(10)
    second: list[Reply] = []
    resend = threading.Thread(target=lambda: second.append(once.run(
        request("k", request_id=2), lambda: Reply(id=2, result={"value": "ran again"}))))
    resend.start()
    resend.join(timeout=0.2)
    assert resend.is_alive()  # waiting for the first run, not running
    release.set()
    thread.join(timeout=10)
    resend.join(timeout=10)
    assert runs == [1]
    assert first[0].result == second[0].result == {"value": 1}
    assert second[0].id == 2  # the resend's own id


def test_a_resend_after_the_first_run_gets_its_reply_at_once_and_another_key_runs() -> None:
    once = Once()
    assert once.run(request("a"), lambda: Reply(id=1, result=1)).result == 1
    assert once.run(request("a", 5), lambda: Reply(id=5, result=2)).result == 1
    assert once.run(request("b"), lambda: Reply(id=1, result=3)).result == 3


def test_a_key_given_to_another_operation_is_refused() -> None:
    once = Once()
    once.run(request("a"), lambda: Reply(id=1, result=1))
    other = once.run(Request(id=2, method="play", key="a"), lambda: Reply(id=2, result=2))
    assert other.error is not None and other.error.code == "INVALID_ARGUMENT"
    assert "another operation" in other.error.message


def test_a_resend_whose_arguments_moved_on_is_still_the_same_request() -> None:
    """A coordinator's resend of a delayed call has another ``at``: it must not run again."""
    once = Once()
    once.run(request("a", code="at 1.0"), lambda: Reply(id=1, result=1))
    assert once.run(request("a", code="at 1.2"), lambda: Reply(id=1, result=2)).result == 1


def test_finished_keys_are_forgotten_after_their_time_and_beyond_the_size() -> None:
    once = Once(keep=0.0)
    once.run(request("a"), lambda: Reply(id=1, result=1))
    assert once.run(request("a"), lambda: Reply(id=1, result=2)).result == 2  # forgotten
    bounded = Once(size=3)
    for n in range(10):
        bounded.run(request(f"k{n}"), lambda: Reply(id=1, result=0))
    assert len(bounded) <= 4  # the oldest finished go first; the newest is there
    assert bounded.run(request("k9"), lambda: Reply(id=1, result=9)).result == 0


def test_a_run_that_raises_leaves_no_key_so_a_resend_runs() -> None:
    once = Once()

    def broken() -> Reply:
        raise RuntimeError("no reply")

    with pytest.raises(RuntimeError):
        once.run(request("a"), broken)
    assert once.run(request("a"), lambda: Reply(id=1, result=2)).result == 2


def test_a_part_key_is_the_same_on_every_resend_and_another_per_part() -> None:
    assert derive("k", "alpha") == derive("k", "alpha")
    assert len({derive("k", "alpha"), derive("k", "beta"), derive("j", "alpha")}) == 3


@pytest.fixture
def server(tmp_path: Path) -> ControlServer:
    config = parse_config(f'state_dir = "{tmp_path / "state"}"\n[instances.alpha]\n',
                          tmp_path / "config.toml")
    return ControlServer(LocalService(Orchestra(config)), tmp_path / "state")  # not started


def save(key: str | None, request_id: int) -> bytes:
    return encode(Request(id=request_id, method="snippet", key=key, args={
        "action": "save", "name": "once", "code": "1 + 1", "description": "a test"}))


def test_a_keyed_change_runs_once_and_its_resend_gets_the_first_reply(
        server: ControlServer) -> None:
    first = server.handle(save("k1", 1))
    assert first.error is None, first.error
    again = server.handle(save("k1", 2))
    assert again.id == 2 and again.error is None and again.result == first.result
    assert len(server.once) == 1


def test_without_a_key_the_same_change_runs_again(server: ControlServer) -> None:
    assert server.handle(save(None, 1)).error is None
    second = server.handle(save(None, 2))  # ran: the snippet exists now
    assert second.error is not None and second.error.type == "SnippetExists"
    assert second.error.code == "INVALID_ARGUMENT"


def test_an_idempotent_call_keeps_no_key(server: ControlServer) -> None:
    ping = encode(Request(id=1, method="ping", key="p"))
    assert server.handle(ping).error is None
    assert len(server.once) == 0


def test_a_restarted_server_gives_a_resend_the_first_runs_reply(tmp_path: Path) -> None:
    first = ControlServer(LocalService(Orchestra(parse_config(
        f'state_dir = "{tmp_path / "state"}"\n[instances.alpha]\n', tmp_path / "config.toml"))),
        tmp_path / "state")
    ran = first.handle(save("k1", 1))
    assert ran.error is None, ran.error
    # A new server on the same state directory (scorch run restarted): the snippet exists
    # now, so a second run would fail; the resend gets the first reply instead.
    second = ControlServer(first.service, tmp_path / "state")
    again = second.handle(save("k1", 2))
    assert again.id == 2 and again.error is None and again.result == ran.result
    assert second.handle(save("k2", 3)).error is not None  # a new key runs, and fails


def test_the_journal_keeps_only_young_keys_skips_bad_lines_and_is_compacted(
        tmp_path: Path) -> None:
    journal = tmp_path / "keys.jsonl"
    once = Once(size=4, keep=600, journal=journal)
    for i in range(12):
        once.run(request(f"k{i}"), functools.partial(Reply, id=1, result=i))
    assert len(journal.read_text().splitlines()) <= 2 * 4 + 1  # rewritten, not grown
    with journal.open("a") as out:
        out.write("not json\n{\"key\": 1}\n")
    again = Once(size=4, keep=600, journal=journal)
    assert len(again) == 4  # the 4 newest
    assert again.run(request("k11", 9), lambda: Reply(id=9, result="ran")).result == 11
    assert again.run(request("k0", 9), lambda: Reply(id=9, result="ran")).result == "ran"
    lines = [json.loads(line) for line in journal.read_text().splitlines()
             if line.startswith("{\"key\": \"k") or line.startswith('{"key":"k')]
    assert lines  # the journal holds keys, each made stale below
    journal.write_text("".join(json.dumps({**item, "at": item["at"] - 700}) + "\n"
                               for item in lines))
    assert len(Once(size=4, keep=600, journal=journal)) == 0  # all older than keep


def test_an_unwritable_journal_keeps_the_key_in_memory(tmp_path: Path) -> None:
    once = Once(journal=tmp_path / "missing-folder" / "keys.jsonl")
    assert once.run(request("a"), lambda: Reply(id=1, result=1)).result == 1
    assert once.run(request("a", 2), lambda: Reply(id=2, result=2)).result == 1
