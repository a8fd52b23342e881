"""A request that sent scsynth messages is answered with what scsynth said about them.

The fence itself (``/sync``, then scsynth's console) runs against a real room in
tests/integration/rooms/test_server_errors.py; here the session's side: who is fenced,
from which console mark, and that the reader thread is never the one that waits.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import Future

from scorch.api.ops.code import ExecuteOutcome, ExecuteOutput
from scorch.primitives.sclang.result import ExecuteResult
from scorch.primitives.sclang.session import SclangSession
from scorch.primitives.system.console import Console
from tests.support.sclang_records import record

OK = (("compile", ""), ("start", ""), ("value", "1"), ("end", "ok"))


class Fenced:
    """A session whose fence is this test: the marks it was asked from, and its answer."""

    def __init__(self, answer: tuple[str, ...] = ()) -> None:
        self.written: list[bytes] = []
        self.console = Console()
        self.asked: list[tuple[int, str]] = []
        self.release = threading.Event()
        self.answer = answer
        self.session = SclangSession(self.written.append, self.console, "lobby",
                                     server_failures=self.fence)

    def fence(self, since: int, sent: tuple[str, ...]) -> tuple[str, ...]:
        self.asked.append((since, threading.current_thread().name))
        assert self.release.wait(5.0)
        return self.answer

    def run(self, *records: tuple[str, str]) -> Future[ExecuteResult]:
        _, future = self.session.submit("Synth(\\nosuchdef); 1")
        found = re.search(rb'Scorch\.eval\("([0-9a-f]+)"', self.written[-1])
        assert found is not None
        rid = found.group(1).decode()
        self.session.feed(b"".join(record(rid, name, payload) for name, payload in records)
                          + record(rid, "done"))
        return future


def test_code_that_sent_nothing_is_answered_at_once_without_a_fence() -> None:
    fenced = Fenced()
    future = fenced.run(*OK)
    assert future.result(timeout=0).server_errors == ()
    assert fenced.asked == []


def test_code_that_sent_messages_waits_for_the_fence_in_another_thread() -> None:
    fenced = Fenced(("FAILURE IN SERVER /s_new SynthDef not found",))
    fenced.console.append("scsynth", "before the request")
    mark = fenced.console.mark()
    future = fenced.run(("compile", ""), ("start", ""), ("value", "1"),
                        ("server-sent", "1"), ("end", "ok"))
    assert not future.done()  # feed returned: the reader thread did not wait
    fenced.release.set()
    result = future.result(timeout=5.0)
    assert result.ok and result.value == "1"
    assert result.server_errors == ("FAILURE IN SERVER /s_new SynthDef not found",)
    [(since, thread)] = fenced.asked
    assert since == mark and thread != threading.current_thread().name


def test_a_failing_request_carries_them_too() -> None:
    fenced = Fenced(("FAILURE IN SERVER /n_set Node 9 not found",))
    fenced.release.set()
    future = fenced.run(("compile", ""), ("start", ""), ("server-sent", "2"),
                        ("error-class", "DoesNotUnderstandError"),
                        ("error-string", "ERROR: Message 'foo' not understood."),
                        ("end", "error"))
    result = future.result(timeout=5.0)
    assert not result.ok and result.server_errors == ("FAILURE IN SERVER /n_set Node 9 not found",)


def test_a_fence_that_fails_still_answers() -> None:
    fenced = Fenced()

    def broken(since: int, sent: tuple[str, ...]) -> tuple[str, ...]:
        raise RuntimeError("scsynth went away")

    fenced.session._server_failures = broken
    future = fenced.run(("compile", ""), ("start", ""), ("value", "1"),
                        ("server-sent", "1"), ("end", "ok"))
    assert future.result(timeout=5.0).server_errors == ()


def test_the_text_and_the_outcome_carry_scsynths_words() -> None:
    result = ExecuteResult(ok=True, value="1", room="lobby",
                           server_errors=("*** ERROR: SynthDef nosuchdef not found",
                                          "FAILURE IN SERVER /s_new SynthDef not found"))
    outcome = ExecuteOutcome.of(result)
    assert outcome.server_errors == list(result.server_errors)
    text = ExecuteOutput(results=[outcome]).text()
    assert text.splitlines() == ["-> 1", "scsynth: *** ERROR: SynthDef nosuchdef not found",
                                 "scsynth: FAILURE IN SERVER /s_new SynthDef not found"]
