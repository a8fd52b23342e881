"""Actions that run code or write files say so, and the MCP annotations follow (issue 37)."""

from __future__ import annotations

from mcp_server.tools import tool_annotations
from scorch.api.operation import CHANGE, CODE, READ, WRITE_OVER, Access
from scorch.api.ops import OPERATIONS

#: Every action that evaluates sclang code a caller gave (or kept from one: history,
#: snippets, sessions, the journal's pattern sources), whatever tool it sits in.
RUNS_CODE = {("execute", None), ("history", "rerun"), ("snippet", "run"),
             ("pattern", "define"), ("pattern", "source"), ("pattern", "set"),
             ("render", None), ("session", "load"), ("undo", "undo"), ("undo", "redo"),
             ("undo", "back"), ("cue", "go")}
#: Every action that writes a file at a path or under a name the caller gives.
WRITES_FILES = {("notes", "export"), ("partner", "continue"), ("partner", "infill"),
                ("record", "start"), ("session", "save"), ("scene", "save"),
                ("snippet", "save"), ("undo", "checkpoint")}


def every_action() -> dict[tuple[str, str | None], Access]:
    found: dict[tuple[str, str | None], Access] = {}
    for op in OPERATIONS.values():
        if op.actions:
            found.update({(op.name, name): model.access for name, model in op.actions.items()})
        else:
            found[(op.name, None)] = op.access
    return found


def test_the_actions_that_run_code_are_exactly_those_that_evaluate_sclang() -> None:
    actions = every_action()
    assert {key for key, access in actions.items() if access.runs_code} == RUNS_CODE
    for key in RUNS_CODE:
        access = actions[key]
        assert access.destructive and not access.idempotent and not access.read_only, key


def test_the_actions_that_write_files_say_so() -> None:
    actions = every_action()
    assert {key for key, access in actions.items() if access.writes_files} == WRITES_FILES
    # those that may write over a file are destructive (export and partner take overwrite)
    for key in WRITES_FILES - {("record", "start")}:
        assert actions[key].destructive, key


def test_a_tool_with_an_action_that_runs_code_is_destructive_and_open_world() -> None:
    for op in OPERATIONS.values():
        hints = tool_annotations(op.access)
        runs = any(name == op.name for name, _ in RUNS_CODE)
        assert hints.open_world_hint is runs, op.name
        if runs:
            assert hints.destructive_hint is True and hints.read_only_hint is False, op.name


def test_the_most_dangerous_action_decides_and_the_word_says_what_it_does() -> None:
    assert Access.most([READ, CODE]).runs_code and Access.most([READ, CODE]).destructive
    assert Access.most([CHANGE, WRITE_OVER]).writes_files
    assert not Access.most([READ, CHANGE]).runs_code
    assert CODE.word == "destructive, runs code"
    assert WRITE_OVER.word == "destructive, writes files"
    assert READ.word == "read-only" and CHANGE.word == "change"
    hints = tool_annotations(CHANGE)
    assert hints.open_world_hint is False and hints.destructive_hint is False
