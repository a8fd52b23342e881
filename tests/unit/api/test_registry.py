"""The one ordered registry of operations, their declared journaling, and the one way to run one.

Issue 39: operations registered as a side effect of import (a lock, a reordering step,
a generated command table), the journal switched on operation names, and the live
view ran operations around the journal and the history.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from scorch.api import journaled, operation, ops
from scorch.api.operation import Action, Operation
from scorch.api.ops import COMMANDS, OPERATIONS, REGISTRY, of_command
from scorch.app.undo import Scope
from scorch.cli.main import OWN_COMMANDS

ROOT = Path(__file__).resolve().parents[3]


def loaded_after(argv: list[str]) -> list[str]:
    """The modules of ``scorch.api.ops`` a fresh interpreter holds once it parsed ``argv``."""
    code = ("import json, sys; from scorch.cli.main import build_parser; "
            f"build_parser({argv!r}).parse_args({argv!r}); "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('scorch.api.ops.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    return list(json.loads(out.stdout))


def test_the_registry_lists_every_module_and_operation_once() -> None:
    prefix = f"{ops.__name__}."
    modules = {m.name.removeprefix(prefix) for m in pkgutil.walk_packages(
        ops.__path__, prefix=prefix, onerror=print) if not m.ispkg}
    listed = [module for module, _ in REGISTRY]
    assert sorted(listed) == sorted(modules) and len(set(listed)) == len(listed)
    names = [name for _, names in REGISTRY for name in names]
    assert list(OPERATIONS) == names and len(set(names)) == len(names)
    assert not hasattr(operation, "OPERATIONS")  # the decorator registers nothing


def test_every_command_and_alias_finds_its_operation_by_the_registry() -> None:
    words = {word: op for op in OPERATIONS.values()
             for word in ([op.command] if op.command else []) + list(op.cli.aliases)}
    assert not set(words) & OWN_COMMANDS
    for word, op in words.items():
        assert of_command(word) is op, word
    assert {word for word in words if word not in OPERATIONS} == set(COMMANDS)
    assert of_command("stauts") is None


def test_a_command_imports_only_its_own_module_and_scorch_run_none() -> None:
    assert loaded_after(["status", "--json"]) == ["scorch.api.ops.rooms"]
    assert loaded_after(["boot", "lobby"]) == ["scorch.api.ops.rooms"]
    assert loaded_after(["exec", "lobby", "1"]) == ["scorch.api.ops.code"]
    assert loaded_after(["run"]) == []
    assert loaded_after(["--verbose", "doctor"]) == []  # scorch's own: no operation either


def switched(orch: Any, name: str, args: Any) -> Scope | None:
    """What the journal kept before operations declared it: a switch on their names."""
    if getattr(args, "dry_run", False):
        return None
    action = getattr(args, "action", None)
    if name in ("play", "set", "release", "pattern", "sweep"):
        if name == "play" and args.node is None:
            return None
        if name == "pattern" and action not in ("define", "source", "set", "play", "stop",
                                                "fade", "mute", "unmute", "solo"):
            return None
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)), patterns=name == "pattern")
    if name == "stop":
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)), patterns=True)
    if name == "buffer" and action in ("load", "free"):
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)))
    if name == "scene" and action in ("recall", "morph"):
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)))
    if name == "gain" and args.db is not None:
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)))
    if name == "tempo" and args.bpm is not None:
        return Scope(tempo=True)
    if name == "midi" and action in ("map", "unmap"):
        return Scope(routes=True)
    if (name == "session" and action == "load") or (name == "undo" and action == "back"):
        return Scope(rooms=tuple(orch.rooms.names()), tempo=True, routes=True, patterns=True)
    return None


class Rooms:
    """The rooms of a fake orchestra: two, ``*`` names both."""

    def names(self) -> list[str]:
        return ["a", "b"]

    def resolve(self, selector: str) -> list[str]:
        return self.names() if selector == "*" else [selector]


class Orch:
    rooms = Rooms()


def calls() -> list[tuple[Operation[Any, Any], Any]]:
    """Every operation and action, with and without each argument the old switch read."""
    made = []
    for op in OPERATIONS.values():
        for action, model in list(op.actions.items()) or [(None, op.args)]:
            for room in ("a", "*"):
                for given in (None, 1):
                    for dry in (False, True):
                        values = {"instance": room, "node": given and "pad", "bpm": given,
                                  "db": given, "dry_run": dry, "action": action}
                        made.append((op, model.model_construct(**{
                            key: value for key, value in values.items()
                            if key in model.model_fields})))
    return made


@pytest.mark.parametrize(("op", "args"), calls(),
                         ids=lambda x: x.name if isinstance(x, Operation) else "")
def test_what_operations_declare_is_what_the_old_switch_journaled(
        op: Operation[Any, Any], args: Any) -> None:
    assert journaled.scope_of(Orch(), op, args) == switched(Orch(), op.name, args)  # type: ignore[arg-type]


class Wrong(Action):
    """An action whose journal names an argument it lacks."""

    journal = operation.Changes(rooms=None, given="nodes")
    action: Literal["wrong"] = "wrong"


class Other(Action):
    """Another action."""

    action: Literal["other"]


Both = Annotated[Wrong | Other, Field(discriminator="action")]


class NoRooms(operation.Args):
    """Arguments that name no room."""


def both(orch: Any, args: Both) -> operation.Result:
    """Nothing."""
    return operation.Result()


def unnamed(orch: Any, args: NoRooms) -> operation.Result:
    """Nothing."""
    return operation.Result()


def test_a_declaration_naming_a_missing_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="'nodes' is not an argument"):
        operation.operation()(both)
    with pytest.raises(ValueError, match="'nodes' is not an argument"):
        operation.operation(access=operation.SET, spread=operation.Spread(rooms=None),
                            journal=operation.Changes(rooms=None, given="nodes"))(unnamed)
    with pytest.raises(ValueError, match="no argument names them"):
        operation.operation(access=operation.SET, journal=operation.ROOMS_NAMED,
                            spread=operation.Spread(rooms=None))(unnamed)
    with pytest.raises(ValueError, match="its journal is its actions'"):
        operation.operation(journal=operation.ROOMS_NAMED)(both)


def test_no_code_runs_an_operation_but_the_journal() -> None:
    """``op.run(orch, args)`` only in scorch/api/journaled.py: nothing skips the journal."""
    found = []
    for folder in ("scorch", "mcp_server", "actors", "midi"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "scorch" / "api" / "journaled.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "run" and node.args
                        and ast.unparse(node.args[0]).split(".")[-1] in ("orch", "orchestra")):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
