"""Every answer says what it did (issue 38): through a real MCP client, against real rooms.

Each answer is checked against what the rooms really did: scsynth's node tree after a
stop, sclang's own view of a pattern, the file on disk after a recording, the process
ids after sclang was killed.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters

from mcp_server.server import build_server
from scorch.api.budget import TEXT
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.primitives.scsynth.commands import Cmd, Reply
from scorch.primitives.scsynth.node_tree import tree_nodes
from scorch.primitives.scsynth.placement import PROTECTED
from scorch.state.events import Kind
from scorch.state.view import STARTING
from tests.conftest import jack_name, module_orchestra
from tests.support.harness import two_rooms
from tests.support.mcp.calls import call, fails, text
from tests.support.processes import SCORCH, pids_using
from tests.support.shm.cleanup import kill_freeing_segments

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

ROOMS = """
[midi]
enabled = false
[instances.stage]
synthdefs = ["sine"]
[instances.lobby]
synthdefs = ["sine"]
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orchestra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    with module_orchestra(tmp_path_factory.mktemp("answers"), "answers", ROOMS) as orch:
        yield orch


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session


async def until(check: Callable[[], Awaitable[Any]], what: str, timeout: float = 15.0) -> Any:
    """Ask ``check`` until it gives something true (sclang reports twice a second)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await check()
        if found:
            return found
        await anyio.sleep(0.1)
    raise AssertionError(f"not within {timeout:g} s: {what}")


async def pattern(client: Client, room: str, name: str, **args: Any) -> dict[str, Any] | None:
    out = await call(client, "playing", instance=room, **args)
    return next((p for p in out["rooms"][0]["patterns"] if p["name"] == name), None)


def synths_on(orch: Orchestra, room: str) -> int:
    """The synths scsynth itself runs in ``room`` now, its safety stage and meters aside."""
    reply = orch.doors[room].scsynth.request(Cmd.G_QUERY_TREE, 0, 0, reply=Reply.QUERY_TREE,
                                             timeout=2.0)
    return sum(1 for n in tree_nodes(reply.args)
               if n.synthdef is not None and n.node_id not in PROTECTED)


# --- stop lists what it stopped ---------------------------------------------------------


async def test_stop_lists_the_patterns_routines_and_synths_it_stopped(
        client: Client, orchestra: Orchestra) -> None:
    await call(client, "play", instance="stage", synthdef="sine", node="hum",
               params={"amp": 0.001})
    await call(client, "execute", instance="stage", code=(
        "Pdef(\\kick, Pbind(\\dur, 0.25, \\amp, 0.001, \\sustain, 4)).play;\n"
        "Pdef(\\bass, Pbind(\\dur, 0.5, \\degree, -7, \\amp, 0.001, \\sustain, 4)).play;\n"
        "Tdef(\\lights, { loop { 0.1.wait } }).play;\n"
        "fork { loop { 0.2.wait } }; 1"))
    await until(lambda: pattern(client, "stage", "lights"), "the Tdef reported")
    await until(lambda: anyio.to_thread.run_sync(synths_on, orchestra, "stage"),
                "the patterns' synths on scsynth")
    before = await anyio.to_thread.run_sync(synths_on, orchestra, "stage")
    result = await client.call_tool("stop", {"instance": "stage"})
    out = result.structured_content
    assert out is not None and list(out["stopped"]) == ["stage"]
    stopped = out["stopped"]["stage"]
    assert sorted(stopped["patterns"]) == ["Pdef bass", "Pdef kick", "Tdef lights"]
    assert stopped["routines"] == 1  # the fork; the Pdefs' and the Tdef's players are theirs
    assert stopped["nodes"] == ["hum"]
    assert stopped["synths"] >= min(3, before)  # events came and went meanwhile
    assert await anyio.to_thread.run_sync(synths_on, orchestra, "stage") == 0  # scsynth's own
    said = text(result)
    assert said.startswith("stage: stopped 3 patterns (")
    assert ", 1 routine, " in said and "named nodes forgotten: hum" in said
    again = await call(client, "stop", instance="stage")
    assert again["stopped"]["stage"] == {"patterns": [], "routines": 0, "synths": 0, "nodes": []}
    await call(client, "execute", instance="stage",
               code="Pdef(\\kick).clear; Pdef(\\bass).clear; Tdef(\\lights).clear; 1")


# --- playing: whole sources, finished patterns, the quant in force -----------------------


async def test_playing_detail_gives_whole_sources_and_says_when_one_was_cut(
        client: Client) -> None:
    long = ", ".join(f"{i}" for i in range(250))  # about 1,000 characters of source
    # more than the room's share of the budget (sclang compiles at most 8 KiB of code)
    huge = ", ".join(f"{i}" for i in range(1400))
    for name, values in (("long", long), ("huge", huge)):
        await call(client, "execute", instance="lobby", code=(
            f"Pdef(\\{name}, Pbind(\\dur, 1, \\amp, 0, \\x, Pseq([{values}]))); 1"))
    whole = await until(lambda: pattern(client, "lobby", "long", detail=True), "long reported")
    assert long in whole["source"] and len(whole["source"]) > 1000
    result = await client.call_tool("playing", {"instance": "lobby", "detail": True})
    said = text(result)
    assert long in said.replace("\n    ", "")  # the text has it whole too, not one short line
    huge_out = await pattern(client, "lobby", "huge", detail=True)
    assert huge_out is not None and huge not in huge_out["source"]
    how = "ask with playing(instance='lobby', detail=true, full=true)"
    assert how in huge_out["source"] and how in said
    assert len(said) < TEXT * 1.2
    full = await pattern(client, "lobby", "huge", detail=True, full=True)
    assert full is not None and huge in full["source"]
    short = await pattern(client, "lobby", "long")
    assert short is not None and short["source"].endswith("...") and len(short["source"]) <= 60
    await call(client, "execute", instance="lobby", code="Pdef(\\long).clear; Pdef(\\huge).clear")


async def test_a_pdef_played_to_its_end_is_finished_not_playing(client: Client,
                                                                 orchestra: Orchestra) -> None:
    await call(client, "execute", instance="lobby", code=(
        "Pdef(\\once, Pbind(\\dur, 0.05, \\degree, Pseq([0, 2, 4], 1), \\amp, 0.001)).play; 1"))

    async def finished() -> dict[str, Any] | None:
        found = await pattern(client, "lobby", "once")
        return found if found and found["finished"] else None

    once = await until(finished, "the Pdef said finished")
    assert once["playing"] is False and once["last_event"] is not None
    (jitlib,) = orchestra.rooms.execute(
        "lobby", "[Pdef(\\once).isPlaying, Pdef(\\once).hasEnded]")
    assert jitlib.value == "[ true, true ]"  # JITLib calls it playing: scorch says finished
    said = text(await client.call_tool("playing", {"instance": "lobby"}))
    assert "Pdef once: finished, quant 1.0, last event" in said
    dry = await call(client, "stop", instance="lobby", dry_run=True)
    assert "Pdef once" not in dry["would_stop"]["lobby"]  # nothing of it plays to stop
    await call(client, "execute", instance="lobby", code="Pdef(\\once).clear; 1")


async def test_a_pattern_defined_on_the_next_bar_shows_the_bar_as_its_quant(
        client: Client) -> None:
    await call(client, "pattern", action="define", instance="lobby", name="onbar", kind="Pdef",
               source="Pbind(\\dur, 1, \\amp, 0.001)")
    onbar = await until(lambda: pattern(client, "lobby", "onbar"), "onbar reported")

    async def playing() -> dict[str, Any] | None:
        found = await pattern(client, "lobby", "onbar")
        return found if found and found["playing"] else None

    onbar = await until(playing, "onbar playing")
    assert (onbar["quant"], onbar["own_quant"]) == ("4", "1.0")
    said = text(await client.call_tool("playing", {"instance": "lobby"}))
    assert "Pdef onbar: playing, quant 4 (code changes land on 1.0)" in said
    await call(client, "pattern", action="stop", instance="lobby", name="onbar", at="now")
    stopped = await until(
        lambda: _when_stopped(client), "onbar stopped")
    assert (stopped["quant"], stopped["own_quant"]) == ("1.0", None)  # its own, once stopped
    await call(client, "pattern", action="play", instance="lobby", name="onbar", at="next_beat")
    again = await until(playing, "onbar playing again")
    assert (again["quant"], again["own_quant"]) == ("1", None)  # on the beat, as code changes
    await call(client, "execute", instance="lobby", code="Pdef(\\onbar).clear; 1")


async def _when_stopped(client: Client) -> dict[str, Any] | None:
    found = await pattern(client, "lobby", "onbar")
    return found if found and not found["playing"] else None


# --- compact text, record sizes, did you mean ----------------------------------------------


async def test_describe_is_compact_text_a_tenth_of_its_json(client: Client) -> None:
    result = await client.call_tool("synthdefs", {"action": "describe", "name": "sine"})
    said = text(result)
    assert said.startswith("sine (") and "\n  freq 440 (" in said and " Hz" in said
    assert not said.lstrip().startswith("{") and '"' not in said
    played = await client.call_tool("play", {"instance": "lobby", "synthdef": "sine",
                                             "params": {"amp": 0.001}})
    assert text(played).startswith("lobby: sine #") and "plays now: amp 0.001" in text(played)
    tempo = text(await client.call_tool("tempo", {}))
    assert tempo.startswith("installation: 120 bpm, bar ") and "rooms: stage, lobby" in tempo


async def test_record_list_gives_each_recordings_size(client: Client, orchestra: Orchestra) -> None:
    await call(client, "record", action="start", instance="lobby", seconds=0.5, name="sized")
    path = orchestra.studio.recorder.folder / "sized.wav"

    async def done() -> dict[str, Any] | None:
        out = await call(client, "record", action="list")
        row = next((r for r in out["recordings"] if r["name"] == "sized"), None)
        return row if row and row["state"] == "done" else None

    row = await until(done, "the recording done")
    assert row["size"] == path.stat().st_size > 90_000  # 0.5 s of stereo float at 48 kHz
    said = text(await client.call_tool("record", {"action": "list"}))
    line = next(line for line in said.splitlines() if line.startswith("sized "))
    assert f"{row['size'] / 1e3:.1f} kB" in line and "wav 2 ch 48000 Hz" in line


async def test_a_typo_of_a_name_gets_the_name_it_most_likely_meant(client: Client) -> None:
    assert "did you mean 'lobby'?" in await fails(client, "execute", instance="lobbby", code="1")
    assert "did you mean 'sine' or" in await fails(client, "synthdefs", action="describe",
                                                   name="sinee")
    assert "did you mean" not in await fails(client, "scene", action="recall", name="zzz",
                                             instance="lobby")


# --- restarts say which process ------------------------------------------------------------


async def test_after_sclang_was_killed_status_and_the_list_count_its_restart(
        client: Client, orchestra: Orchestra) -> None:
    view = orchestra.rooms.view("stage")
    before = (await call(client, "status", instance="stage"))["instances"][0]
    mark = view.events.mark()
    os.kill(before["pids"]["sclang"], signal.SIGKILL)
    restored = await anyio.to_thread.run_sync(
        lambda: view.events.wait_for(Kind.RESTORED, mark, 30.0))
    assert restored is not None and restored.details["process"] == "sclang"
    status = await client.call_tool("status", {"instance": "stage"})
    after = (status.structured_content or {})["instances"][0]
    assert after["pids"]["sclang"] != before["pids"]["sclang"]
    assert after["restarts_by"] == {"scsynth": before["restarts_by"]["scsynth"],
                                    "sclang": before["restarts_by"]["sclang"] + 1}
    assert after["restarts_in_window"] >= 1
    assert f"restarts: sclang {after['restarts_by']['sclang']}" in text(status)
    listed = await client.call_tool("list_instances", {})
    row = next(r for r in (listed.structured_content or {})["instances"] if r["name"] == "stage")
    assert row["restarts"] >= 1 and row["restarts_by"] == after["restarts_by"]
    line = next(line for line in text(listed).splitlines() if line.startswith("stage "))
    assert line.rstrip().endswith(f"sclang {after['restarts_by']['sclang']}")


# --- first answers as fast as later ones (scorch mcp over stdio, as Claude Desktop runs it) ---

#: What a booting room may say it is doing (``Snapshot.phase``).
PHASES = re.compile(rf"{re.escape(STARTING)}|starting scsynth(; .*)?|scsynth up, sclang "
                    r"(starting|restarting)|scsynth and sclang up, restoring .*")
#: What listen loads (``scorch.app.studio.hearing``), as the process maps them.
HEARING = {"numpy", "scipy", "matplotlib"}


def server_pid(config: Path) -> int:
    """The ``scorch mcp`` serving ``config`` (the client spawned it)."""
    for proc in psutil.process_iter(["cmdline"]):
        if str(config) in (proc.info["cmdline"] or []):
            return proc.pid
    raise AssertionError(f"no scorch mcp for {config}")


def mapped(pid: int) -> set[str]:
    """Which of the hearing libraries the process has loaded (its memory maps say)."""
    paths = [m.path for m in psutil.Process(pid).memory_maps()]
    return {name for name in HEARING if any(f"/{name}/" in path for path in paths)}


@pytest.fixture
def stdio_rooms(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    jack = jack_name("answers-stdio")
    config = tmp_path / "config.toml"
    config.write_text(two_rooms(tmp_path / "state", jack) + (
        "[instances.alpha.nodes.hum]\nsynthdef = \"sine\"\n"
        "params = { freq = 220, amp = 0.1 }\n"))
    yield config, tmp_path / "mcp.log"
    kill_freeing_segments(pids_using(jack))


async def test_booting_rooms_say_their_phase_and_the_first_listen_finds_its_libraries_loaded(
        stdio_rooms: tuple[Path, Path]) -> None:
    config, log = stdio_rooms
    params = StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" mcp --config "$1" 2>>"$2"', SCORCH, str(config),
                            str(log)],
        env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH")
             or k.startswith("XDG_")})
    polls: list[tuple[float, dict[str, Any], str, set[str]]] = []
    async with Client(params) as client:
        pid = server_pid(config)
        while True:  # list_instances as fast as it answers, from the first moment
            libs = mapped(pid)  # before the call: loaded before it read the rooms
            sent = time.time()
            listed = await client.call_tool("list_instances", {})
            assert listed.structured_content is not None, text(listed)
            rows = {r["name"]: r for r in listed.structured_content["instances"]}
            polls.append((sent, rows, text(listed), libs))
            if all(r["state"] == "READY" for r in rows.values()):
                break
            assert time.time() - polls[0][0] < 120, text(listed)
        booting = [(rows, said, libs) for _, rows, said, libs in polls
                   if any(r["state"] == "BOOTING" for r in rows.values())]
        assert booting, "no call answered while the rooms booted"
        for rows, said, libs in booting:
            for row in rows.values():
                if row["state"] == "BOOTING":
                    assert PHASES.fullmatch(row["reason"]), row["reason"]
                    assert f"BOOTING ({row['reason']})" in said
            assert libs == set(), f"loaded while the rooms booted: {libs}"
        seen = {row["reason"] for rows, _, _ in booting for row in rows.values()
                if row["state"] == "BOOTING"}
        assert seen - {STARTING}, f"only ever said {seen}"  # the phases of the boot itself
        status = await call(client, "status")
        for room in status["instances"]:  # a call sent once a room was READY reads READY
            late = [rows[room["name"]]["state"] for sent, rows, _, _ in polls
                    if sent > room["since"]]
            assert set(late) <= {"READY"}, (room["name"], late)

        async def warmed() -> set[str]:
            libs = mapped(pid)
            return libs if libs == HEARING else set()

        assert await until(warmed, "hearing's libraries loaded in the background", 120.0)
        heard = await client.call_tool("listen", {"instance": "alpha", "seconds": 1.0},
                                       read_timeout_seconds=120)
    out = heard.structured_content
    assert out is not None and not heard.is_error, text(heard)
    assert not out["silent"] and abs(out["fundamental_hz"] - 220) < 2
