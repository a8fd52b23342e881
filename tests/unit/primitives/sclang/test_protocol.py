"""sclang's record protocol and the session, on bytes as sclang writes them (no process).

Real sclang runs are in tests/integration/rooms/test_execute_truth.py; here the stream is built
by hand, split at every byte, and fed text that imitates records.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scorch.primitives.sclang import protocol
from scorch.primitives.sclang.protocol import Record, RecordStream, sc_string
from scorch.primitives.sclang.result import KEEP_POSTED, Transcript, parse_error, source_context
from scorch.primitives.sclang.session import SclangSession
from scorch.primitives.system.console import Console
from tests.support.sclang_records import record

SYNTAX_CODE = "(\nvar x = 1;\nx.foo(3\n)"
#: What compile() posts for SYNTAX_CODE (sclang 3.13, copied from a run).
SYNTAX_OUTPUT = """\
ERROR: syntax error, unexpected end of file, expecting ')'
  in interpreted text
  line 4 char 2:

  ) 
    
-----------------------------------
ERROR: Command line parse failed
"""




def events(stream: RecordStream, data: bytes, step: int = 0) -> list[protocol.Event]:
    """Feed ``data`` whole, or ``step`` bytes at a time; join adjacent text."""
    out: list[protocol.Event] = []
    chunks = [data] if not step else [data[i:i + step] for i in range(0, len(data), step)]
    for chunk in chunks:
        for event in stream.feed(chunk):
            if isinstance(event, bytes) and out and isinstance(out[-1], bytes):
                out[-1] += event
            else:
                out.append(event)
    return out


@pytest.mark.parametrize("step", [0, 1, 3, 7])
def test_records_are_cut_out_of_text_however_the_bytes_arrive(step: int) -> None:
    data = (b"posted before" + record("abc", "value", "two\nlines\n") + b"after\n"
            + record("abc", "end", "ok"))
    got = events(RecordStream(lambda rid: rid == "abc"), data, step)
    assert got == [b"posted before", Record("abc", "value", b"two\nlines\n"), b"after\n",
                   Record("abc", "end", b"ok")]


def test_a_record_for_nobody_waiting_is_text_and_swallows_nothing() -> None:
    forged = record("feedface", "value", "x" * 10) + b"more text\n"
    got = events(RecordStream(lambda rid: rid == "abc"), forged + record("abc", "end", "ok"))
    assert got == [forged, Record("abc", "end", b"ok")]


def test_a_header_claiming_a_huge_payload_is_text() -> None:
    claim = b"@@scorch:abc:value:999999999@@tiny\n"
    got = events(RecordStream(lambda rid: True), claim + record("abc", "end", "ok"))
    assert got == [claim, Record("abc", "end", b"ok")]


def test_a_partial_prefix_waits_for_the_rest_and_text_ending_like_one_is_kept() -> None:
    stream = RecordStream(lambda rid: True)
    assert stream.feed(b"text @@sco") == [b"text "]
    assert stream.feed(b"rch:ab:end:2@@ok\n") == [Record("ab", "end", b"ok")]
    assert stream.feed(b"@@scorch-not-a-record\n") == [b"@@scorch-not-a-record\n"]


@given(st.binary(max_size=300))
def test_any_bytes_between_records_come_back_unchanged(noise: bytes) -> None:
    stream = RecordStream(lambda rid: rid == "abc")
    got = events(stream, noise + record("abc", "end", "ok"), step=5)
    assert got[-1] == Record("abc", "end", b"ok")
    assert b"".join(e for e in got if isinstance(e, bytes)) == noise


@given(st.text(max_size=200).filter(lambda s: "\x00" not in s))
@example(' ++ 27.asAscii ++ "\x1b')
def test_a_string_literal_holds_any_code_without_a_raw_chunk_delimiter(code: str) -> None:
    literal = sc_string(code)
    assert "\x0c" not in literal and "\x1b" not in literal
    # What sclang's lexer makes of it: unescape \\ \" \f and join the 27.asAscii pieces.
    # (the joiner may be inside a literal too: the code may contain its text)
    pieces = re.findall(r'"((?:[^"\\]|\\.)*)"', literal, flags=re.S)
    assert " ++ 27.asAscii ++ ".join(f'"{p}"' for p in pieces) == literal
    decoded = [re.sub(r'\\(.)', lambda m: {"f": "\x0c"}.get(m.group(1), m.group(1)), p,
                      flags=re.S) for p in pieces]
    assert "\x1b".join(decoded) == code


def test_a_nul_byte_cannot_be_sent() -> None:
    with pytest.raises(ValueError, match="NUL"):
        sc_string("1\x002")


def test_requests_are_two_silent_chunks_naming_the_request() -> None:
    data = protocol.evaluate("abc123", "1 +\n2")
    first, second, rest = data.split(b"\x1b")
    assert first == b'Scorch.eval("abc123", "1 +\n2", false)'
    assert second == b'Scorch.done("abc123")' and rest == b""
    assert b"true" in protocol.evaluate("abc123", "1", raw=True)
    assert protocol.check("abc123", "1").startswith(b'Scorch.check("abc123", "1")')


def test_a_parse_error_gives_line_char_message_and_source_context() -> None:
    error = parse_error(SYNTAX_OUTPUT, SYNTAX_CODE)
    assert error.kind == "parse"
    assert (error.line, error.char) == (4, 2)
    assert error.message == "syntax error, unexpected end of file, expecting ')'"
    assert "3 | x.foo(3" in error.context and "4 | )" in error.context
    assert error.context.splitlines()[-1] == "  |  ^"


@pytest.mark.parametrize(
    ("line", "char", "caret_line"),
    [(1, 1, "  | ^"), (2, 3, "  |   ^"), (9, 1, "  | ^")],
)
def test_source_context_clamps_and_places_caret(line: int, char: int, caret_line: str) -> None:
    context = source_context("ab\ncde", line, char)
    assert context.splitlines()[-1] == caret_line


def test_the_caret_counts_sclangs_bytes_as_characters() -> None:
    # sclang counts UTF-8 bytes: char 6 of "é = é +" is the second é's first byte + 1.
    assert source_context("é = é +", 1, 6).splitlines()[-1] == "  |     ^"


def test_a_runtime_error_keeps_fields_apart_and_the_users_frames_first() -> None:
    transcript = Transcript("nil.bar")
    for name, payload in [
        ("error-class", "DoesNotUnderstandError"),
        ("error-string", "ERROR: Message 'bar' not understood.\nPerhaps you misspelled 'bat'?"),
        ("error-receiver", "an Array\nwith\tlines"), ("error-receiver-class", "Array"),
        ("error-selector", "bar"),
        ("error-frame", "library\tObject:doesNotUnderstand"),
        ("error-frame", "user\ta FunctionDef\t{ |x| x.bar }"),
        ("error-protected", "library\tFunction:protect"),
        ("end", "error"),
    ]:
        transcript.record(name, payload.encode())
    result = transcript.result(0.1, "lobby", 3)
    error = result.error
    assert not result.ok and error is not None and error.kind == "runtime"
    assert error.message == "Message 'bar' not understood.\nPerhaps you misspelled 'bat'?"
    assert error.receiver == "an Array with lines"
    assert error.call_stack == ("{ |x| x.bar }",)
    assert error.library_frames == ("Object:doesNotUnderstand",)
    assert error.protected_call_stack == ("Function:protect",)
    assert error.error_class == "DoesNotUnderstandError" and error.selector == "bar"
    assert error.describe().index("in your code") < error.describe().index("class library")


def test_posted_text_keeps_a_partial_line_and_bounds_a_flood() -> None:
    transcript = Transcript("x")
    transcript.post(b"one\ntwo")
    assert transcript.posted_lines() == ["one", "two"]
    flood = Transcript("x")
    flood.post(b"y" * (3 * KEEP_POSTED))
    lines = flood.posted_lines()
    assert f"... ({KEEP_POSTED} bytes not kept) ..." in lines
    assert sum(len(line) for line in lines) < 3 * KEEP_POSTED


class Fake:
    """A session whose sclang is this test: what it writes, and the console."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.console = Console()
        self.requests: list[str] = []
        self.session = SclangSession(self.written.append, self.console, "lobby",
                                     on_server_request=self.requests.append)

    def wire_id(self, index: int = -1) -> str:
        found = re.search(rb'Scorch\.(?:eval|check)\("([0-9a-f]+)"', self.written[index])
        assert found is not None
        return found.group(1).decode()


def test_a_session_resolves_a_request_at_its_closing_record() -> None:
    fake = Fake()
    number, future = fake.session.submit("1+1")
    rid = fake.wire_id()
    fake.session.feed(record(rid, "compile") + record(rid, "start") + b"hi\n"
                      + record(rid, "value", "2") + record(rid, "end", "ok"))
    assert not future.done()
    fake.session.feed(b"late\n" + record(rid, "done"))
    result = future.result(timeout=1)
    assert result.ok and result.value == "2" and result.posted == ("hi",)
    assert result.request == number
    assert result.late is not None and "posted 1 line" in result.late
    notes = [(line.text, line.note) for line in fake.console.tail(5)]
    assert ("hi", "") in notes and ("late", f"after #{number}") in notes


def test_a_request_cut_short_is_aborted_with_what_it_posted() -> None:
    fake = Fake()
    _, future = fake.session.submit("^1")
    rid = fake.wire_id()
    fake.session.feed(record(rid, "compile") + record(rid, "start") + b"partial"
                      + record(rid, "done"))
    result = future.result(timeout=1)
    assert not result.ok and result.error is not None and result.error.kind == "aborted"
    assert result.posted == ("partial",)


def test_server_requests_and_errors_in_things_left_running_are_told() -> None:
    fake = Fake()
    token = fake.session.token
    fake.session.feed(record(token, "server-request", "reboot lobby"))
    fake.session.feed(record(token, "async-class", "DoesNotUnderstandError")
                      + record(token, "async-string", "ERROR: Message 'foo' not understood.")
                      + record(token, "async-end")
                      + b"ERROR: Message 'foo' not understood.\n^^ ERROR: Message 'foo'\n"
                      + b"RECEIVER: nil\nordinary\n")
    assert fake.requests == ["reboot lobby"]
    assert fake.session.async_errors[-1]["class"] == "DoesNotUnderstandError"
    notes = [line.note for line in fake.console.tail(4)]
    assert notes == ["error", "error", "error", ""]


def test_what_code_run_later_posts_and_throws_is_its_own_not_the_request_open_then() -> None:
    fake = Fake()
    token = fake.session.token
    later, scheduled = fake.session.submit("nil.foo", at=2e9)
    rid = fake.wire_id()
    fake.session.feed(record(rid, "compile") + record(rid, "start")
                      + record(rid, "value", "scheduled: runs at 2000000000")
                      + record(rid, "end", "ok") + record(rid, "done"))
    assert scheduled.result(timeout=1).ok
    now, future = fake.session.submit("fork { 1.wait }; 2")
    other = fake.wire_id()
    fake.session.feed(record(other, "compile") + record(other, "start")
                      + record(other, "value", "2") + record(other, "end", "ok"))
    # Request `now` has returned, not closed; the code run later begins and fails.
    fake.session.feed(record(token, "running", rid) + b"from later\n"
                      + record(token, "async-string", "ERROR: Message 'foo' not understood.")
                      + record(token, "async-end"))
    fake.session.feed(record(other, "done"))
    result = future.result(timeout=1)
    assert result.request == now and result.late is None  # nothing of `later` is its
    assert fake.session.async_errors[-1]["after"] == str(later)
    assert ("from later", f"after #{later}") in [(line.text, line.note)
                                                 for line in fake.console.tail(5)]


def test_check_only_compiles_without_running() -> None:
    fake = Fake()
    _, future = fake.session.submit("1 +", check_only=True)
    rid = fake.wire_id()
    assert fake.written[-1].startswith(b"Scorch.check(")
    fake.session.feed(record(rid, "compile") + SYNTAX_OUTPUT.encode()
                      + record(rid, "end", "parse") + record(rid, "done"))
    result = future.result(timeout=1)
    assert result.error is not None and result.error.kind == "parse"
    assert result.error.line == 4


def test_the_compilers_words_are_posted_where_sclang_prints_them_and_are_warnings() -> None:
    fake = Fake()
    _, future = fake.session.submit("1 /* x")
    rid = fake.wire_id()
    fake.session.feed(record(rid, "prepare") + b"from the preprocessor\n"
                      + record(rid, "compile")
                      + b"Open ended comment started on line 1 of interpreted text\n"
                      + record(rid, "start") + b"from the code\n" + record(rid, "value", "1")
                      + record(rid, "end", "ok") + record(rid, "done"))
    result = future.result(timeout=1)
    assert result.posted == ("from the preprocessor",
                             "Open ended comment started on line 1 of interpreted text",
                             "from the code")
    assert result.warnings == ("Open ended comment started on line 1 of interpreted text",)


def test_a_parse_errors_report_is_the_error_and_what_came_before_it_is_posted() -> None:
    fake = Fake()
    _, future = fake.session.submit(SYNTAX_CODE)
    rid = fake.wire_id()
    fake.session.feed(record(rid, "compile") + b"WARNING: first\n" + SYNTAX_OUTPUT.encode()
                      + record(rid, "end", "parse") + record(rid, "done"))
    result = future.result(timeout=1)
    assert result.error is not None and (result.error.line, result.error.char) == (4, 2)
    assert result.posted == ("WARNING: first",) and result.warnings == ("WARNING: first",)


def test_a_request_whose_closing_record_never_comes_is_answered_with_its_value() -> None:
    fake = Fake()
    _, future = fake.session.submit("fork { loop { } }; 5", timeout=0.5)
    rid = fake.wire_id()
    fake.session.feed(record(rid, "compile") + record(rid, "start")
                      + record(rid, "value", "5") + record(rid, "end", "ok"))
    result = future.result(timeout=2)
    assert 0.3 < result.elapsed < 0.5  # answered before its deadline, not at it
    assert result.ok and result.value == "5"
    assert result.late is not None and "stayed busy" in result.late
    assert fake.session.is_pending(1)  # until its closing record, if ever
    fake.session.feed(record(rid, "done"))  # sclang got free after all: nothing breaks
    assert not fake.session.is_pending(1) and future.result().value == "5"
    assert ("-> 5", "") in [(line.text, line.note) for line in fake.console.tail(3)]


@pytest.mark.parametrize(("payload", "expected"), [
    ("0 0", (0, 0)), ("1 3", (1, 3)), ("2", (2, 0)), ("", (0, 0)), ("x y", (0, 0)),
    ("0 -1", (0, 0)),
])
def test_an_attached_record_gives_the_client_id_and_the_logins_extra_asks(
        payload: str, expected: tuple[int, int]) -> None:
    assert protocol.parse_attached(payload) == expected
