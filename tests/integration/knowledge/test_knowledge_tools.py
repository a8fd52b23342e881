"""docs, history and snippet through an in-memory MCP client, against real rooms.

One two-room orchestra for the module, with a fresh cache folder (so the docs
index is built here, in the background, from the installed help and a headless
sclang) and its own ``XDG_DATA_HOME`` (so a class file can be added to the user
extension folder without touching anyone else's sclang).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.errors import HistoryUnavailable
from scorch.knowledge.snippets import BUILTIN_DIR, SnippetStore
from scorch.primitives.system.process import pid_alive
from tests.conftest import MakeConfig, jack_name
from tests.support.mcp.calls import call, fails

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

BUILTINS = sorted(p.stem for p in BUILTIN_DIR.glob("*.scd"))

# A class file in the user extension folder: what "a class defined at runtime" is in
# sclang (classes exist only once a library compile has read their file).
PROBE_CLASS = """
ScorchProbe {
    *make { |level = 0.25, shape = \\sine| ^this.new }
    wobble { |rate = 3, depth = 0.5| ^rate * depth }
}
"""

# A meter at the tail of the server: the loudest sample on buses 0-1, kept in sclang.
METER = r"""
SynthDef(\knowledgeMeter, { SendPeakRMS.kr(In.ar(0, 2), 20, 3, '/knowledgeMeter') }).add;
OSCdef(\knowledgeMeter, { |msg| ~knowledgePeak = max(~knowledgePeak ? 0, max(msg[3], msg[5])) },
    '/knowledgeMeter').permanent_(true);
fork { s.sync; ~knowledgePeak = 0; Synth.tail(RootNode(s), \knowledgeMeter) };
"""
#: Seconds a test waits for a docs build (about 3 s on an idle machine).
BUILD_WAIT = 120.0
#: A MIDI note simulated without hardware, for the MIDI responder.
MIDI_NOTE_ON = "MIDIIn.doNoteOnAction(1, 0, 60, 100);"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private XDG_DATA_HOME for the rooms and the docs builder of this module.

    And a private XDG_CACHE_HOME: the docs index, shared by the installations of
    the machine, is built here from nothing.
    """
    home = tmp_path_factory.mktemp("xdg-data")
    (home / "SuperCollider" / "Extensions").mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(home))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield home


@pytest.fixture(scope="module")
def orchestra(tmp_path_factory: pytest.TempPathFactory, data_home: Path) -> Iterator[Orchestra]:
    state = tmp_path_factory.mktemp("knowledge-tools") / "state"
    config = parse_config(f"""
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{jack_name("knowledge")}"
[instances.alpha]
group = "rooms"
[instances.beta]
group = "rooms"
[docs]
build = "background"
""", state.parent / "config.toml")
    orch = Orchestra(config)
    try:
        assert orch.start() == {"alpha": None, "beta": None}
        yield orch
    finally:
        builder = orch.knowledge.status()["builder_pid"]
        orch.stop()
        assert builder is None or not pid_alive(builder)


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session


# --- docs --------------------------------------------------------------------------


async def test_the_index_is_built_in_the_background_once_the_rooms_are_ready(
        client: Client, orchestra: Orchestra) -> None:
    status = orchestra.knowledge.status()
    # A fresh cache folder: the first build is under way, started after start-up.
    assert status["building"], status
    rooms = [v.snapshot for v in orchestra.views.values()]
    assert all(r.state == "READY" and r.booted_at is not None for r in rooms)
    assert status["building_since"] >= max(r.booted_at or 0 for r in rooms)
    # The rooms answer meanwhile: the build asks none of their interpreters.
    [done] = (await call(client, "execute", instance="alpha", code="6 * 7"))["results"]
    assert done["ok"] and done["value"] == "42"
    assert orchestra.knowledge.status()["building"]
    busy = await fails(client, "docs", name="SinOsc", timeout_s=0.01)
    assert "being built" in busy and "ask again" in busy

    # Waits for the build (niced: on a busy machine it may take a while).
    out = await call(client, "docs", name="SinOsc", timeout_s=BUILD_WAIT)

    assert out["doc"]["name"] == "SinOsc"
    assert not orchestra.knowledge.status()["building"]


async def test_docs_name_sinosc_gives_argument_names_defaults_and_the_rest(
        client: Client) -> None:
    out = await call(client, "docs", name="SinOsc")

    doc = out["doc"]
    [ar] = [m for m in doc["class_methods"] if m["name"] == "ar"]
    assert ar["signature"] == "ar(freq: 440, phase: 0, mul: 1, add: 0)"
    assert [(a["name"], a["default"]) for a in ar["args"][:2]] == [("freq", "440"),
                                                                  ("phase", "0")]
    assert "Frequency in Hertz" in ar["args"][0]["doc"]
    assert doc["summary"] and doc["is_ugen"] and doc["has_help"] and doc["in_library"]
    assert doc["superclasses"][-1] == "Object" and "UGen" in doc["superclasses"]
    assert doc["examples"] and "SinOsc.ar" in doc["examples"][0]
    assert "Classes/FSinOsc" in doc["related"]
    assert out["version"].startswith("3.") and out["note"] is None


async def test_docs_name_with_a_method_gives_that_method_only(client: Client) -> None:
    doc = (await call(client, "docs", name="Pbind.new"))["doc"]

    assert [m["signature"] for m in doc["class_methods"]] == ["new(... pairs)"]
    assert doc["instance_methods"] == []


async def test_docs_query_reverb_finds_freeverb_or_gverb(client: Client) -> None:
    out = await call(client, "docs", query="reverb")

    names = [hit["name"] for hit in out["results"][:5]]
    assert {"FreeVerb", "GVerb"} & set(names), names
    assert all(hit["summary"] and "\n" not in hit["summary"] for hit in out["results"])
    assert out["doc"] is None


async def test_a_query_that_is_a_class_name_also_gives_its_doc(client: Client) -> None:
    out = await call(client, "docs", query="LFSaw")

    assert out["doc"]["name"] == "LFSaw"
    assert out["results"][0]["name"] == "LFSaw"


@pytest.mark.parametrize("query", [
    "AND", '"', "*", "NEAR(a b)", "(", "OR NOT", "col:x", ";DROP TABLE docs;--", "é", "日本語",
    "\"unterminated", "x" * 10_000, "reverb " * 40, "SinOsc.ar(440) * 0.1"])
async def test_hostile_and_odd_queries_give_results_or_an_empty_list(
        client: Client, query: str) -> None:
    out = await call(client, "docs", query=query)

    assert isinstance(out["results"], list)


async def test_odd_queries_say_what_was_searched(client: Client) -> None:
    punctuation = await call(client, "docs", query="*** ???")
    assert punctuation["results"] == [] and "no letters or digits" in punctuation["note"]
    many = await call(client, "docs", query=" ".join(f"word{i}" for i in range(40)))
    assert "only the first 16" in many["note"]
    assert "empty" in await fails(client, "docs", query="   ")
    assert "missing" in await fails(client, "docs")
    assert "at most 10000 characters" in await fails(client, "docs", query="x" * 10_001)
    assert "not both" in await fails(client, "docs", name="SinOsc", query="sine")


async def test_an_unknown_name_suggests_the_closest_ones(client: Client) -> None:
    assert "closest: SinOsc" in await fails(client, "docs", name="SinOssc")
    assert "did you mean 'ar'?" in await fails(client, "docs", name="SinOsc.arr")
    assert "search with query" in await fails(client, "docs", name="'; DROP TABLE docs")
    typo = await call(client, "docs", query="Pbindd")
    assert typo["results"] == [] and "Pbind" in typo["suggestions"]


async def test_a_class_added_to_the_extension_folder_appears(
        client: Client, orchestra: Orchestra, data_home: Path) -> None:
    assert "no class or help page named 'ScorchProbe'" in await fails(
        client, "docs", name="ScorchProbe")
    probe = data_home / "SuperCollider" / "Extensions" / "ScorchProbe.sc"
    probe.write_text(PROBE_CLASS)

    # The next lookup of an unknown name sees that the library's files changed, rebuilds
    # from a fresh headless sclang, and finds it; rooms see it after their next compile.
    doc = (await call(client, "docs", name="ScorchProbe", timeout_s=BUILD_WAIT))["doc"]

    assert doc["file"] == str(probe) and doc["in_library"] and not doc["has_help"]
    assert [m["signature"] for m in doc["class_methods"]] == ["make(level: 0.25, "
                                                              "shape: 'sine')"]
    assert [m["signature"] for m in doc["instance_methods"]] == ["wobble(rate: 3, depth: 0.5)"]
    assert "ScorchProbe" in [h["name"] for h in (await call(
        client, "docs", query="ScorchProbe"))["results"]]


async def test_without_helpsource_the_runtime_classes_answer_and_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = parse_config(f"""
state_dir = "{tmp_path / 'state'}"
[instances.alone]
[docs]
build = "on-demand"
help_dir = "{tmp_path / 'no-help-here'}"
""", tmp_path / "config.toml")
    orch = Orchestra(config)  # no room needed: docs use a headless sclang
    orch.knowledge.start()
    try:
        async with Client(build_server(LocalService(orch))) as session:
            out = await call(session, "docs", name="SinOsc", timeout_s=BUILD_WAIT)
    finally:
        orch.knowledge.stop()

    assert "runtime classes only" in out["note"] and "no-help-here" in out["note"]
    [ar] = [m for m in out["doc"]["class_methods"] if m["name"] == "ar"]
    assert ar["signature"] == "ar(freq: 440, phase: 0, mul: 1, add: 0)"
    assert not out["doc"]["has_help"]


# --- history -----------------------------------------------------------------------


async def test_history_finds_code_just_executed_with_its_output(client: Client) -> None:
    before = time.time()
    await call(client, "execute", instance="alpha", code='"k13-marker-one".postln; 6 * 7')

    [entry] = (await call(client, "history", query="k13-marker-one"))["entries"]

    assert entry["instance"] == "alpha" and entry["ok"] and entry["value"] == "42"
    assert "k13-marker-one" in entry["posted"] and entry["error"] is None
    assert before <= entry["time"] <= time.time() and entry["duration_ms"] >= 0


async def test_history_filters_by_room_errors_and_time(client: Client) -> None:
    await call(client, "execute", instance="rooms", code="'k13-both'.postln")
    assert "nil" in await fails(client, "execute", instance="beta", code="nil.k13Boom")

    both = await call(client, "history", query="k13-both")
    assert sorted(e["instance"] for e in both["entries"]) == ["alpha", "beta"]
    only = await call(client, "history", query="k13-both", instance="beta")
    assert [e["instance"] for e in only["entries"]] == ["beta"]
    [failed] = (await call(client, "history", errors_only=True, query="k13Boom"))["entries"]
    assert not failed["ok"] and "k13Boom" in failed["error"]
    assert (await call(client, "history", query="k13-both", since="1m"))["entries"]
    assert not (await call(client, "history", query="k13-both",
                           since=time.time() + 60))["entries"]
    assert "known rooms" in await fails(client, "history", instance="nobody")
    assert "time ago" in await fails(client, "history", since="yesterday-ish")


async def test_history_survives_a_restart(make_config: MakeConfig,
                                          start_orchestra: Callable[[Config], Orchestra],
                                          ) -> None:
    # No MIDI: two orchestras of one process opening JACK MIDI ports at once can hang
    # in python-rtmidi (the module's orchestra runs beside this one).
    config = make_config("[instances.solo]\n", extra="[midi]\nenabled = false\n",
                         tag="k-restart")
    first = start_orchestra(config)
    async with Client(build_server(LocalService(first))) as session:
        await call(session, "execute", instance="solo", code="'k13-before-restart'.postln")
    first.stop()

    second = start_orchestra(config)
    async with Client(build_server(LocalService(second))) as session:
        found = await call(session, "history", query="k13-before-restart")

    assert [e["instance"] for e in found["entries"]] == ["solo"]


async def test_execute_goes_on_when_the_history_cannot_be_written(
        make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra],
        caplog: pytest.LogCaptureFixture) -> None:
    orch = start_orchestra(make_config("[instances.solo]\n", extra="[midi]\nenabled = false\n",
                                       tag="k-broken"))
    with sqlite3.connect(orch.knowledge.history_path) as other:
        other.execute("DROP TABLE entries")  # someone else broke the file under scorch

    async with Client(build_server(LocalService(orch))) as session:
        [done] = (await call(session, "execute", instance="solo", code="6 * 7"))["results"]

    assert done["ok"] and done["value"] == "42"
    assert "not kept in the history" in caplog.text


def test_a_history_that_cannot_be_opened_is_reported_not_fatal(tmp_path: Path) -> None:
    config = parse_config(f'state_dir = "{tmp_path}"\n[instances.a]\n[docs]\n'
                          'build = "on-demand"\n', tmp_path / "c.toml")
    (tmp_path / "history.sqlite").mkdir()  # not a database at all
    knowledge = Orchestra(config).knowledge
    knowledge.start()
    try:
        knowledge.record(time.time(), "a", "1", "1", "", None, 1.0)  # no error: skipped
        with pytest.raises(HistoryUnavailable, match=r"cannot be opened.*move it aside"):
            knowledge.history()
    finally:
        knowledge.stop()


# --- snippets ----------------------------------------------------------------------


async def test_snippets_list_show_save_run_and_delete(client: Client) -> None:
    listed = await call(client, "snippet", action="list")
    assert {s["name"] for s in listed["snippets"]} >= set(BUILTINS)
    assert all(s["builtin"] and s["code"] is None for s in listed["snippets"])
    drones = await call(client, "snippet", action="list", tags=["drone"])
    assert [s["name"] for s in drones["snippets"]] == ["lfo-drone"]
    shown = (await call(client, "snippet", action="show", name="lfo-drone"))["snippet"]
    assert "SynthDef" in shown["code"] and shown["stop"] == "~drone.release;"

    saved = await call(client, "snippet", action="save", name="k13-answer",
                       code="'k13-snippet-ran'.postln; 6 * 7", description="The answer",
                       tags=["Test"])
    assert saved["snippet"]["tags"] == ["test"] and not saved["snippet"]["builtin"]
    assert "replace = true" in await fails(client, "snippet", action="save",
                                           name="k13-answer", code="1")
    ran = await call(client, "snippet", action="run", name="k13-answer", instance="alpha")
    assert ran["results"][0]["value"] == "42"
    assert (await call(client, "history", query="k13-snippet-ran"))["entries"]
    await call(client, "snippet", action="delete", name="k13-answer")
    assert "no snippet named 'k13-answer'" in await fails(client, "snippet", action="show",
                                                          name="k13-answer")


async def test_snippet_errors_say_what_is_wrong(client: Client) -> None:
    assert "read-only" in await fails(client, "snippet", action="delete", name="pbind-melody")
    assert "read-only" in await fails(client, "snippet", action="save", name="pbind-melody",
                                      code="1", replace=True)
    assert "snippet action 'run': invalid arguments:\ninstance: this argument is " \
        "required" in await fails(client, "snippet", action="run", name="pbind-melody")
    assert "lower-case letters" in await fails(client, "snippet", action="show",
                                               name="Not A Name")
    assert "known: buffer-player" in await fails(client, "snippet", action="show",
                                                 name="pbind-melodie")


async def value_of(client: Client, code: str) -> str:
    [result] = (await call(client, "execute", instance="alpha", code=code))["results"]
    return str(result["value"])


async def synths(client: Client) -> int:
    status = await call(client, "status", instance="alpha")
    return int(status["instances"][0]["server"]["synths"])


async def until(check: Callable[[], Any], timeout: float) -> bool:
    """Poll an async ``check`` every 50 ms until it is true or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await anyio.sleep(0.05)  # the poll interval of a deadline, not a wait for readiness
    return False


@pytest.mark.parametrize("name", BUILTINS)
async def test_starter_snippet_plays_on_a_real_room_without_error(
        client: Client, orchestra: Orchestra, name: str) -> None:
    snippet = SnippetStore(Path("/nonexistent")).show(name)
    await call(client, "stop", instance="alpha")
    await call(client, "execute", instance="alpha", code=METER)
    assert await until(lambda: _at_least(client, 1), 5), "the meter did not start"
    mark = orchestra.rooms.view("alpha").console.mark()

    ran = await call(client, "snippet", action="run", name=name, instance="alpha")
    if name == "midi-responder":
        await call(client, "execute", instance="alpha", code=MIDI_NOTE_ON)

    assert ran["results"][0]["ok"]
    assert await until(lambda: _at_least(client, 2), 5), "it started no synth"
    assert await until(lambda: _peak_above(client, 0.01), 5), "nothing on the output bus"
    await call(client, "stop", instance="alpha")
    assert await until(lambda: _at_most(client, 0), 5), "synths left after stop"
    errors = [line.text for line in orchestra.rooms.view("alpha").console.since(mark)
              if "ERROR" in line.text or "FAILURE" in line.text]
    assert errors == []
    # Recorded like any execute (the meter's polls came after it).
    recent = (await call(client, "history", instance="alpha", limit=100))["entries"]
    assert snippet.code in [e["code"] for e in recent]


async def _at_least(client: Client, count: int) -> bool:
    return await synths(client) >= count


async def _at_most(client: Client, count: int) -> bool:
    return await synths(client) <= count


async def _peak_above(client: Client, level: float) -> bool:
    return float(await value_of(client, "~knowledgePeak ? 0")) > level
