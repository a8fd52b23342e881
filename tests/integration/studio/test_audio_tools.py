"""record, listen and render through a real MCP client, against real scsynth and real files.

One orchestra of three rooms for the module: ``live`` plays what each test
asks (and is silenced after it), ``quiet`` never plays, ``doomed`` has its
scsynth killed mid-recording.
"""

from __future__ import annotations

import base64
import itertools
import os
import signal
import struct
import subprocess
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import soundfile
from mcp import Client
from mcp.types import CallToolResult, ImageContent, TextContent

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.app.studio.capture import Source
from scorch.app.studio.recorder import Recorder
from scorch.audio.recording_file import probe
from scorch.config.installation import parse_config
from scorch.errors import CaptureError
from scorch.primitives.system.process import pid_alive
from tests.conftest import jack_name, scsynth_param
from tests.support.harness import wait_for
from tests.support.skips import missing

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

#: A pure sine from the library: no vibrato, no drive.
PURE = {"vibDepth": 0.0, "drive": 1.0}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orchestra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    folder = tmp_path_factory.mktemp("audio-tools")
    text = textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name('audio')}"
        [midi]
        enabled = false
        [watchdog]
        backoff_min = 0.05
        [instances.live]
        synthdefs = ["sine", "kick"]
        safety = {{ enabled = false }}  # its clipping is heard: no stage holds it at -1 dBFS
        [instances.quiet]
        [instances.doomed]
        """)
    orch = Orchestra(parse_config(text, folder / "config.toml"))
    try:
        assert orch.start() == {"live": None, "quiet": None, "doomed": None}
        yield orch
    finally:
        pids = [pid for pid in orch.rooms.pids().values() if pid]
        orch.stop()
        assert not [pid for pid in pids if pid_alive(pid)]


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session
        await session.call_tool("stop", {"instance": "live"})


async def call(client: Client, tool: str, **args: Any) -> CallToolResult:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result


async def fails(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return text(result)


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def png_size(result: CallToolResult) -> tuple[int, int]:
    """The one image's width and height, read from its PNG header."""
    [image] = [block for block in result.content if isinstance(block, ImageContent)]
    assert image.mime_type == "image/png"
    data = base64.b64decode(image.data)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


# --- listen ------------------------------------------------------------------------


async def test_the_tools_are_listed_with_output_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in ("record", "listen", "render"):
        assert tools[name].output_schema is not None, name
    listen_schema = tools["listen"].output_schema or {}
    for key in ("peak_dbfs", "rms_dbfs", "lufs", "clipped_samples", "silent", "centroid_hz",
                "fundamental_hz", "note", "cents", "partials", "onsets", "stereo_correlation",
                "summary", "picture"):
        assert key in listen_schema["properties"], key
    assert tools["listen"].annotations.read_only_hint is True  # type: ignore[union-attr]


async def test_a_440_hz_sine_is_heard_as_a4_with_a_chat_sized_picture(client: Client) -> None:
    await call(client, "play", instance="live", synthdef="sine", node="tone",
               params={"freq": 440.0, "amp": 0.3, **PURE})
    result = await call(client, "listen", instance="live", seconds=1.0)
    heard = result.structured_content or {}
    assert heard["fundamental_hz"] == pytest.approx(440.0, abs=0.5)
    assert (heard["note"], heard["cents"]) == ("A4", 0)
    assert heard["silent"] is False and heard["clipping"] is False
    assert heard["partials"][0]["note"] == "A4"
    assert "440.0 Hz (A4 +0 cents)" in text(result)
    assert png_size(result) == (1000, 600)
    assert Path(heard["picture"]).is_file() and Path(heard["audio"]).is_file()


async def test_a_silent_room_is_heard_as_silent(client: Client) -> None:
    result = await call(client, "listen", instance="quiet", seconds=0.5)
    heard = result.structured_content or {}
    assert heard["silent"] is True and heard["fundamental_hz"] is None
    assert heard["seconds"] == pytest.approx(0.5, abs=0.002)
    assert text(result).startswith("Silence")


async def test_a_clipped_signal_is_heard_as_clipping(client: Client) -> None:
    # Two full-scale sines add up to nearly twice full scale: at unrelated frequencies
    # their peaks meet many times a second, whatever their phases.
    for name, freq in (("one", 220.0), ("two", 277.0)):
        await call(client, "play", instance="live", synthdef="sine", node=name,
                   params={"freq": freq, "amp": 1.0, "pan": -1.0, **PURE})
    result = await call(client, "listen", instance="live", seconds=0.5)
    heard = result.structured_content or {}
    assert heard["clipping"] is True and heard["clipped_samples"] > 1000
    assert heard["peak_dbfs"] > 2.0  # beyond full scale: a float file keeps the overs
    assert "CLIPPING" in text(result)


#: Four kicks half a second apart, timed by scsynth's own sample count (an impulse
#: every 0.5 s, let through from 0.9 s to 2.7 s of the synth's life, so the listen
#: that starts just after it hears them all): wall-clock timestamps are placed by a
#: headless driver that falls behind on a busy machine.
KICKS = """
{ var age = Sweep.ar(0, 1), hit = Impulse.ar(2) * (age > 0.9) * (age < 2.7);
  Line.kr(0, 0, 3.2, doneAction: 2);
  (SinOsc.ar(55 + Decay2.ar(hit, 0.001, 0.03, 100)) * Decay2.ar(hit, 0.002, 0.15) * 0.8) ! 2
}.play(s);
"""


async def test_a_four_hit_kick_pattern_gives_four_onsets(client: Client) -> None:
    await call(client, "execute", instance="live", code=KICKS)
    result = await call(client, "listen", instance="live", seconds=3.0)
    heard = result.structured_content or {}
    onsets = heard["onsets"]
    assert len(onsets) == 4, onsets
    gaps = [later - earlier for earlier, later in itertools.pairwise(onsets)]
    assert gaps == pytest.approx([0.5] * 3, abs=0.02)
    assert text(result).startswith("Four percussive hits")


async def test_one_node_is_heard_alone_and_plays_on_where_it_did(
        client: Client, orchestra: Orchestra) -> None:
    await call(client, "play", instance="live", synthdef="sine", node="low",
               params={"freq": 330.0, "amp": 0.2, **PURE})
    high = await call(client, "play", instance="live", synthdef="sine", node="high",
                      params={"freq": 660.0, "amp": 0.2, **PURE})
    alone = (await call(client, "listen", instance="live", node="high", seconds=0.6)
             ).structured_content or {}
    both = (await call(client, "listen", instance="live", seconds=0.6)).structured_content or {}
    assert alone["fundamental_hz"] == pytest.approx(660.0, abs=1.0)
    assert [p["note"] for p in both["partials"][:2]] == ["E4", "E5"]
    node_id = (high.structured_content or {})["node_id"]
    assert scsynth_param(orchestra.rooms.status("live").port, node_id, "out") == 0.0  # back


async def test_a_node_heard_by_three_listens_at_once_is_heard_whole_by_each_and_put_back(
        client: Client, orchestra: Orchestra) -> None:
    """One tap shared: each listen hears the node for all its seconds, and the last to end
    moves it back (each moving it alone read the other's private bus as its own)."""
    node_id = ((await call(client, "play", instance="live", synthdef="sine", node="shared",
                           params={"freq": 550.0, "amp": 0.2, **PURE})).structured_content
               or {})["node_id"]
    heard: dict[float, dict[str, Any]] = {}

    async def listen(seconds: float) -> None:
        result = await call(client, "listen", instance="live", node="shared", seconds=seconds)
        heard[seconds] = result.structured_content or {}

    async with anyio.create_task_group() as tasks:
        for seconds in (0.4, 0.8, 1.2):
            tasks.start_soon(listen, seconds)
    levels = {seconds: (h["fundamental_hz"], h["rms_dbfs"]) for seconds, h in heard.items()}
    for seconds, (hz, rms) in levels.items():
        assert hz == pytest.approx(550.0, abs=1.0), levels
        assert rms == pytest.approx(levels[1.2][1], abs=0.5), f"{seconds} s: {levels}"
    assert scsynth_param(orchestra.rooms.status("live").port, node_id, "out") == 0.0
    main = (await call(client, "listen", instance="live", seconds=0.5)).structured_content or {}
    assert main["fundamental_hz"] == pytest.approx(550.0, abs=1.0)  # on the main outputs again


async def test_bad_listens_say_what_is_wrong(client: Client, orchestra: Orchestra,
                                             tmp_path: Path) -> None:
    assert "known rooms: live, quiet, doomed" in await fails(
        client, "listen", instance="nope")
    assert "less than or equal to 30" in await fails(client, "listen", instance="live",
                                                     seconds=31)
    assert "greater than or equal to 0.2" in await fails(client, "listen", instance="live",
                                                         seconds=0.1)
    assert "less than or equal to 1023" in await fails(client, "listen", instance="live",
                                                       bus=5000)
    assert "beyond scsynth's 1024 audio buses" in await fails(
        client, "listen", instance="live", bus=1023, channels=2)
    assert "no node 'ghost'" in await fails(client, "listen", instance="live", node="ghost")
    recordings = orchestra.studio.recorder.folder
    recordings.mkdir(parents=True, exist_ok=True)
    (recordings / "notes.wav").write_text("not audio at all")
    assert "cannot read audio" in await fails(client, "listen", path="notes.wav")
    assert "no such file" in await fails(client, "listen", path=str(recordings / "gone.wav"))
    outside = tmp_path / "outside.wav"
    outside.write_text("not audio either")
    assert "outside the folders this installation allows" in await fails(
        client, "listen", path=str(outside))


# --- record --------------------------------------------------------------------------


async def test_a_2_s_recording_lasts_2_s_and_is_listed(client: Client) -> None:
    await call(client, "play", instance="live", synthdef="sine", node="tone",
               params={"freq": 440.0, "amp": 0.3, **PURE})
    started = (await call(client, "record", action="start", instance="live", seconds=2.0,
                          name="two-seconds")).structured_content or {}
    await call(client, "record", action="start", instance="live", seconds=0.5,
               format="flac")
    [row] = started["recordings"]
    assert row["state"] == "recording" and row["instance"] == "live"
    path = Path(row["path"])
    assert path.is_absolute() and path.parent.name == "recordings"

    async def listed() -> dict[str, Any]:
        rows = (await call(client, "record")).structured_content or {}
        return {r["name"]: r for r in rows["recordings"]}

    deadline = time.monotonic() + 10
    while (await listed())["two-seconds"]["state"] == "recording":
        assert time.monotonic() < deadline
        time.sleep(0.1)  # the recording's own time passes: nothing to wait on
    rows = await listed()
    done = rows["two-seconds"]
    assert done["state"] == "done" and done["note"] is None
    assert done["seconds"] == pytest.approx(2.0, abs=0.02)
    assert done["frames"] == soundfile.info(str(path)).frames
    assert done["size"] == path.stat().st_size
    [flac] = [r for r in rows.values() if r["format"] == "flac"]
    assert flac["seconds"] == pytest.approx(0.5, abs=0.02)
    heard = (await call(client, "listen", path="two-seconds.wav")).structured_content or {}
    assert heard["note"] == "A4" and heard["seconds"] == pytest.approx(2.0, abs=0.02)
    by_name = (await call(client, "listen", path="two-seconds")).structured_content or {}
    assert by_name["audio"].endswith("two-seconds.wav")  # the name record returned


async def test_a_recording_until_stopped_stops_on_request(client: Client) -> None:
    await call(client, "record", action="start", instance="quiet", name="until-stopped")
    stopped = (await call(client, "record", action="stop", instance="quiet")
               ).structured_content or {}
    [row] = stopped["recordings"]
    assert (row["name"], row["state"], row["note"]) == (
        "until-stopped", "done", "stopped by request")
    assert row["frames"] is not None and row["seconds"] < 5
    assert "no recording on 'quiet' is running" in await fails(
        client, "record", action="stop", instance="quiet")
    assert "exists already" in await fails(client, "record", action="start",
                                           instance="quiet", name="until-stopped")
    assert "record action 'start': invalid arguments:\ninstance: this argument is " \
        "required" in await fails(client, "record", action="start")
    assert "not starting with '.'" in await fails(client, "record", action="start",
                                                  instance="quiet", name="../escape")


async def test_stop_frees_the_recorder_too_and_the_recording_says_so(
        client: Client, orchestra: Orchestra) -> None:
    await call(client, "record", action="start", instance="quiet", name="silenced")
    await call(client, "stop", instance="quiet")  # frees every node, the recorder's too
    wait_for(lambda: orchestra.studio.recorder.running("quiet") == 0, timeout=5)
    rows = (await call(client, "record")).structured_content or {}
    [row] = [r for r in rows["recordings"] if r["name"] == "silenced"]
    assert row["state"] == "stopped" and "freed on scsynth" in row["note"]
    assert not probe(Path(row["path"])).needs_repair  # closed by scsynth, whole


async def test_a_scsynth_killed_mid_recording_leaves_a_readable_file_listed_cut_short(
        client: Client, orchestra: Orchestra) -> None:
    await call(client, "record", action="start", instance="doomed", name="doomed")
    path = orchestra.studio.recorder.folder / "doomed.wav"
    # Two of DiskOut's half-buffer writes (stereo float) are on disk: kill it now.
    wait_for(lambda: path.exists() and path.stat().st_size > 2 * 16384 * 8, timeout=10)
    scsynth = orchestra.rooms.status("doomed").pids["scsynth"]
    mark = orchestra.rooms.view("doomed").events.mark()
    os.kill(scsynth, signal.SIGKILL)

    async def state() -> dict[str, Any]:
        rows = (await call(client, "record")).structured_content or {}
        return next(r for r in rows["recordings"] if r["name"] == "doomed")

    deadline = time.monotonic() + 10
    while (row := await state())["state"] == "recording":
        assert time.monotonic() < deadline
        time.sleep(0.05)  # the watcher notices within its tick
    assert row["state"] == "cut short" and "scsynth died" in row["note"]
    assert "repaired" in row["note"]
    assert not probe(path).needs_repair
    assert soundfile.info(str(path)).frames == row["frames"] >= 2 * 16384
    assert orchestra.rooms.view("doomed").wait_settled(mark, 15) is None  # and the room is back


# --- disks ---------------------------------------------------------------------------


def tmpfs(where: Path, size: str, read_only: bool = False) -> None:
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True, timeout=10, check=False)
    if done.returncode != 0:
        missing(f"mount, as root (CI is root): cannot mount a small file system here: "
                f"{done.stderr.decode().strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    tmpfs(where, "1400k")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], timeout=10, check=True)


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "read-only"
    tmpfs(where, "1m", read_only=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], timeout=10, check=True)


def test_a_full_disk_stops_the_recording_cleanly_and_says_so(
        orchestra: Orchestra, small_disk: Path) -> None:
    recorder = Recorder(small_disk, orchestra.views, orchestra.doors, orchestra.studio.slots)
    started = recorder.start("quiet", Source(), "wav", None, "filling")
    wait_for(lambda: recorder.running("quiet") == 0, timeout=10)
    [(recording, facts)] = recorder.list()
    assert recording.name == started.name and recording.state == "stopped"
    assert recording.note is not None and "disk is nearly full" in recording.note
    assert facts is not None and facts["frames"] > 0
    assert not probe(Path(recording.path)).needs_repair  # closed by scsynth, not repaired
    with pytest.raises(CaptureError, match="not enough space"):
        recorder.start("quiet", Source(), "wav", 30.0, None)


def test_an_unwritable_folder_is_refused_before_anything_starts(
        orchestra: Orchestra, read_only_disk: Path) -> None:
    recorder = Recorder(read_only_disk, orchestra.views, orchestra.doors,
                        orchestra.studio.slots)
    with pytest.raises(CaptureError, match="Read-only file system"):
        recorder.start("quiet", Source(), "wav", 1.0, None)
    assert recorder.running("quiet") == 0 and recorder.list() == []


# --- render --------------------------------------------------------------------------


async def test_render_of_the_library_sine_at_880_hz_reports_880_hz_and_is_cached(
        client: Client) -> None:
    first = await call(client, "render", synthdef="sine",
                       params={"freq": 880.0, **PURE}, duration=1.0)
    heard = first.structured_content or {}
    assert heard["fundamental_hz"] == pytest.approx(880.0, abs=0.5) and heard["note"] == "A5"
    assert heard["cached"] is False and Path(heard["audio"]).is_file()
    assert heard["seconds"] == pytest.approx(1.0 + 0.3 + 0.1, abs=0.01)  # held, then rel
    assert png_size(first) == (1000, 600)
    # the numbers are in the text content too (all some clients show a model), as measured
    shown = text(first)
    assert f"peak {heard['peak_dbfs']:.1f} dBFS" in shown, shown
    assert f"integrated {heard['lufs']:.1f} LUFS" in shown, shown
    assert f"fundamental: {heard['fundamental_hz']:.2f} Hz (A5 " in shown, shown
    assert f"centroid {heard['centroid_hz']:.0f} Hz" in shown, shown
    assert f"File: {heard['audio']}\n" in shown and f"Picture: {heard['picture']}" in shown
    again = await call(client, "render", synthdef="sine", params={"freq": 880.0, **PURE},
                       duration=1.0)
    cached = again.structured_content or {}
    assert cached["cached"] is True and cached["audio"] == heard["audio"]
    assert "(from the cache)" in text(again) and f"peak {heard['peak_dbfs']:.1f} dBFS" in text(
        again)


async def test_render_of_an_sclang_score(client: Client) -> None:
    code = ("[[0, [\\s_new, \\sine, 1000, 0, 0, \\freq, 330, \\vibDepth, 0]], "
            "[0.8, [\\n_set, 1000, \\gate, 0]]]")
    heard = (await call(client, "render", code=code, duration=1.2)).structured_content or {}
    assert heard["note"] == "E4" and heard["seconds"] == pytest.approx(1.2, abs=0.01)
    assert "syntax error" in await fails(client, "render", code="[[0, [\\s_new")
    assert "one of them" in await fails(client, "render", synthdef="sine", code=code)
    assert "has no param 'colour'" in await fails(client, "render", synthdef="sine",
                                                   params={"colour": 1.0})
