"""Every MCP tool through an in-memory client, against one real two-instance orchestra."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import anyio
import pytest
from mcp import Client

from mcp_server.instructions import instructions
from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from tests.conftest import jack_name, scsynth_param
from tests.support.harness import two_rooms
from tests.support.mcp.calls import call, fails, text

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

TOOLS = {"list_instances", "execute", "stop", "status", "instance", "console", "wait_for",
         "synthdefs", "play", "set", "release", "midi", "events", "docs", "history", "snippet",
         "buffer", "session", "scene", "record", "listen", "render", "tempo", "notes",
         "playing", "live", "fader", "doctor",
         "pattern", "undo", "partner", "schedule", "cue", "gain", "reference", "sweep"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orchestra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    state = tmp_path_factory.mktemp("mcp-tools") / "state"
    config = parse_config(two_rooms(state, jack_name("mcp")),
                          state.parent / "config.toml")
    orch = Orchestra(config)
    try:
        errors = orch.start()
        assert errors == {"alpha": None, "beta": None}
        yield orch
    finally:
        orch.stop()


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session


# --- discovery ---------------------------------------------------------------


async def test_every_tool_is_listed_with_a_description_params_and_annotations(
        client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None
        assert tool.output_schema is not None, tool.name
    assert tools["list_instances"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["execute"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["set"].annotations.idempotent_hint is True  # type: ignore[union-attr]
    code = tools["execute"].input_schema["properties"]["code"]
    assert "description" in code


async def test_playing_shows_a_pattern_sclang_defined_compactly_and_in_full_on_request(
        client: Client) -> None:
    await call(client, "execute", instance="alpha",
               code="Pdef(\\mcp, Pbind(\\degree, Pseq([0, 2, 4], inf), \\dur, 0.5, "
                    "\\amp, 0.001, \\sustain, 20)).play; 1")
    for _ in range(50):
        out = await call(client, "playing", instance="alpha")
        seen = out["rooms"][0]
        if "Pdef mcp" in (seen["synths"] or {}) and seen["patterns"] \
                and seen["patterns"][0]["last_event"] is not None:
            break
        await anyio.sleep(0.1)
    room = out["rooms"][0]
    assert room["room"] == "alpha" and room["tree"] is None
    whole = "Pdef('mcp', Pbind('degree', Pseq([ 0, 2, 4 ], inf), 'dur', 0.5, 'amp', 0.001, " \
            "'sustain', 20))"
    (pattern,) = room["patterns"]
    last_event = pattern.pop("last_event")  # when it played last: a time, asserted apart
    assert pattern == {"kind": "Pdef", "name": "mcp", "playing": True, "quant": "1.0",
                       "source": whole[:57] + "...", "source_from": "source", "mute": "",
                       "finished": False, "own_quant": None}
    assert abs(time.time() - last_event) < 30
    assert room["synths"]["Pdef mcp"] >= 1
    full = await call(client, "playing", instance="alpha", detail=True)
    assert full["rooms"][0]["patterns"][0]["source"] == whole
    assert any(n["owner"] == "Pdef mcp" for n in full["rooms"][0]["tree"])
    await call(client, "execute", instance="alpha", code="Pdef(\\mcp).stop; Pdef(\\mcp).clear; 1")


async def test_instructions_teach_the_workflow(client: Client) -> None:
    assert client.instructions == instructions(TOOLS)
    for tool in ("list_instances", "synthdefs", "execute", "set", "docs", "history",
                 "snippet", "pattern", "undo", "notes", "partner", "tempo"):
        assert f"`{tool}`" in client.instructions, tool
    # where an error points is said once, by the tool that runs code
    execute = next(t for t in (await client.list_tools()).tools if t.name == "execute")
    assert "the line and character" in (execute.description or "")


async def test_list_instances_shows_both_rooms_ready_with_ports(client: Client) -> None:
    out = await call(client, "list_instances")
    assert out["hosted_by"] == "scorch run"
    rows = {row["name"]: row for row in out["instances"]}
    assert set(rows) == {"alpha", "beta"}
    for row in rows.values():
        assert row["group"] == "rooms" and row["state"] == "READY"
        assert isinstance(row["port"], int) and row["restarts"] == 0
        assert row["uptime"] is not None and row["uptime"] >= 0


async def test_status_of_a_group_gives_each_room_with_live_server_fields(
        client: Client) -> None:
    out = await call(client, "status", instance="rooms")
    assert [s["name"] for s in out["instances"]] == ["alpha", "beta"]
    assert out["instances"][0]["server"]["nominal_sample_rate"] == 48000.0
    assert out["instances"][0]["pids"]["scsynth"] > 0


# --- code --------------------------------------------------------------------


async def test_execute_returns_the_value_and_posted_lines(client: Client) -> None:
    out = await call(client, "execute", instance="alpha", code='"posted-1".postln; 1 + 2')
    [result] = out["results"]
    assert result["instance"] == "alpha" and result["ok"] and result["value"] == "3"
    assert "posted-1" in result["posted"]


async def test_execute_on_a_group_or_star_gives_one_result_per_room(client: Client) -> None:
    for selector in ("rooms", "*"):
        out = await call(client, "execute", instance=selector, code="s.addr.port")
        assert [r["instance"] for r in out["results"]] == ["alpha", "beta"]
        assert out["results"][0]["value"] != out["results"][1]["value"]


async def test_a_multi_line_syntax_error_names_its_line_char_and_source(client: Client) -> None:
    message = await fails(client, "execute", instance="alpha",
                          code="(\nvar x = 1;\nx = x + 2 3;\nx\n)")
    assert "alpha: parse error" in message
    assert "(line 3," in message
    assert "3 | x = x + 2 3;" in message and "^" in message


async def test_a_runtime_error_names_the_message_and_receiver(client: Client) -> None:
    message = await fails(client, "execute", instance="beta", code="nil.fooBarBaz")
    assert "beta: runtime error" in message
    assert "fooBarBaz" in message and "receiver: nil" in message


async def test_an_error_on_one_room_of_a_group_shows_the_others_results(
        client: Client) -> None:
    port = (await call(client, "status", instance="alpha"))["instances"][0]["port"]
    message = await fails(client, "execute", instance="rooms",
                          code=f"if(s.addr.port == {port}) {{ 1 }} {{ nil.nope }}")
    assert "alpha: ok -> 1" in message and "beta: runtime error" in message


async def test_unknown_room_lists_the_known_ones(client: Client) -> None:
    message = await fails(client, "execute", instance="gamma", code="1")
    assert "'gamma'" in message and "alpha, beta" in message and "rooms" in message


async def test_an_error_result_says_its_code_whether_to_retry_and_the_argument(
        client: Client) -> None:
    """What a program reads of a failed call: structured content, and [CODE] in the text."""
    cases = [
        ({"instance": "gamma", "code": "1"}, "NOT_FOUND", False, "instance"),  # no such room
        ({"instance": 5, "code": "1"}, "INVALID_ARGUMENT", False, "instance"),  # SDK's check
        ({"instance": "alpha", "code": "  "}, "INVALID_ARGUMENT", False, "code"),  # ours
        ({"instance": "beta", "code": "nil.fooBarBaz"}, "SUPERCOLLIDER_ERROR", False, None),
        ({"instance": "beta", "code": "1 +* ) ("}, "SUPERCOLLIDER_ERROR", False, None),
    ]
    for args, code, retryable, argument in cases:
        result = await client.call_tool("execute", args)
        assert result.is_error, args
        said = result.structured_content
        assert said is not None, args
        assert (said["code"], said["retryable"], said["argument"]) == (
            code, retryable, argument), (args, said)
        assert text(result).startswith(f"[{code}] ")
        assert said["message"] in text(result)  # the text for people, as it was
    status = await client.call_tool("status", {"instance": "nobody"})
    assert status.structured_content is not None
    assert status.structured_content["argument"] == "instance"


async def test_bad_arguments_say_which_and_the_server_answers_after(client: Client) -> None:
    assert "timeout_s" in await fails(client, "execute", instance="alpha", code="1",
                                      timeout_s=-1)
    assert "code is empty" in await fails(client, "execute", instance="alpha", code="  ")
    assert "code" in await fails(client, "execute", instance="alpha")
    out = await call(client, "execute", instance="alpha", code="2 * 21")
    assert out["results"][0]["value"] == "42"


async def test_code_that_runs_too_long_is_stopped_and_sclang_comes_back(client: Client) -> None:
    # a Pdef and a plain Routine play when the interpreter is stopped
    await call(client, "synthdefs", action="load", name="sine", instance="beta")
    await call(client, "execute", instance="beta", code=(
        "Pdef(\\tmo, Pbind(\\instrument, \\sine, \\dur, 0.25, \\amp, 0.001, "
        "\\legato, 0.5)).play; Routine { loop { \"tick-of-a-routine\".postln; 0.05.wait } }"
        ".play; 1"))
    assert (await call(client, "wait_for", instance="beta", pattern="tick-of-a-routine",
                       timeout_s=5))["matched"]
    message = await fails(client, "execute", instance="beta", code="loop { 1 }", timeout_s=0.5)
    assert "beta: timeout error" in message and "synths already on scsynth play on" in message
    assert "Pdef, Pbindef, Tdef and Ndef are defined again and resume on the next bar" in message
    assert "a plain Routine or Pbind.play does not come back" in message
    ready = await call(client, "wait_for", instance="beta", pattern="Welcome|ready|READY",
                       timeout_s=20)
    assert ready["matched"]
    for _ in range(50):  # sclang restarts in the background: retry until it takes code
        result = await client.call_tool("execute", {"instance": "beta", "code": "7"})
        if not result.is_error:
            break
        assert "sclang" in text(result) or "RESTARTING" in text(result), text(result)
        await call(client, "wait_for", instance="beta", pattern=".", timeout_s=0.2)
    assert result.structured_content is not None
    assert result.structured_content["results"][0]["value"] == "7"
    since = result.structured_content["results"][0]["console_since"]
    try:  # as the message says: the Pdef plays again on scsynth, from the new interpreter
        deadline = time.monotonic() + 15
        while not ((await call(client, "playing", instance="beta"))["rooms"][0]["synths"]
                   or {}).get("Pdef tmo"):
            assert time.monotonic() < deadline, ("the Pdef never came back", await call(
                client, "playing", instance="beta", detail=True), await call(
                client, "console", instance="beta", lines=40))
            await anyio.sleep(0.05)
        # ...and the Routine stays stopped: no tick in the second since sclang came back
        late = await call(client, "wait_for", instance="beta", pattern="tick-of-a-routine",
                          since=since, timeout_s=1)
        assert not late["matched"], late
    finally:
        await call(client, "execute", instance="beta", code="Pdef(\\tmo).stop; 1")


# --- console -----------------------------------------------------------------


async def test_console_shows_what_code_posted_and_clear_forgets_it(client: Client) -> None:
    await call(client, "execute", instance="alpha", code='"console-marker-41".postln')
    out = await call(client, "console", instance="alpha", lines=200)
    assert out["instance"] == "alpha"
    assert any(line["text"] == "console-marker-41" and line["source"] == "sclang"
               for line in out["lines"])
    await call(client, "console", instance="alpha", lines=0, clear=True)
    after = await call(client, "console", instance="alpha", lines=200)
    assert not any("console-marker-41" in line["text"] for line in after["lines"])


async def test_wait_for_sees_a_line_a_routine_posts_later(client: Client) -> None:
    lines = (await call(client, "console", instance="alpha", lines=1))["lines"]
    since = lines[-1]["seq"] if lines else 0
    await call(client, "execute", instance="alpha",
               code='fork { 0.2.wait; "later-marker-7".postln }')
    out = await call(client, "wait_for", instance="alpha", pattern=r"later-marker-\d",
                     timeout_s=5, since=since)
    assert out["matched"] and out["line"]["text"] == "later-marker-7"


async def test_wait_for_reports_no_match_and_refuses_a_bad_regex(client: Client) -> None:
    out = await call(client, "wait_for", instance="beta", pattern="never-printed", timeout_s=0.2)
    assert out == {"matched": False, "line": None}
    assert "regular expression" in await fails(client, "wait_for", instance="beta",
                                               pattern="(unclosed")


# --- SynthDefs and nodes -----------------------------------------------------


async def test_synthdefs_list_describe_and_load(client: Client, orchestra: Orchestra) -> None:
    listed = await call(client, "synthdefs", full=True)
    names = {d["name"] for d in listed["synthdefs"]}
    assert {"sine", "kick", "pad"} <= names or {"sine", "kick"} <= names
    sine = next(d for d in listed["synthdefs"] if d["name"] == "sine")
    freq = next(p for p in sine["params"] if p["name"] == "freq")
    assert freq["units"] == "Hz" and freq["min"] < freq["max"] and freq["description"]
    described = await call(client, "synthdefs", action="describe", name="kick")
    assert described["synthdefs"][0]["category"] == "drums"
    before = orchestra.rooms.status("beta").server.synthdefs
    loaded = await call(client, "synthdefs", action="load", name="kick", instance="beta")
    assert loaded["loaded_on"] == ["beta"] and loaded["synthdefs"][0]["name"] == "kick"
    assert orchestra.rooms.status("beta").server.synthdefs == before + 1


async def test_synthdefs_errors_say_what_is_missing(client: Client) -> None:
    assert "synthdefs action 'describe': invalid arguments:\nname: this argument is " \
        "required" in await fails(client, "synthdefs", action="describe")
    assert "synthdefs action 'load': invalid arguments:\ninstance: this argument is " \
        "required" in await fails(client, "synthdefs", action="load", name="kick")
    assert "instance: unknown argument" in await fails(client, "synthdefs",
                                                        action="describe", name="kick",
                                                        instance="beta")
    message = await fails(client, "synthdefs", action="describe", name="nope")
    assert "unknown SynthDef 'nope'" in message and "sine" in message


async def test_play_a_named_node_then_set_reaches_scsynth_and_release_forgets_it(
        client: Client, orchestra: Orchestra) -> None:
    played = await call(client, "play", instance="alpha", synthdef="sine",
                        params={"freq": 330, "amp": 0.05}, name="tone")
    assert played["node"] == "tone" and played["warnings"] == []
    node_id = played["node_id"]
    port = orchestra.rooms.status("alpha").port
    assert scsynth_param(port, node_id, "freq") == pytest.approx(330)
    changed = await call(client, "set", instance="alpha", node="tone", params={"freq": 440})
    assert changed["params"]["freq"] == 440
    assert scsynth_param(port, node_id, "freq") == pytest.approx(440)
    status = await call(client, "status", instance="alpha")
    assert status["instances"][0]["nodes"]["tone"]["params"]["freq"] == 440
    released = await call(client, "release", instance="alpha", node="tone")
    assert released["released"] is True
    assert "tone" not in orchestra.rooms.nodes("alpha")


async def test_play_and_set_refuse_what_does_not_exist(client: Client) -> None:
    message = await fails(client, "play", instance="alpha", synthdef="nope")
    assert "knows no SynthDef 'nope'" in message and "sine" in message
    message = await fails(client, "play", instance="alpha", synthdef="sine", params={"fre": 1})
    assert "'fre'" in message and "freq" in message
    assert "letter" in await fails(client, "play", instance="alpha", synthdef="sine",
                                   name="9lives")
    message = await fails(client, "set", instance="alpha", node="ghost", params={"freq": 1})
    assert "no node 'ghost'" in message
    assert "no node 'ghost'" in await fails(client, "release", instance="alpha", node="ghost")


async def test_play_warns_about_values_outside_the_spec(client: Client) -> None:
    played = await call(client, "play", instance="beta", synthdef="sine",
                        params={"amp": 0.01, "freq": 99999}, name="far")
    assert any(w.startswith("freq=99999 is outside") for w in played["warnings"])
    await call(client, "release", instance="beta", node="far")


async def test_stop_silences_and_forgets_named_nodes(client: Client,
                                                     orchestra: Orchestra) -> None:
    await call(client, "play", instance="beta", synthdef="sine", params={"amp": 0.01},
               name="hum")
    out = await call(client, "stop", instance="beta")
    assert list(out["stopped"]) == ["beta"] and out["stopped"]["beta"]["nodes"] == ["hum"]
    assert out["stopped"]["beta"]["synths"] >= 1
    assert orchestra.rooms.nodes("beta") == {}


# --- lifecycle ---------------------------------------------------------------


async def test_instance_quit_then_boot_and_calls_in_between_say_the_state(
        client: Client) -> None:
    out = await call(client, "instance", name="beta", action="quit")
    assert out["instances"][0]["state"] == "STOPPED"
    message = await fails(client, "execute", instance="beta", code="1")
    assert "beta" in message and "STOPPED" in message
    out = await call(client, "instance", name="beta", action="boot")
    assert out["instances"][0]["state"] == "READY"
    assert "action" in await fails(client, "instance", name="beta", action="explode")
    assert "'nobody'" in await fails(client, "instance", name="nobody", action="boot")


async def test_restart_is_recorded_in_events(client: Client) -> None:
    before = await call(client, "events", instance="alpha")
    since = max((e["seq"] for e in before["events"]), default=0)
    out = await call(client, "instance", name="alpha", action="restart")
    assert out["instances"][0]["state"] == "READY"
    events = (await call(client, "events", instance="alpha", since=since))["events"]
    kinds = [e["kind"] for e in events]
    assert "STOPPED" in kinds and kinds[-1] in ("READY", "RESTORED"), kinds
    assert all(e["instance"] == "alpha" for e in events)


async def test_midi_lists_ports_maps_unmaps_and_explains_bad_routes(client: Client) -> None:
    ports = (await call(client, "midi", action="ports"))["result"]
    assert ports["backend"] == "jack" and "scorch" in ports["inputs"]
    spec = {"port": "nanoKONTROL", "cc": 74, "instance": "rooms", "node": "pad",
            "param": "cutoff", "range": [200, 4000], "curve": "exp", "takeover": "pickup"}
    added = (await call(client, "midi", action="map", spec=spec))["result"]
    routes = (await call(client, "midi", action="routes"))["result"]
    assert [r["route"]["cc"] for r in routes if r["id"] == added["id"]] == [74]
    await call(client, "midi", action="unmap", route_id=added["id"])
    routes = (await call(client, "midi", action="routes"))["result"]
    assert added["id"] not in [r["id"] for r in routes]
    bad = await fails(client, "midi", action="map", spec={**spec, "cc": 300})
    assert "cc" in bad and "127" in bad
    unknown = await fails(client, "midi", action="map", spec={**spec, "instance": "attic"})
    assert "alpha, beta" in unknown
    assert "no run-time MIDI route" in await fails(client, "midi", action="unmap",
                                                   route_id="nope")
    assert "midi action 'map': invalid arguments:\nspec: this argument is required" in \
        await fails(client, "midi", action="map")


async def test_a_service_without_an_orchestra_explains_why_on_every_call() -> None:
    service = LocalService()
    service.unavailable = "scorch could not start: jackd exited"
    async with Client(build_server(service)) as session:
        for tool, args in (("list_instances", {}), ("status", {"instance": "*"})):
            assert "jackd exited" in await fails(session, tool, **args)


# --- memory: buffers, sessions, scenes ---------------------------------------


async def test_session_scene_and_buffer_tools_through_mcp(client: Client,
                                                          orchestra: Orchestra) -> None:
    await call(client, "play", instance="beta", synthdef="sine", node="memo",
               params={"freq": 330, "amp": 0.01})
    try:
        saved = await call(client, "session", action="save", name="mcp")
        assert saved["path"].endswith("sessions/mcp.toml")
        await call(client, "set", instance="beta", node="memo", params={"freq": 660})
        shown = await call(client, "session", action="diff", name="mcp")
        assert [c["detail"] for c in shown["changes"]] == ["set memo: freq 660 -> 330"]
        await call(client, "scene", action="save", name="low", instance="beta")
        await call(client, "set", instance="beta", node="memo", params={"freq": 1320})
        half = await call(client, "scene", action="morph", name="low", position=0.5)
        assert half["values"]["beta"]["memo"]["freq"] == pytest.approx(660 * 2**0.5)
        node_id = orchestra.rooms.nodes("beta")["memo"].node_id
        assert scsynth_param(orchestra.views["beta"].snapshot.port or 0, node_id,
                             "freq") == pytest.approx(660 * 2**0.5, rel=1e-6)
        loaded = await call(client, "session", action="load", name="mcp")
        assert [c["error"] for c in loaded["changes"]] == [None]
        assert (await call(client, "buffer", action="list"))["buffers"] == []
        assert "no session 'nope'" in await fails(client, "session", action="load",
                                                  name="nope")
        assert "a scene name must be" in await fails(client, "scene", action="recall",
                                                     name="no way")
        assert "no [samples] paths" in await fails(client, "buffer", action="search",
                                                   query="kick")
    finally:
        await call(client, "release", instance="beta", node="memo")
        await call(client, "session", action="delete", name="mcp")
        await call(client, "scene", action="delete", name="low")

