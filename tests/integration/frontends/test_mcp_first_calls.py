"""Every tool called at once after ``initialize``, while the rooms boot (issue 24).

Claude's usual first moves: connect, then call tools straight away. On a
two-room config, a real ``mcp.Client`` over stdio calls every tool that
``tools/list`` names within 50 ms of ``initialize``, each with valid arguments
from :data:`CALLS` (a tool missing from the table fails the test, so a new tool
is covered as soon as it exists). Each call must end in its normal result, or in
a BOOTING error that says what it waited for, and only after waiting its own
timeout; none may say scorch is stopped.
"""

from __future__ import annotations

import os
import re
import time
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from scorch.app.tree import RESTORE_WAIT
from tests.conftest import jack_name
from tests.support.harness import two_rooms
from tests.support.processes import SCORCH, pids_using
from tests.support.shm.cleanup import kill_freeing_segments

pytestmark = [pytest.mark.integration]

#: Named nodes the config gives alpha, so set and release have a node from the start.
NODES = """
[instances.alpha.nodes.hum]
synthdef = "sine"
params = { freq = 220, amp = 0.001 }
[instances.alpha.nodes.drone]
synthdef = "sine"
params = { freq = 330, amp = 0.001 }
"""
MARKER = "first-calls-marker"
#: Valid arguments for every tool. Calls that change a room keep out of each other's
#: way (stop empties beta only; set and release touch different nodes of alpha).
CALLS: dict[str, dict[str, Any]] = {
    "list_instances": {},
    "status": {"instance": "*"},
    "events": {"instance": "*"},
    "instance": {"action": "boot", "name": "beta"},
    "execute": {"instance": "alpha", "code": f'"{MARKER}".postln; 1 + 1', "timeout_s": 60},
    "wait_for": {"instance": "alpha", "pattern": MARKER, "since": 0, "timeout_s": 60},
    "console": {"instance": "alpha", "lines": 20},
    "stop": {"instance": "beta"},
    "synthdefs": {"action": "list"},
    "play": {"instance": "beta", "synthdef": "sine", "params": {"freq": 330, "amp": 0.001}},
    "set": {"instance": "alpha", "node": "hum", "params": {"freq": 440}},
    "release": {"instance": "alpha", "node": "drone"},
    "buffer": {"action": "load", "instance": "beta", "path": "<a wav file>"},
    "scene": {"action": "save", "name": "first", "instance": "alpha"},
    "session": {"action": "save", "name": "first"},
    "snippet": {"action": "run", "name": "synthdef-controls", "instance": "alpha",
                "timeout_s": 60},
    "midi": {"action": "routes"},
    "notes": {"action": "sounding"},
    "partner": {"action": "answering"},
    "playing": {"instance": "alpha"},
    "tempo": {},
    "docs": {"name": "SinOsc", "timeout_s": 120},
    "history": {},
    "listen": {"instance": "alpha", "node": "hum", "seconds": 0.5},
    "record": {"action": "start", "instance": "alpha", "seconds": 1},
    "render": {"synthdef": "sine", "duration": 0.5},
    "live": {},
    "fader": {"instance": "alpha", "node": "hum", "param": "amp", "value": 0.001},
    "doctor": {},
    "pattern": {"action": "unmute", "instance": "alpha", "at": "now"},
    "undo": {"action": "list"},
}


@dataclass
class Outcome:
    """One call: when it was sent and ended (monotonic), and what came back."""

    sent: float
    ended: float
    error: bool
    text: str


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Two rooms (alpha with two named nodes) on their own JACK server; a short WAV file."""
    jack = jack_name("firstcalls")
    config = tmp_path / "config.toml"
    config.write_text(two_rooms(tmp_path / "state", jack) + NODES)
    sample = tmp_path / "click.wav"
    with wave.open(str(sample), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(48000)
        out.writeframes(b"\x00\x10" * 4800)
    yield {"config": config, "jack": jack, "log": tmp_path / "mcp.log", "sample": sample}
    kill_freeing_segments(pids_using(jack))  # what is left, and the segments it held


def mcp_params(setup: dict[str, Any]) -> StdioServerParameters:
    """`scorch mcp --config`, importing this tree's scorch, its stderr kept in a log."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" mcp --config "$1" 2>>"$2"', SCORCH,
                            str(setup["config"]), str(setup["log"])], env=env)


async def call(client: Client, tool: str, args: dict[str, Any],
               outcomes: dict[str, Outcome]) -> None:
    sent = time.monotonic()
    result = await client.call_tool(tool, args, read_timeout_seconds=300)
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    outcomes[tool] = Outcome(sent, time.monotonic(), result.is_error, text)


@pytest.mark.anyio
async def test_every_tool_called_at_once_after_initialize_waits_for_the_boot_it_needs(
        setup: dict[str, Any]) -> None:
    calls = {tool: dict(args) for tool, args in CALLS.items()}
    calls["buffer"]["path"] = str(setup["sample"])
    outcomes: dict[str, Outcome] = {}
    short: dict[str, Outcome] = {}
    listed: list[str] = []

    async def list_tools(client: Client) -> None:
        listed.extend(tool.name for tool in (await client.list_tools()).tools)

    async with Client(mcp_params(setup)) as client:
        initialized = time.monotonic()
        async with anyio.create_task_group() as tasks:
            for tool, args in calls.items():
                tasks.start_soon(call, client, tool, args, outcomes)
            tasks.start_soon(list_tools, client)
            # Shorter than any boot: this one must say BOOTING, the room and its phase.
            tasks.start_soon(call, client, "execute", {
                "instance": "beta", "code": "1", "timeout_s": 0.5}, short)
        rooms = (await client.call_tool("list_instances", {})).structured_content
    log = setup["log"].read_text()

    assert sorted(listed) == sorted(CALLS), (
        f"tools without arguments in CALLS: {sorted(set(listed) - set(CALLS))}; "
        f"in CALLS but not tools: {sorted(set(CALLS) - set(listed))}")
    late = {tool: round(o.sent - initialized, 3) for tool, o in outcomes.items()
            if o.sent - initialized > 0.05}
    assert not late, f"called later than 50 ms after initialize: {late}"
    assert rooms is not None
    assert {r["name"]: r["state"] for r in rooms["instances"]} == {
        "alpha": "READY", "beta": "READY"}, log

    wrong = {}
    for tool, outcome in outcomes.items():
        own = float(calls[tool].get("timeout_s", RESTORE_WAIT))
        waited = outcome.ended - outcome.sent
        if "stopped" in outcome.text.lower() and (outcome.error or "scorch is" in outcome.text):
            wrong[tool] = f"says stopped: {outcome.text}"
        elif outcome.error and "BOOTING" not in outcome.text:
            wrong[tool] = f"failed: {outcome.text}"
        elif outcome.error and waited < own * 0.9:
            wrong[tool] = f"said BOOTING after {waited:.1f} s, before its {own:g} s: {outcome.text}"
    assert not wrong, "\n".join(f"{tool}: {why}" for tool, why in wrong.items())
    booting = {tool: o.text for tool, o in outcomes.items() if o.error}
    assert all("waited" in text and "for it" in text for text in booting.values()), booting
    (brief,) = short.values()
    assert brief.error and "instance 'beta' is BOOTING (" in brief.text, brief.text
    assert re.search(r"execute waited \d+\.\d s for it \(its own timeout\)", brief.text), brief.text
