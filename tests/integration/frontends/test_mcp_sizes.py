"""The size budget of every MCP tool's answer, with hostile sizes, against real rooms."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api import budget
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from tests.conftest import jack_name
from tests.integration.frontends.test_mcp_tools import TOOLS
from tests.support.harness import two_rooms
from tests.support.mcp.calls import call, text

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orchestra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    state = tmp_path_factory.mktemp("mcp-sizes") / "state"
    orch = Orchestra(parse_config(two_rooms(state, jack_name("sizes")),
                                  state.parent / "config.toml"))
    try:
        assert orch.start() == {"alpha": None, "beta": None}
        yield orch
    finally:
        orch.stop()


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session


#: Calls that could answer without bound; every other tool is called as it comes.
HOSTILE_SIZES: dict[str, dict[str, object]] = {
    "execute": {"instance": "alpha", "timeout_s": 60,
                "code": '20000.do { |i| ("line " ++ i ++ " of a flood").postln }; '
                        '(1..20000).asArray'},
    "console": {"instance": "alpha", "lines": 1000},
    "synthdefs": {"action": "list"},
    "history": {"limit": 100},
    "events": {"instance": "*"},
    "docs": {"query": "the", "limit": 50},
    "playing": {"instance": "*", "detail": True},
}
#: Tools whose hostile answer must say that more is left out, and how to ask for it.
CUT = {"execute", "console", "history"}


async def test_every_answer_stays_within_the_size_budget_and_says_how_to_get_more(
        client: Client) -> None:
    long_code = "// " + "x" * 200_000 + "\n1"
    await call(client, "execute", instance="beta", code=long_code)  # in the history
    await call(client, "execute", instance="alpha",  # lines the console keeps
               code='fork { 1200.do { |i| ("late line " ++ i ++ " of a flood").postln; '
                    'if(i % 200 == 0) { 0.01.wait } } }; 1')
    assert (await call(client, "wait_for", instance="alpha", pattern="late line 1199",
                       since=0, timeout_s=30))["matched"]
    for tool in sorted(TOOLS):
        answer = await client.call_tool(tool, HOSTILE_SIZES.get(tool, {}))
        shown = text(answer)
        structured = json.dumps(answer.structured_content or {})
        assert len(shown) <= budget.TEXT * 1.25, (tool, len(shown))
        assert len(structured) <= budget.TEXT * 2.5, (tool, len(structured))
        if tool in CUT:
            assert "not shown: ask with" in shown and "full=true" in shown, (tool, shown[:300])
    flood = await call(client, "execute", instance="alpha", code="5.do { |i| i.postln }; 1")
    assert flood["results"][0]["posted"] == ["0", "1", "2", "3", "4"]  # small stays whole
    lines = await call(client, "console", instance="alpha", lines=1000, full=True)
    assert len(lines["lines"]) == 1000 and lines["more"] == 0
    listed = await call(client, "synthdefs", action="list")
    assert listed["synthdefs"][0]["controls"] and not listed["synthdefs"][0]["params"]
    whole = await call(client, "synthdefs", action="list", full=True)
    assert all(d["params"] for d in whole["synthdefs"] if d["controls"])
    full = await call(client, "history", limit=20, instance="beta", full=True)
    assert any(len(e["code"]) > 60_000 for e in full["entries"])  # as the history keeps it


async def test_everyday_requests_end_to_end_each_checked_on_scsynth_or_in_the_sound(
        client: Client, orchestra: Orchestra) -> None:
    """A part of issue 30's twelve requests: a drone and a beat, listen, darker, a mistake,
    history; each outcome read on scsynth or heard."""
    from tests.conftest import scsynth_param

    port = orchestra.views["beta"].snapshot.port or 0
    drone = await call(client, "play", instance="beta", synthdef="sine", node="drone",
                       params={"freq": 110, "amp": 0.1})
    assert scsynth_param(port, drone["node_id"], "freq") == 110  # a drone
    await call(client, "synthdefs", action="load", name="kick", instance="beta")
    await call(client, "execute", instance="beta", code=(
        "Pdef(\\e2e, Pbind(\\instrument, \\kick, \\dur, 0.25, \\amp, 0.4)).play; 1"))
    try:
        heard = await client.call_tool("listen", {"instance": "beta", "seconds": 1.5})
        shown = text(heard)
        report = heard.structured_content or {}
        assert len(report["onsets"]) >= 4, shown  # the beat, heard
        # the drone, heard under the beat: a partial or the held tone (the kicks ring at the
        # event's default freq, C4, and may be taken for the held one)
        tones = [p["note"] for p in report["partials"]] + [(report["held"] or {}).get("note")]
        assert "A2" in tones, shown
        assert "onsets (" in shown and "LUFS" in shown  # the numbers are in the text
    finally:
        await call(client, "execute", instance="beta", code="Pdef(\\e2e).stop; 1")
    await call(client, "set", instance="beta", node="drone", params={"freq": 55})
    assert scsynth_param(port, drone["node_id"], "freq") == 55  # darker
    wrong = await client.call_tool("play", {"instance": "*", "synthdef": "sine"})
    assert wrong.is_error and (wrong.structured_content or {})["argument"] == "instance"
    calls = await call(client, "history", instance="beta", limit=5)
    sets = [e for e in calls["entries"] if e["code"].startswith("@set ")]
    assert sets, [e["code"] for e in calls["entries"]]
    await call(client, "set", instance="beta", node="drone", params={"freq": 220})
    await call(client, "history", action="rerun", id=sets[0]["id"])
    assert scsynth_param(port, drone["node_id"], "freq") == 55  # the entry, run again
    await call(client, "release", instance="beta", node="drone")
