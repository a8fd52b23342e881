"""Framing and parsing of sclang's output, on text sclang 3.13 really printed."""

from __future__ import annotations

import pytest

from scorch.errors import CodeRejected
from scorch.primitives.sclang_protocol import Framer, parse_output, source_context
from scorch.primitives.sclang_session import SclangSession

SYNTAX_CODE = "(\nvar x = 1;\nx.foo(3\n)"
SYNTAX_OUTPUT = """\
ERROR: syntax error, unexpected end of file, expecting ')'
  in interpreted text
  line 4 char 2:

  ) 
    
-----------------------------------
ERROR: Command line parse failed
-> nil""".split("\n")

RUNTIME_OUTPUT = """\
ERROR: Message 'bar' not understood.
RECEIVER:
   nil
ARGS:
CALL STACK:
\tDoesNotUnderstandError:reportError
\t\targ this = <instance of DoesNotUnderstandError>
\tNil:handleError
\t\targ this = nil
\t\targ error = <instance of DoesNotUnderstandError>
\tThread:handleError
\t\targ this = <instance of Thread>
\tObject:throw
\t\targ this = <instance of DoesNotUnderstandError>
\tObject:doesNotUnderstand
\t\targ this = nil
\ta FunctionDef
\t\tsourceCode = "<an open Function>"
\tInterpreter:interpretPrintCmdLine
\t\targ this = <instance of Interpreter>
\tProcess:interpretPrintCmdLine
\t\targ this = <instance of Main>
^^ ERROR: Message 'bar' not understood.
RECEIVER: nil
""".split("\n")


def test_frame_keeps_the_codes_newlines_and_ends_with_print_delimiter() -> None:
    framer = Framer("abcd")
    data = framer.frame(7, "1 +\n2")
    begin, rest = data.split(b"\x1b", 1)
    assert b"@@scorch-abcd-begin-7@@" in begin
    code, end = rest.split(b"\x0c", 1)
    assert code == b"1 +\n2"
    assert b"@@scorch-abcd-end-7@@" in end and end.endswith(b"\x1b")


@pytest.mark.parametrize("bad", ["a\x0cb", "x\x1b"])
def test_code_holding_a_delimiter_is_rejected(bad: str) -> None:
    with pytest.raises(CodeRejected, match="delimiters"):
        Framer().frame(1, bad)


def test_marker_finds_kind_id_and_the_partial_line_before_it() -> None:
    framer = Framer("t0k3")
    assert framer.marker("@@scorch-t0k3-begin-12@@") == ("begin", 12, "")
    assert framer.marker("posted@@scorch-t0k3-end-3@@") == ("end", 3, "posted")
    assert framer.marker("@@scorch-other-end-3@@") is None
    assert framer.marker("-> 3") is None


def test_value_and_posts_are_separated() -> None:
    result = parse_output(["hello", "world", "-> 42"], "code")
    assert result.ok and result.value == "42"
    assert result.posted == ("hello", "world")


def test_multi_line_value_is_kept_whole() -> None:
    result = parse_output(["-> [ 1,", "  2 ]"], "code")
    assert result.value == "[ 1,\n  2 ]"


def test_syntax_error_gives_line_char_message_and_source_context() -> None:
    result = parse_output(SYNTAX_OUTPUT, SYNTAX_CODE)
    assert not result.ok and result.error is not None
    error = result.error
    assert error.kind == "parse"
    assert (error.line, error.char) == (4, 2)
    assert error.message == "syntax error, unexpected end of file, expecting ')'"
    assert "3 | x.foo(3" in error.context and "4 | )" in error.context
    assert error.context.splitlines()[-1] == "  |  ^"
    assert result.value is None


def test_runtime_error_gives_message_receiver_and_user_frames() -> None:
    result = parse_output(["posted first", *RUNTIME_OUTPUT], "nil.bar")
    assert not result.ok and result.error is not None
    error = result.error
    assert error.kind == "runtime"
    assert error.message == "Message 'bar' not understood."
    assert error.receiver == "nil"
    assert error.call_stack == ("a FunctionDef",)
    assert result.posted == ("posted first",)
    assert "receiver: nil" in error.describe()


def test_warnings_are_collected_from_posts() -> None:
    result = parse_output(["WARNING: careful", "-> 1"], "1")
    assert result.ok and result.warnings == ("WARNING: careful",)


@pytest.mark.parametrize(
    ("line", "char", "caret_line"),
    [(1, 1, "  | ^"), (2, 3, "  |   ^"), (9, 1, "  | ^")],
)
def test_source_context_clamps_and_places_caret(line: int, char: int, caret_line: str) -> None:
    context = source_context("ab\ncde", line, char)
    assert context.splitlines()[-1] == caret_line


def test_session_matches_output_between_markers_to_its_request() -> None:
    written: list[bytes] = []
    session = SclangSession(written.append, Framer("tok"), instance="a")
    request_id, future = session.submit("1+1")
    assert session.busy()
    for line in ["noise before", f"@@scorch-tok-begin-{request_id}@@", "posted", "-> 2",
                 f"@@scorch-tok-end-{request_id}@@", "noise after"]:
        session.feed(line)
    result = future.result(timeout=1)
    assert result.ok and result.value == "2" and result.posted == ("posted",)
    assert result.instance == "a" and result.elapsed >= 0
    assert not session.busy()


def test_session_fail_all_fails_requests_in_flight() -> None:
    session = SclangSession(lambda data: None, Framer("tok"))
    _, future = session.submit("inf.do {}")
    session.fail_all(RuntimeError("sclang restarted"))
    with pytest.raises(RuntimeError, match="restarted"):
        future.result(timeout=1)


def test_session_pings_update_last_pong_only_for_its_token() -> None:
    session = SclangSession(lambda data: None, Framer("tok"))
    before = session.last_pong
    session.feed("@@scorch-other-ping@@")
    assert session.last_pong == before
    session.feed("@@scorch-tok-ping@@")
    assert session.last_pong > before


def test_a_flood_of_posts_keeps_both_ends_and_counts_the_middle() -> None:
    from scorch.primitives.sclang_session import KEEP_LINES

    session = SclangSession(lambda data: None, Framer("tok"))
    request_id, future = session.submit("1e6.do { |i| i.postln }")
    session.feed(f"@@scorch-tok-begin-{request_id}@@")
    total = 3 * KEEP_LINES
    for i in range(total):
        session.feed(str(i))
    session.feed("-> done")
    session.feed(f"@@scorch-tok-end-{request_id}@@")
    result = future.result(timeout=1)
    assert result.value == "done"
    assert result.posted[0] == "0" and result.posted[-1] == str(total - 1)
    assert f"... ({total + 1 - 2 * KEEP_LINES} lines not kept) ..." in result.posted
    assert len(result.posted) == 2 * KEEP_LINES


def test_protocol_lines_are_kept_out_of_the_console_but_text_around_them_stays() -> None:
    session = SclangSession(lambda data: None, Framer("tok"))
    request_id, _ = session.submit("1")
    assert session.feed("@@scorch-tok-ping@@") is None
    assert session.feed("partial@@scorch-tok-ping@@") == "partial"
    assert session.feed(f"@@scorch-tok-begin-{request_id}@@") is None
    assert session.feed("posted by the code") == "posted by the code"
    assert session.feed("-> 1") == "-> 1"
    assert session.feed(f"tail@@scorch-tok-end-{request_id}@@") == "tail"
    attached = session.expect("@@scorch-tok-attached@@")
    assert session.feed("@@scorch-tok-attached@@") is None and attached.is_set()
