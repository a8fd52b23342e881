"""Every tool called at once after ``initialize``, while the rooms boot (issue 24).

Claude's usual first moves: connect, then call tools straight away. On a
two-room config, a real ``mcp.Client`` over stdio calls every tool that
``tools/list`` names within 50 ms of ``initialize``, each with valid arguments
from :data:`~tests.support.mcp.every_tool.CALLS` (a tool missing from the table
fails the test, so a new tool is covered as soon as it exists). Each call must
end in its normal result (:data:`NORMAL` says what each holds), or in a BOOTING
error that says what it waited for, and only after waiting its own timeout; none
may say scorch is stopped. The read-only calls that need no READY room answer
while the rooms boot.
"""

from __future__ import annotations

import os
import re
import time
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from scorch.app.tree import RESTORE_WAIT
from scorch.knowledge.shared import index_path
from tests.conftest import jack_name
from tests.support.harness import two_rooms
from tests.support.mcp.every_tool import CALLS, MARKER
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


Check = Callable[[dict[str, Any]], bool]
#: What each tool's normal result holds, on this config (rooms may still boot for the calls
#: that do not wait for them). A call that ended in its BOOTING error is checked apart.
NORMAL: dict[str, Check] = {
    "list_instances": lambda r: [i["name"] for i in r["instances"]] == ["alpha", "beta"],
    "status": lambda r: ([i["name"] for i in r["instances"]] == ["alpha", "beta"]
                         and {i["state"] for i in r["instances"]} <= {"BOOTING", "READY"}),
    "events": lambda r: isinstance(r["events"], list) and r["more"] >= 0,
    "instance": lambda r: [(i["name"], i["state"]) for i in r["instances"]] == [
        ("beta", "READY")],
    "execute": lambda r: (r["results"][0]["ok"] and r["results"][0]["value"] == "2"
                          and MARKER in r["results"][0]["posted"]),
    "wait_for": lambda r: r["matched"] and r["line"]["text"] == MARKER,
    "console": lambda r: r["instance"] == "alpha" and isinstance(r["lines"], list),
    "stop": lambda r: list(r["stopped"]) == ["beta"],
    "synthdefs": lambda r: "sine" in {d["name"] for d in r["synthdefs"]},
    "play": lambda r: (r["instance"], r["synthdef"], r["params"]["freq"]) == (
        "beta", "sine", 330) and r["node_id"] > 0,
    "set": lambda r: (r["node"], r["params"]["freq"]) == ("hum", 440),
    "release": lambda r: (r["node"], r["released"]) == ("drone", True),
    "buffer": lambda r: [(b["name"], b["frames"]) for b in r["buffers"]] == [("click", 4800)],
    "scene": lambda r: r["scenes"][0]["name"] == "first" and "hum" in r["scenes"][0][
        "values"]["alpha"],
    "session": lambda r: r["path"].endswith("sessions/first.toml") and Path(r["path"]).exists(),
    "snippet": lambda r: (r["snippet"]["name"] == "synthdef-controls"
                          and r["results"][0]["ok"]),
    "midi": lambda r: r["result"] == [],
    "notes": lambda r: r["count"] == 0,
    "partner": lambda r: r["count"] == 0,
    "playing": lambda r: [room["room"] for room in r["rooms"]] == ["alpha"],
    "tempo": lambda r: r["bpm"] == 120 and r["rooms"] == ["alpha", "beta"],
    "docs": lambda r: r["doc"]["name"] == "SinOsc" and r["doc"]["is_ugen"],
    "history": lambda r: isinstance(r["entries"], list),
    # hum at 220 Hz, or at 440 Hz once set changed it: heard, not silence
    "listen": lambda r: (not r["silent"] and abs(r["seconds"] - 0.5) < 0.05
                         and any(abs(r["fundamental_hz"] - hz) < 2 for hz in (220, 440))),
    "record": lambda r: [(x["instance"], x["state"]) for x in r["recordings"]] == [
        ("alpha", "recording")],
    "render": lambda r: not r["silent"] and abs(r["fundamental_hz"] - 440) < 2,
    "live": lambda r: [room["name"] for room in r["rooms"]] == ["alpha", "beta"],
    "fader": lambda r: (r["node"], r["param"], r["value"]) == ("hum", "amp", 0.001),
    "doctor": lambda r: {c["name"] for c in r["checks"]} >= {"scsynth", "sclang", "jack"},
    "pattern": lambda r: (r["instance"], r["action"]) == ("alpha", "unmute"),
    "undo": lambda r: r["action"] == "list" and isinstance(r["steps"], list),
    # the two-room config has no [[schedule]] and no [[cues]]: nothing planned, nothing listed
    "schedule": lambda r: r["timezone"] != "" and r["upcoming"] == [],
    "cue": lambda r: r["action"] == "list" and r["cues"] == [] and r["standby"] is None,
    "reference": lambda r: r["action"] == "list" and r["references"] == [],
    "sweep": lambda r: ([row["values"]["amp"] for row in r["rows"]] == [0.0005, 0.001]
                        and set(r["left_at"]) == {"amp"}),
    "gain": lambda r: isinstance(r["rooms"], dict),
}
#: Read-only calls that need no READY room: they answer while the rooms boot (docs only
#: from a cached index), before the first READY or within AT_ONCE of the first answer.
AT_ONCE_TOOLS = ("list_instances", "synthdefs", "status", "events", "console")
AT_ONCE = 1.0


@dataclass
class Outcome:
    """One call: when it was sent and ended (monotonic), and what came back."""

    sent: float
    ended: float
    ended_at: float
    """Wall-clock time it ended, to compare with the rooms' READY (scorch's own clock)."""
    error: bool
    text: str
    result: dict[str, Any]
    """The structured result ({} for an error)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Two rooms (alpha with two named nodes) on their own JACK server; a short WAV file."""
    jack = jack_name("firstcalls")
    config = tmp_path / "config.toml"
    # the sample is the test's own, in a folder the installation allows
    config.write_text(two_rooms(tmp_path / "state", jack) + NODES
                      + f'[files]\nallow = ["{tmp_path}"]\n')
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
    for name in ("PYTHONPATH", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        if name in os.environ:  # the same docs index as index_path() finds here
            env[name] = os.environ[name]
    return StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" mcp --config "$1" 2>>"$2"', SCORCH,
                            str(setup["config"]), str(setup["log"])], env=env)


async def call(client: Client, tool: str, args: dict[str, Any],
               outcomes: dict[str, Outcome]) -> None:
    sent = time.monotonic()
    result = await client.call_tool(tool, args, read_timeout_seconds=300)
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    outcomes[tool] = Outcome(sent, time.monotonic(), time.time(), result.is_error, text,
                             result.structured_content or {})


@pytest.mark.anyio
async def test_every_tool_called_at_once_after_initialize_waits_for_the_boot_it_needs(
        setup: dict[str, Any]) -> None:
    calls = {tool: dict(args) for tool, args in CALLS.items()}
    calls["buffer"]["path"] = str(setup["sample"])
    at_once = AT_ONCE_TOOLS + (("docs",) if index_path("sclang", None).exists() else ())
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

    assert sorted(NORMAL) == sorted(CALLS)
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
    abnormal = {tool: str(o.result)[:400] for tool, o in outcomes.items()
                if not o.error and not NORMAL[tool](o.result)}
    assert not abnormal, f"not the normal result: {abnormal}"
    as_json = {tool: o.text[:200] for tool, o in outcomes.items()
               if o.text.lstrip().startswith("{") or re.search(r'\n\s+"\w+": ', o.text)}
    assert not as_json, f"answered a model with JSON, not text: {as_json}"
    ready_at = min(r["since"] for r in rooms["instances"])  # alpha's: beta booted again
    first = min(o.ended for o in outcomes.values())
    slow = {tool: f"{outcomes[tool].ended_at - ready_at:+.2f} s from READY, "
                  f"{outcomes[tool].ended - first:.2f} s after the first answer"
            for tool in at_once if outcomes[tool].error or (
                outcomes[tool].ended_at > ready_at and outcomes[tool].ended - first > AT_ONCE)}
    assert not slow, f"did not answer while the rooms booted: {slow}"
    booting = {tool: o.text for tool, o in outcomes.items() if o.error}
    assert all("waited" in text and "for it" in text for text in booting.values()), booting
    (brief,) = short.values()
    assert brief.error and "room 'beta' is BOOTING (" in brief.text, brief.text
    assert re.search(r"execute waited \d+\.\d s for it \(its own timeout\)", brief.text), brief.text
