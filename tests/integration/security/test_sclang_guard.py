"""sclang's ways out of SuperCollider, closed to code that comes through scorch (issue 37).

Two installations, each one room, through a real MCP client: one as installed
(``[security] sclang_shell = false``), one that allows the shell. Each way out (a
shell command, a file written outside the allowed folders, a /b_write to scsynth, the
class library's paths changed) is tried through ``execute``, ``pattern define``,
``snippet run`` and ``history rerun``, at once and from what the code leaves running
(a deferred function, a routine, a pattern's Pfunc). Each would create its own marker
file: guarded, each call is refused with an sclang error naming the config key, and no
marker ever appears on disk; allowed, the same call works and its marker appears.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import jack_name

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

#: Each way out: code that creates the file MARKER (a string literal) when it gets out.
VECTORS: dict[str, str] = {
    "unixCmd": '("touch " ++ MARKER.shellQuote).unixCmd',
    "systemCmd": '("touch " ++ MARKER.shellQuote).systemCmd',
    "unixCmdGetStdOut": '("touch " ++ MARKER.shellQuote).unixCmdGetStdOut',
    "argv unixCmd": '["touch", MARKER].unixCmd',
    "perform(unixCmd)": '("touch " ++ MARKER.shellQuote).perform(\\unixCmd)',
    "prUnixCmd (private)": '("touch " ++ MARKER.shellQuote).prUnixCmd',
    "Pipe.new": 'Pipe.new("touch " ++ MARKER.shellQuote, "r").close',
    "Pipe.callSync": 'Pipe.callSync("touch " ++ MARKER.shellQuote)',
    "File write": 'File(MARKER, "w").close',
    "File.use append": 'File.use(MARKER, "a", { |f| f.write("x") })',
    "File.mkdir": "File.mkdir(MARKER)",
    "File.copy": 'File.copy("/etc/hostname", MARKER)',
    "SoundFile.openWrite": "SoundFile.openWrite(MARKER).close",
    "writeArchive": "[1, 2].writeArchive(MARKER)",
    "LanguageConfig.store": "LanguageConfig.store(MARKER)",
    "b_write in a completion message": (
        's.sendMsg(\\b_alloc, 990, 64, 1, [\\b_write, 990, MARKER, "wav", "float"])'),
    "Buffer.write": 'Buffer.alloc(s, 64, 1, { |b| b.writeMsg(MARKER, "wav", "float") })',
    "deferred": '{ ("touch " ++ MARKER.shellQuote).unixCmd }.defer(0.05)',
    "routine": 'fork { 0.05.wait; File(MARKER, "w").close }',
}
#: Refused when what the call left running runs, after the call returned.
LATER = {"deferred", "routine"}
#: Ways out that leave no file: the class library's paths changed (MARKER: a folder).
CHANGES: dict[str, str] = {
    "Platform.recordingsDir_": "thisProcess.platform.recordingsDir_(MARKER); "
                               "thisProcess.platform.recordingsDir == MARKER",
    "LanguageConfig.addIncludePath": "LanguageConfig.addIncludePath(MARKER); "
                                     "LanguageConfig.includePaths.includesEqual(MARKER)",
}
FRONTS = ("execute", "pattern", "snippet", "history")


def code(vector: str, marker: Path) -> str:
    """The vector's code, writing ``marker``; its value 1 when it ran."""
    return VECTORS[vector].replace("MARKER", f'"{marker}"') + "; 1"


@dataclass
class Room:
    orchestra: Orchestra
    markers: Path
    escapes_allowed: bool


def start(tmp_path_factory: pytest.TempPathFactory, escapes_allowed: bool) -> Iterator[Room]:
    folder = tmp_path_factory.mktemp("guard-open" if escapes_allowed else "guard")
    markers = folder / "markers"  # outside every folder the installation allows
    markers.mkdir()
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack_name("guard-open" if escapes_allowed else "guard")}"\n'
            '[docs]\nbuild = "on-demand"\n[midi]\nenabled = false\n'
            f"[security]\nsclang_shell = {'true' if escapes_allowed else 'false'}\n"
            "[instances.room]\n")
    orch = Orchestra(parse_config(text, folder / "config.toml"), SynthDefLibrary())
    try:
        assert orch.start() == {"room": None}
        yield Room(orch, markers, escapes_allowed)
    finally:
        orch.stop()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    yield from start(tmp_path_factory, escapes_allowed=False)


@pytest.fixture(scope="module")
def allowed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    yield from start(tmp_path_factory, escapes_allowed=True)


async def run(client: Client, room: Room, front: str, index: int, vector: str,
              marker: Path) -> tuple[bool, str]:
    """Run the vector through ``front``; (whether it was an error, its text)."""
    source = code(vector, marker)
    if front == "execute":
        result = await client.call_tool("execute", {"instance": "room", "code": source})
    elif front == "pattern":
        result = await client.call_tool("pattern", {
            "action": "define", "instance": "room", "kind": "Pdef", "name": f"guard{index}",
            "source": f"({source}; Pbind(\\dur, 1, \\amp, 0))", "at": "now", "play": False})
    elif front == "snippet":
        saved = await client.call_tool("snippet", {"action": "save", "name": f"guard-{index}",
                                                   "code": source, "replace": True})
        assert not saved.is_error, saved.content
        result = await client.call_tool("snippet", {"action": "run", "name": f"guard-{index}",
                                                    "instance": "room"})
    else:
        await client.call_tool("execute", {"instance": "room", "code": source})
        if room.escapes_allowed:  # it got out: its marker goes, so the re-run must make it again
            assert wait_for([marker], 10.0) == [marker], vector
            marker.rmdir() if marker.is_dir() else marker.unlink()
        entries: list[dict[str, object]] = []
        for _ in range(100):  # the history keeps it once the call returned
            found = await client.call_tool("history", {"action": "find",
                                                       "query": marker.name})
            entries = (found.structured_content or {}).get("entries", [])
            if entries:
                break
            time.sleep(0.05)
        assert entries, (vector, found.content)
        result = await client.call_tool("history", {"action": "rerun",
                                                    "id": entries[0]["id"]})
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text


def calls() -> list[tuple[str, str, int]]:
    """(front end, vector, a number of its own) for every call made."""
    return [(front, vector, i * 100 + j) for i, front in enumerate(FRONTS)
            for j, vector in enumerate(VECTORS)]


def marker_of(room: Room, index: int) -> Path:
    """A call's marker: a word of its own, for the history's search."""
    return room.markers / f"marker{index}x"


def wait_for(paths: list[Path], seconds: float) -> list[Path]:
    """The paths that exist after at most ``seconds`` (all of them, as soon as they do)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(p.exists() for p in paths):
        time.sleep(0.05)
    return [p for p in paths if p.exists()]


@pytest.fixture
async def guarded_client(guarded: Room) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(guarded.orchestra))) as session:
        yield session


@pytest.fixture
async def allowed_client(allowed: Room) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(allowed.orchestra))) as session:
        yield session


async def test_every_way_out_is_refused_through_every_front_end_and_no_marker_appears(
        guarded: Room, guarded_client: Client) -> None:
    wrong = []
    for front, vector, index in calls():
        is_error, text = await run(guarded_client, guarded, front, index, vector,
                                   marker_of(guarded, index))
        later = vector in LATER  # refused when it runs, after the call
        if later == is_error or (not later and not (
                "scorch refused" in text and "sclang_shell = true" in text)):
            wrong.append(f"{front} {vector}: error={is_error} {text[:300]!r}")
    assert not wrong, "\n".join(wrong)
    time.sleep(1.0)  # what the calls left running has run
    assert sorted(p.name for p in guarded.markers.iterdir()) == []
    console = "\n".join(line.text for line in guarded.orchestra.rooms.console("room", 5000))
    # the deferred and routine ones were refused when they ran (history's twice: the
    # execute it re-ran, then the re-run)
    assert console.count("WARNING: scorch refused") >= len(LATER) * (len(FRONTS) + 1)
    assert guarded.orchestra.rooms.status("room").state == "READY"


async def test_a_pattern_that_gets_out_as_it_plays_is_refused_each_time_and_plays_on(
        guarded: Room, guarded_client: Client) -> None:
    marker = guarded.markers / "pfunc"
    since = guarded.orchestra.rooms.console("room", 1)[-1].seq
    source = (f'Pbind(\\dur, 0.05, \\amp, 0, \\x, Pfunc {{ ("touch " ++ "{marker}".shellQuote)'
              ".unixCmd; 1 })")
    defined = await guarded_client.call_tool("pattern", {
        "action": "define", "instance": "room", "kind": "Pdef", "name": "guard999",
        "source": source, "at": "now", "play": False})
    assert not defined.is_error, defined.content
    assert await guarded_client.call_tool("pattern", {"action": "play", "instance": "room",
                                                      "name": "guard999", "at": "now"})
    time.sleep(0.5)
    await guarded_client.call_tool("pattern", {"action": "stop", "instance": "room",
                                               "name": "guard999", "at": "now"})
    assert not marker.exists()
    refusals = [line for line in guarded.orchestra.rooms.console("room", since=since)
                if "scorch refused String:unixCmd" in line.text]
    assert refusals


async def test_the_class_librarys_paths_do_not_change(guarded: Room,
                                                      guarded_client: Client) -> None:
    for name, body in CHANGES.items():
        result = await guarded_client.call_tool("execute", {
            "instance": "room", "code": body.replace("MARKER", f'"{guarded.markers}"')})
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        assert result.is_error and "scorch refused" in text and "changes a path" in text, name
    result = await guarded_client.call_tool("execute", {
        "instance": "room", "code": '"true".runInTerminal'})
    assert result.is_error and "scorch refused String:runInTerminal" in str(result.content)


async def test_writes_inside_the_allowed_folders_still_work(guarded: Room,
                                                             guarded_client: Client) -> None:
    midi = guarded.orchestra.config.state_path() / "midi"
    midi.mkdir(parents=True, exist_ok=True)
    made = midi / "from-sclang.txt"
    result = await guarded_client.call_tool("execute", {
        "instance": "room", "code": f'File.use("{made}", "w", {{ |f| f.write("ok") }}); 1'})
    assert not result.is_error, result.content
    assert made.read_text() == "ok"
    link = midi / "out-link"
    link.symlink_to(guarded.markers)  # a link out of an allowed folder is no way out
    result = await guarded_client.call_tool("execute", {
        "instance": "room", "code": f'File("{link}/via-link", "w").close; 1'})
    assert result.is_error and not (guarded.markers / "via-link").exists()


async def test_with_sclang_shell_the_same_calls_get_out(allowed: Room,
                                                        allowed_client: Client) -> None:
    wrong, expected = [], []
    for front, vector, index in calls():
        marker = marker_of(allowed, index)
        is_error, text = await run(allowed_client, allowed, front, index, vector, marker)
        if is_error:
            wrong.append(f"{front} {vector}: {text[:300]!r}")
        expected.append(marker)
    assert not wrong, "\n".join(wrong)
    appeared = wait_for(expected, 10.0)
    assert sorted(map(str, set(expected) - set(appeared))) == []
    for name, body in CHANGES.items():
        result = await allowed_client.call_tool("execute", {
            "instance": "room", "code": body.replace("MARKER", f'"{allowed.markers}"')})
        assert not result.is_error and (result.structured_content or {}).get(
            "results", [{}])[0].get("value") == "true", (name, result.content)
