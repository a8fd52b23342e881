"""A config with mistakes keeps `scorch mcp` up: the tools say them, a fixed file starts the rooms.

A real `mcp.Client` on the server's stdio, as Claude Desktop runs it: every tool
that ``tools/list`` names, called with valid arguments, answers the mistake with
its file, line and key; the file is fixed while the session lasts.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import jack_name
from tests.support.harness import two_rooms
from tests.support.mcp.every_tool import CALLS

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[3]
#: A misspelt key on line 13 of the two-room config.
BROKEN = ('[instances.beta]\ngroup = "rooms"\n',
          '[instances.beta]\ngroup = "rooms"\nportt = 57999\n')


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.anyio
async def test_a_broken_config_is_told_by_every_tool_and_once_fixed_the_rooms_start(
        tmp_path: Path) -> None:
    good = two_rooms(tmp_path / "state", jack_name("gate"))
    config = tmp_path / "config.toml"
    config.write_text(good.replace(*BROKEN))
    log = tmp_path / "mcp.log"
    params = StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" -m scorch.cli.main mcp --config "$1" 2>>"$2"',
                            sys.executable, str(config), str(log)],
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"),
             "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    calls = {tool: dict(args) for tool, args in CALLS.items()}
    calls["buffer"]["path"] = str(tmp_path / "click.wav")
    located = f"{config}:13: instances.beta.portt: unknown key; did you mean 'port'?"
    async with Client(params) as client:
        listed = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert listed == sorted(CALLS), f"tools without arguments in CALLS: " \
                                        f"{sorted(set(listed) - set(CALLS))}"
        said: dict[str, Any] = {}

        async def call(tool: str) -> None:
            said[tool] = await client.call_tool(tool, calls[tool], read_timeout_seconds=60)

        async with anyio.create_task_group() as tasks:  # at once: each answers from the file
            for tool in listed:
                tasks.start_soon(call, tool)
        untold = {tool: text_of(result)[:300] for tool, result in said.items()
                  if not result.is_error or located not in text_of(result)}
        assert not untold, f"tools that did not say the located mistake: {untold}"
        config.write_text(good)
        deadline = time.monotonic() + 90
        while True:
            result = await client.call_tool("list_instances", {})
            assert not result.is_error, text_of(result)
            assert result.structured_content is not None
            states = {r["name"]: r["state"] for r in result.structured_content["instances"]}
            if states == {"alpha": "READY", "beta": "READY"}:
                break
            assert set(states.values()) <= {"BOOTING", "READY"}, states
            assert time.monotonic() < deadline, states
            await anyio.sleep(0.1)  # poll interval; the deadline bounds the wait
        played = await client.call_tool("play", {"instance": "beta", "synthdef": "sine",
                                                 "params": {"freq": 220, "amp": 0.01}})
        assert not played.is_error, text_of(played)
    said = log.read_text()
    assert "has mistakes" in said and "loads now" in said
    assert "orchestra stopped; no process left" in said
