"""Every error kind says what a program may do about it, and the docs list each code."""

from __future__ import annotations

import re
from pathlib import Path

import mcp_server.tools
import scorch.wire.envelope
from scorch.errors import CODES, Booting, ScorchError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def every_kind() -> list[type[ScorchError]]:
    """ScorchError and every subclass of it scorch defines (those the wire and MCP add too)."""
    assert scorch.wire.envelope.BadRequest and mcp_server.tools.Failed  # imported: defined
    kinds, todo = [], [ScorchError]
    while todo:
        kind = todo.pop()
        kinds.append(kind)
        todo.extend(kind.__subclasses__())
    return kinds


def documented_codes() -> list[str]:
    """The codes docs/errors.md's table lists, in its order."""
    return re.findall(r"^\| `([A-Z_]+)` \|", DOCS.read_text(), flags=re.MULTILINE)


def test_every_error_kind_has_a_code_of_the_closed_set_and_says_whether_to_retry() -> None:
    kinds = every_kind()
    assert len(kinds) > 40
    for kind in kinds:
        assert kind.code in CODES, kind
        assert isinstance(kind.retryable, bool), kind
        assert kind.argument is None, kind  # an instance names its argument, not a class


def test_every_kind_made_directly_of_scorch_error_chooses_its_code() -> None:
    """A new top-level kind must say what it is, not fall back on FAILED unawares."""
    for kind in ScorchError.__subclasses__():
        assert "code" in vars(kind), kind


def test_every_code_is_documented_and_the_docs_list_no_other() -> None:
    listed = documented_codes()
    assert sorted(listed) == sorted(CODES)
    assert len(set(listed)) == len(listed)


def test_an_error_tells_a_program_its_code_retry_and_argument_and_people_its_text() -> None:
    err = Booting("room 'a' is BOOTING")
    err.argument = "instance"
    assert err.info() == {"code": "BOOTING", "retryable": True, "argument": "instance",
                          "message": "room 'a' is BOOTING"}
