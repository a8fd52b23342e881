"""The one API schema: every operation complete, and the docs' worked example true."""

from __future__ import annotations

import ast
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api import fanout, ops
from scorch.api.coordinator import Coordinator
from scorch.api.local import LocalService
from scorch.api.operation import PATTERNS, Access, Action, Args, Result
from scorch.api.ops import OPERATIONS, lookup
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.errors import InvalidRequest, NotRunning
from tests.unit.api.conftest import Served

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "architecture.md"


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_operation_has_a_doc_typed_models_and_described_arguments(name: str) -> None:
    op = OPERATIONS[name]
    assert len(op.doc) > 40 and op.summary.endswith(".")
    assert issubclass(op.result, Result)
    models = list(op.actions.values()) or [op.args]
    for model in models:
        assert issubclass(model, Args) and model.model_config.get("extra") == "forbid"
    for field, info in op.fields.items():
        assert info.description or info.annotation is not None, field
    for field in op.positional:
        assert field in op.fields


@pytest.mark.parametrize("name", sorted(n for n, op in OPERATIONS.items() if op.actions))
def test_an_operation_with_actions_is_as_dangerous_as_its_most_dangerous_action(
        name: str) -> None:
    op = OPERATIONS[name]
    accesses = [model.access for model in op.actions.values()]
    assert op.access == Access.most(accesses)
    assert op.access.destructive == any(a.destructive for a in accesses)
    assert op.access.read_only == all(a.read_only for a in accesses)
    for action, model in op.actions.items():
        assert issubclass(model, Action) and model.__doc__, action
        assert model.model_fields["action"].annotation.__args__ == (action,)


def test_deleting_is_destructive_and_listing_reads() -> None:
    for name in ("session", "scene", "snippet"):
        assert lookup(name).actions["delete"].access.destructive, name
        assert lookup(name).actions["list"].access.read_only, name
        assert lookup(name).access.destructive, name
    assert lookup("session").actions["diff"].access.read_only
    assert lookup("buffer").actions["free"].access.destructive


def test_each_action_takes_its_own_arguments_and_says_what_it_lacks() -> None:
    op = lookup("record")
    assert op.parse({}).action == "list"  # the default action
    assert op.parse({"action": "start", "instance": "lobby"}).channels == 2
    with pytest.raises(InvalidRequest, match=r"record action 'start'.*\n.*instance: this "
                       "argument is required"):
        op.parse({"action": "start"})
    with pytest.raises(InvalidRequest, match=r"(?s)record action 'list'.*channels: unknown "
                       "argument"):
        op.parse({"action": "list", "channels": 2})
    with pytest.raises(InvalidRequest, match="action: should be one of list, start, stop, "
                       "found 'explode'"):
        op.parse({"action": "explode"})
    with pytest.raises(InvalidRequest, match="action: this argument is required: one of"):
        lookup("midi").parse({})


#: Modules that run every operation and must know none by name.
GENERIC = ("scorch/api/fanout.py", "scorch/api/coordinator.py", "scorch/api/remote.py",
           "scorch/api/local.py", "mcp_server/tools.py", "scorch/cli/commands.py")


@pytest.mark.parametrize("path", GENERIC)
def test_no_operation_is_known_by_name_outside_its_definition(path: str) -> None:
    """No table of operation names, no ``name == "ping"``: the declaration says it all."""
    names = set(OPERATIONS)
    tree = ast.parse((ROOT / path).read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            constants = [n for n in ast.walk(node) if isinstance(n, ast.Constant)]
            found += [f"line {n.lineno}: {n.value!r} compared" for n in constants
                      if n.value in names]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node in tree.body:
            constants = [n for n in ast.walk(node) if isinstance(n, ast.Constant)]
            found += [f"line {n.lineno}: {n.value!r} in a table" for n in constants
                      if n.value in names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "call":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value in names:
                found.append(f"line {first.lineno}: calls {first.value!r}")
    assert not found, found


def test_arguments_are_strict_and_errors_name_the_argument() -> None:
    op = lookup("execute")
    with pytest.raises(InvalidRequest, match=r"(?s)execute: invalid arguments.*timeout_s"):
        op.parse({"instance": "a", "code": "1", "timeout_s": "5"})
    with pytest.raises(InvalidRequest, match="unknown argument"):
        op.parse({"instance": "a", "code": "1", "tiemout_s": 5})
    with pytest.raises(InvalidRequest, match="NUL"):
        op.parse({"instance": "a", "code": "1\x00;"})
    assert op.parse({"instance": "a", "code": "1", "timeout_s": 5}).timeout_s == 5.0


def worked_example() -> str:
    """The Python code block of the docs' worked example."""
    text = DOCS.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "docs/architecture.md lost its worked example"
    return "\n".join(line[3:] if line.startswith("   ") else line
                     for line in blocks[0].splitlines())


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The docs' worked example as a module of ``scorch/api/ops`` with its line in the
    registry, as the docs say, taken out afterwards."""
    module = types.ModuleType(f"{ops.__name__}.synths")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(worked_example(), str(DOCS), "exec"), vars(module))
    monkeypatch.setattr(ops, "REGISTRY", (*ops.REGISTRY, ("synths", ("synths",))))
    monkeypatch.setitem(OPERATIONS, "synths", lookup("synths"))  # as if listed from the start
    yield "synths"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_docs_worked_example_becomes_one_tool_with_a_schema_per_action(
        example: str, tmp_path: Path) -> None:
    op = lookup(example)
    assert op.command == "synths" and op.positional == ("action", "rooms")
    assert list(op.actions) == ["count", "silence"] and op.access.destructive
    orch = Orchestra(parse_config("[instances.lobby]\n[instances.attic]\n",
                                  tmp_path / "config.toml"))
    async with Client(build_server(LocalService(orch))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, each in tools.items():  # Claude's API refuses a tool with any of these
            assert each.input_schema["type"] == "object", name
            assert not {"oneOf", "anyOf", "allOf", "if", "not"} & set(each.input_schema), name
        tool = tools[example]
        schema = tool.input_schema
        assert schema["properties"]["action"] == {
            "enum": ["count", "silence"], "default": "count",
            "description": "See $defs"}
        assert schema["additionalProperties"] is False
        count, silence = schema["$defs"]["count"], schema["$defs"]["silence"]
        assert "required" not in count and count["description"].endswith("[read-only]")
        assert silence["required"] == ["rooms"]
        assert silence["description"].endswith("[destructive]")
        assert tool.annotations is not None
        assert tool.annotations.destructive_hint and not tool.annotations.read_only_hint
        assert tool.output_schema is not None
        result = await client.call_tool(example, {"rooms": "*"})
        refused = await client.call_tool(example, {"action": "silence"})
    assert not result.is_error
    assert result.structured_content == {"counts": {"lobby": None, "attic": None}}
    assert refused.is_error
    text = getattr(refused.content[0], "text", "")
    assert "synths action 'silence'" in text and "rooms: this argument is required" in text
    from scorch.cli.main import build_parser

    parsed = build_parser().parse_args(["synths", "count", "lobby", "--watch"])
    assert (parsed.action, parsed.rooms, parsed.watch) == ("count", "lobby", True)
    silence = op.parse({"action": "silence", "rooms": "lobby"})
    assert op.access_of(silence).destructive and op.access_of(op.parse({})).read_only
    assert op.journal_of(silence) == PATTERNS and op.journal_of(op.parse({})) is None


def test_watch_repeats_only_an_action_that_reads(
        example: str, config: Config, served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    from scorch.cli.main import main

    assert main(["synths", "silence", "x", "--watch", "--config", str(config.source)]) == 2
    assert "--watch repeats a read; synths silence is not read-only (destructive)" in \
        capsys.readouterr().err
    assert main(["synths", "count", "x", "--config", str(config.source), "--json"]) == 0
    assert '"x": null' in capsys.readouterr().out
    with pytest.raises(SystemExit):  # booting is no read: the alias has no --watch
        main(["boot", "x", "--watch"])


def test_the_docs_worked_example_goes_to_the_hosts_its_declaration_names(
        example: str, config: Config, served: Served) -> None:
    op = lookup(example)
    assert fanout.plan(op, op.parse({"rooms": "z"}), config).hosts == ("b",)
    assert fanout.plan(op, op.parse({"rooms": "g"}), config).rooms == {"a": ("x",),
                                                                       "b": ("y",)}
    coordinator = Coordinator(config)
    try:
        # Host a does not know room y: asked, it would refuse and fail the call.
        one = coordinator.call(example, {"rooms": "y"})
        assert one.model_dump() == {"counts": {"y": None}}
        every = coordinator.call(example, {})
        assert every.model_dump() == {"counts": {"x": None, "y": None, "z": None}}
        served.stop("b")
        with pytest.raises(NotRunning, match="synths: host b"):  # a is not asked for z
            coordinator.call(example, {"rooms": "z"})
    finally:
        coordinator.close()
