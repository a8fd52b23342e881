"""One checking path for every argument of every tool: what MCP refuses, the socket and the
CLI refuse alike, in scorch's words, naming the argument."""

from __future__ import annotations

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.api.ops import OPERATIONS
from scorch.errors import InvalidRequest

UNKNOWN = "colour_of_the_sky"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _calls() -> list[tuple[str, dict[str, object]]]:
    """Every tool, once per action, with one argument no tool has."""
    calls: list[tuple[str, dict[str, object]]] = []
    for op in OPERATIONS.values():
        if not op.tool:
            continue
        for action in op.actions or [None]:
            given: dict[str, object] = {UNKNOWN: 1}
            if action is not None:
                given["action"] = action
            calls.append((op.name, given))
    return calls


@pytest.mark.anyio
async def test_every_tool_refuses_an_unknown_argument_by_name() -> None:
    service = LocalService()  # no orchestra: the arguments are checked before anything runs
    async with Client(build_server(service)) as client:
        for name, given in _calls():
            answer = await client.call_tool(name, given)
            text = getattr(answer.content[0], "text", "")
            assert answer.is_error, (name, given)
            assert answer.structured_content is not None
            assert answer.structured_content["code"] == "INVALID_ARGUMENT", (name, text)
            assert answer.structured_content["argument"] == UNKNOWN, (name, text)
            assert f"{UNKNOWN}: unknown argument" in text, (name, text)
            assert "pydantic" not in text and "validation error" not in text, text
            with pytest.raises(InvalidRequest, match=f"{UNKNOWN}: unknown argument"):
                service.call(name, given)  # the control socket's path says the same


@pytest.mark.anyio
async def test_wrong_values_are_refused_in_scorchs_words() -> None:
    async with Client(build_server(LocalService())) as client:
        answer = await client.call_tool("play", {"instance": "*", "synthdef": "sine"})
        text = getattr(answer.content[0], "text", "")
        assert answer.is_error and answer.structured_content is not None
        assert answer.structured_content["argument"] == "instance"
        assert text.startswith("[INVALID_ARGUMENT] play: invalid arguments:\ninstance: "), text
        assert "pydantic" not in text and "http" not in text, text


def test_play_names_its_node_node_and_takes_name_as_deprecated_alias() -> None:
    op = OPERATIONS["play"]
    assert "node" in op.fields and "name" not in op.fields
    for key in ("node", "name"):
        parsed = op.parse({"instance": "a", "synthdef": "sine", key: "pad"})
        assert getattr(parsed, "node", None) == "pad"
    for name in ("set", "release", "listen"):
        assert "node" in OPERATIONS[name].fields, name
