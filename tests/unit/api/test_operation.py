"""The one API schema: every operation complete, and the docs' worked example true."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.api.operation import Args, Result
from scorch.api.ops import OPERATIONS, lookup
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import InvalidRequest

DOCS = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_operation_has_a_doc_typed_models_and_described_arguments(name: str) -> None:
    op = OPERATIONS[name]
    assert len(op.doc) > 40 and op.summary.endswith(".")
    assert issubclass(op.args, Args) and issubclass(op.result, Result)
    assert op.args.model_config.get("extra") == "forbid"
    for field, info in op.args.model_fields.items():
        assert info.description or info.annotation is not None, field
    for field in op.positional:
        assert field in op.args.model_fields


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
def example() -> Iterator[str]:
    """Register the docs' worked example as the code says, and take it out afterwards."""
    from scorch.api.ops import instances

    namespace: dict[str, Any] = dict(vars(instances))
    exec(compile(worked_example(), str(DOCS), "exec"), namespace)
    try:
        yield "synth_counts"
    finally:
        OPERATIONS.pop("synth_counts", None)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_docs_worked_example_becomes_a_tool_and_a_command(
        example: str, tmp_path: Path) -> None:
    op = lookup(example)
    assert op.command == "synths" and op.positional == ("instance",)
    orch = Orchestra(parse_config("[instances.lobby]\n[instances.attic]\n",
                                  tmp_path / "config.toml"))
    async with Client(build_server(LocalService(orch))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "instance" in tools[example].input_schema["properties"]
        assert tools[example].output_schema is not None
        result = await client.call_tool(example, {"instance": "*"})
    assert not result.is_error
    assert result.structured_content == {"counts": {"lobby": None, "attic": None}}
    from scorch.cli.main import build_parser

    parsed = build_parser().parse_args(["synths", "lobby"])
    assert parsed.instance == "lobby"
