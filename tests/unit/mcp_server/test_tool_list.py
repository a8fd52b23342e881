"""What a model carries (issue 38): `tools/list` and the instructions through a real
`mcp.Client`, for all the tools and every profile, against their goals; and a call with a
wrong argument still refused by the full check, naming the argument."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_server.instructions import GUIDE, instructions
from mcp_server.schemas import size
from mcp_server.server import build_server, listed_for, server_for
from mcp_server.tools import choose
from scorch.api.local import LocalService
from scorch.api.ops import OPERATIONS
from scorch.config.installation import load_config
from scorch.config.tools import ALL, PROFILES
from scorch.errors import ConfigError

#: The goals, in characters of name + description + input schema per tool (the repository's
#: before-stop hook counts them alike), and of the output schemas and the instructions.
ALL_TOOLS, PROFILE, ONE_TOOL, OUTPUTS, INSTRUCTIONS = 48_000, 24_000, 4_000, 24_000, 3_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def listing(choice: str) -> tuple[list[Any], str]:
    """The tools and instructions a client gets from a server of ``choice``."""
    server = build_server(LocalService(), listed=choose(choice, "test"))
    async with Client(server) as client:
        return (await client.list_tools()).tools, client.instructions or ""


@pytest.mark.anyio
@pytest.mark.parametrize("choice", [ALL, *PROFILES])
async def test_the_tool_list_and_the_instructions_keep_to_their_goals(choice: str) -> None:
    tools, said = await listing(choice)
    sizes = {t.name: size(t.name, t.description, t.input_schema) for t in tools}
    goal = ALL_TOOLS if choice == ALL else PROFILE
    assert sum(sizes.values()) <= goal, (choice, sum(sizes.values()), sizes)
    assert max(sizes.values()) <= ONE_TOOL, max(sizes.items(), key=lambda item: item[1])
    outputs = sum(len(json.dumps(t.output_schema, separators=(",", ":"))) for t in tools
                  if t.output_schema is not None)
    assert outputs <= OUTPUTS, outputs
    assert len(said) <= INSTRUCTIONS, len(said)
    for tool in tools:  # what Claude's API accepts
        schema = tool.input_schema
        assert schema["type"] == "object", tool.name
        assert not {"oneOf", "anyOf", "allOf", "if", "not"} & set(schema), tool.name
        assert '"title"' not in json.dumps(schema), tool.name  # pydantic's, said again
    if choice == ALL:
        assert [t.name for t in tools] == [op.name for op in OPERATIONS.values() if op.tool]
    else:
        assert set(PROFILES[choice]) <= {t.name for t in tools}


@pytest.mark.anyio
@pytest.mark.parametrize("choice", [ALL, *PROFILES])
async def test_the_instructions_name_only_the_tools_listed(choice: str) -> None:
    tools, said = await listing(choice)
    listed = {t.name for t in tools}
    named = set(re.findall(r"`([a-z_]+)`", said))
    assert named <= listed, named - listed
    if choice == ALL:  # every tool a model calls is in the guide (the panel's are the panel's)
        assert named == {t.name for t in tools if OPERATIONS[t.name].panel != "only"}
        for tool in ("pattern", "undo", "notes", "partner"):  # rather than execute
            assert re.search(rf"`{tool}`.*?`execute`|`execute`.*?`{tool}`", said), tool


def test_each_clause_names_in_backquotes_exactly_the_tools_it_needs() -> None:
    for paragraph in GUIDE:
        for clause in paragraph:
            assert set(re.findall(r"`([^`]+)`", clause.text)) == set(clause.tools), clause
            assert set(clause.tools) <= set(OPERATIONS), clause
    assert instructions([]).startswith("scorch runs named SuperCollider rooms")


#: (tool, arguments, the argument the refusal names): each kind of wrong argument.
WRONG: list[tuple[str, dict[str, Any], str]] = [
    ("console", {"instance": "a", "lines": "ten"}, "lines"),  # a wrong type
    ("play", {"instance": "a", "synthdef": "sine", "colour": 1}, "colour"),  # unknown
    ("partner", {"action": "answer_off", "bars": 2}, "bars"),  # another action's
    ("pattern", {"action": "set", "instance": "a", "name": "x", "key": "dur"}, "value"),  # missing
    ("console", {"instance": "a", "lines": 5000}, "lines"),  # out of range
    # out of this action's range, though not of the tool's top schema (512 for continue)
    ("partner", {"action": "answer_on", "instance": "a", "notes": 100}, "notes"),
    ("undo", {"action": "checkpoint"}, "name"),  # missing in one action, not in others
]


@pytest.mark.anyio
async def test_a_wrong_argument_is_refused_by_the_full_check_naming_it() -> None:
    async with Client(build_server(LocalService())) as client:
        for tool, arguments, argument in WRONG:
            answer = await client.call_tool(tool, arguments)
            text = getattr(answer.content[0], "text", "")
            assert answer.is_error and answer.structured_content is not None, (tool, arguments)
            assert answer.structured_content["code"] == "INVALID_ARGUMENT", (tool, text)
            assert answer.structured_content["argument"] == argument, (tool, text)
            assert f"\n{argument}: " in text and "pydantic" not in text, (tool, text)


def test_a_choice_of_tools_is_checked_and_the_panel_comes_with_what_shows_it() -> None:
    play = choose("play", "here")
    assert {"live", "fader"} <= set(play)  # listen shows the panel, which calls them
    assert choose(["execute", "docs"], "here") == ["execute", "docs"]
    with pytest.raises(ConfigError) as wrong:
        choose(["execute", "plya"], "--tools")
    assert str(wrong.value).startswith("--tools: no tool 'plya' (did you mean 'play'?); "
                                       "the tools are: ")
    assert all(op.name in str(wrong.value) for op in OPERATIONS.values() if op.tool)


def test_a_wrong_tool_in_the_config_is_located(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[instances.a]\n\n[mcp]\ntools = ["execute", "dcos"]\n')
    config = load_config(path)
    with pytest.raises(ConfigError, match=r"config.toml:4: mcp.tools: no tool 'dcos' "
                                          r"\(did you mean 'docs'\?\)"):
        listed_for(config)
    assert listed_for(config, "code") == choose("code", "here")  # --tools wins


@pytest.mark.anyio
async def test_a_server_with_a_wrong_choice_lists_all_and_every_tool_says_the_mistake(
        tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[instances.a]\n\n[mcp]\ntools = ["plya"]\n')
    server, close = server_for(path)
    try:
        async with Client(server) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            answer = await client.call_tool("list_instances", {})
    finally:
        close()
    assert listed == {op.name for op in OPERATIONS.values() if op.tool}
    text = getattr(answer.content[0], "text", "")
    assert answer.is_error and "config.toml:4: mcp.tools: no tool 'plya'" in text, text
    # a file broken elsewhere keeps the choice it states
    path.write_text('[instances.a]\nnot_a_key = 1\n\n[mcp]\ntools = "code"\n')
    server, close = server_for(path)
    try:
        async with Client(server) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
    finally:
        close()
    assert listed == set(choose("code", "here"))
