"""Hearing like an engineer through a real MCP client, against real scsynth and real files.

One orchestra of two rooms for the module: ``mix`` plays what each test asks (and is
silenced after it), ``other`` is a second room for masking between rooms. References,
sweeps, masking, the grid figure of a pattern and the harmony of rendered chords and
of a .mid; loudness checked against ffmpeg's ebur128 on what listen captured.
"""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mido
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.audio.music.figures import WEAK_PULSE
from scorch.config.installation import parse_config
from scorch.primitives.system.process import pid_alive
from tests.conftest import jack_name
from tests.support.harness import needs_tools
from tests.support.rooms.ebur128 import needs_ffmpeg, reference_loudness

pytestmark = [pytest.mark.integration, pytest.mark.anyio, needs_tools]

#: How far from the installation's grid a live beat's median may land (ms): 2-15 ms were
#: measured at 64 frames, 51 ms at 1024 (the output latency); a phase that is wrong by a
#: sixteenth (125 ms) or the pattern latency (200 ms) is not.
GRID_MS = 60.0
#: The acid bass held steady: no filter envelope, so its brightness is its cutoff's.
STEADY_ACID = {"envAmount": 0.0, "res": 0.3, "freq": 55.0, "amp": 0.4, "drive": 1.0}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orchestra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    folder = tmp_path_factory.mktemp("engineer-tools")
    text = textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name('engineer')}"
        # Timing is measured to the millisecond: a headless driver without realtime
        # scheduling runs unevenly on a busy machine (its audio clock 30 % slow at times).
        realtime = true
        [midi]
        enabled = false
        [watchdog]
        backoff_min = 0.05
        [tempo]
        bpm = 120
        [instances.mix]
        synthdefs = ["acid", "kick", "sine", "saw"]
        [instances.other]
        synthdefs = ["sine", "saw"]
        """)
    orch = Orchestra(parse_config(text, folder / "config.toml"))
    try:
        assert orch.start() == {"mix": None, "other": None}
        yield orch
    finally:
        pids = [pid for pid in orch.rooms.pids().values() if pid]
        orch.stop()
        assert not [pid for pid in pids if pid_alive(pid)]


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session
        for room in ("mix", "other"):
            await session.call_tool("stop", {"instance": room})


async def call(client: Client, tool: str, **args: Any) -> CallToolResult:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def data(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    return result.structured_content


# --- loudness, balance and space in listen -------------------------------------------


@needs_ffmpeg
async def test_listen_gives_loudness_to_the_standard_as_ffmpeg_measures_the_same_capture(
        client: Client) -> None:
    await call(client, "play", instance="mix", synthdef="saw", node="pad",
               params={"freq": 110.0, "amp": 0.3})
    result = await call(client, "listen", instance="mix", seconds=4.0)
    heard = data(result)
    ours = heard["loudness"]
    theirs = reference_loudness(Path(heard["audio"]))
    assert ours["integrated_lufs"] == pytest.approx(theirs.integrated, abs=0.1)
    assert ours["range_lu"] == pytest.approx(theirs.loudness_range, abs=0.5)
    assert ours["true_peak_dbtp"] == pytest.approx(theirs.true_peak, abs=0.2)
    said = text(result)
    assert f"integrated {ours['integrated_lufs']:.1f} LUFS" in said
    assert "true peak" in said and "bands (octaves, dB)" in said and "tilt" in said
    # A saw panned to the middle is mono: correlation 1, no width, nothing lost in mono.
    balance = heard["balance"]
    assert balance["correlation"] == pytest.approx(1.0, abs=0.01)
    assert balance["width"] == pytest.approx(0.0, abs=0.01)
    assert balance["mono_weak"] == []
    assert "stereo: correlation 1.00" in said


async def test_two_nodes_heard_together_say_where_they_mask_each_other(client: Client) -> None:
    await call(client, "play", instance="mix", synthdef="sine", node="low",
               params={"freq": 100.0, "amp": 0.3, "vibDepth": 0.0})
    await call(client, "play", instance="mix", synthdef="sine", node="cover",
               params={"freq": 100.0, "amp": 0.6, "vibDepth": 0.0})
    result = await call(client, "listen", instance="mix", node="low", versus="cover",
                        seconds=1.0)
    masking = data(result)["masking"]
    assert (masking["a"], masking["b"]) == ("low", "cover")
    assert "100" in masking["a_masked"]  # 6 dB under the other in the same band
    assert masking["a_masked_share"] > 0.9 and masking["b_masked"] == []
    assert "masking, low with cover" in text(result)


async def test_two_rooms_heard_together_collide_where_both_play(client: Client) -> None:
    await call(client, "play", instance="mix", synthdef="sine", node="a",
               params={"freq": 1000.0, "amp": 0.3, "vibDepth": 0.0})
    await call(client, "play", instance="other", synthdef="sine", node="b",
               params={"freq": 1000.0, "amp": 0.3, "vibDepth": 0.0})
    masking = data(await call(client, "listen", instance="mix", versus="other",
                              seconds=1.0))["masking"]
    assert "1k" in masking["collide"]


# --- references and sweeps -----------------------------------------------------------


async def test_a_reference_from_a_render_compares_a_listen_and_says_what_to_change(
        client: Client) -> None:
    rendered = data(await call(client, "render", synthdef="acid", duration=2.0,
                               params={**STEADY_ACID, "cutoff": 2000.0}))
    kept = data(await call(client, "reference", action="capture", name="bright",
                           path=rendered["audio"]))
    [reference] = kept["references"]
    assert reference["loudness"]["integrated_lufs"] == rendered["loudness"]["integrated_lufs"]
    assert "bright" in text(await call(client, "reference", action="list"))
    # The same sound 6 dB quieter: the advice says turn it up, the balance is the same.
    await call(client, "play", instance="mix", synthdef="acid", node="bass",
               params={**STEADY_ACID, "cutoff": 2000.0, "amp": 0.2})
    result = await call(client, "listen", instance="mix", node="bass", seconds=2.0,
                        reference="bright")
    compared = data(result)["compared"]
    level = next(f for f in compared["figures"] if f["figure"] == "integrated loudness")
    assert level["difference"] == pytest.approx(-6.0, abs=1.0)
    assert compared["advice"].startswith("Turn it up")
    loud_bands = [db for db in compared["octaves"].values()]
    assert max(abs(db) for db in loud_bands[:6]) < 2.0  # the balance itself matches
    assert "to match bright: Turn it up" in text(result)
    forgotten = await call(client, "reference", action="forget", name="bright")
    assert "forgot" in text(forgotten)
    missing = await client.call_tool("listen", {"instance": "mix", "reference": "bright"})
    assert missing.is_error and "no reference 'bright'" in text(missing)


async def test_a_sweep_of_acids_cutoff_finds_the_cutoff_of_a_reference_within_ten_percent(
        client: Client, orchestra: Orchestra) -> None:
    known = 900.0
    rendered = data(await call(client, "render", synthdef="acid", duration=3.0,
                               params={**STEADY_ACID, "cutoff": known}))
    await call(client, "reference", action="capture", name="at900", path=rendered["audio"])
    await call(client, "play", instance="mix", synthdef="acid", node="bass",
               params={**STEADY_ACID, "cutoff": 300.0})
    told: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        told.append((done, total, message))

    result = await client.call_tool("sweep", {
        "instance": "mix", "node": "bass", "param": "cutoff", "low": 150.0, "high": 5000.0,
        "figure": "centroid", "reference": "at900", "seconds": 0.8},
        progress_callback=progress)
    assert not result.is_error, text(result)
    swept = data(result)
    found = swept["closest"]["cutoff"]
    assert abs(found / known - 1) <= 0.10, text(result)
    assert swept["left_at"] == {"cutoff": found}
    assert len(swept["rows"]) == 12  # 6 on the grid, 6 narrowing in
    assert [t[0] for t in told] == list(range(1, 13)) and told[-1][1] == 12
    assert "cutoff=" in (told[0][2] or "")
    assert Path(swept["picture"]).is_file() and "closest: cutoff" in text(result)
    left = orchestra.rooms.node("mix", "bass", "test").params["cutoff"]
    assert left == pytest.approx(found, rel=1e-4)


# --- rhythm and harmony --------------------------------------------------------------


async def test_a_pattern_on_the_grid_is_heard_on_the_installations_grid(client: Client) -> None:
    # How close a live beat lands to the grid is a figure of the machine, not of scorch:
    # a dummy JACK driver loses the time of every cycle that comes late (an xrun restarts
    # its timeline), and this 2-core VM made it run 1 to 25 % slow in bursts, quiet or
    # loaded, at 64 frames; at 1024 frames it kept time but every beat came out one output
    # latency early. The exact figures are held by the rendered beat's test below; here a
    # live capture is placed on the installation's grid, a regular one (a pulse at least
    # half the onset pairs keep) within a sixteenth's fraction, and a disturbed one says so.
    regular = None
    for _ in range(3):
        result = await _listen_to_a_beat(client)
        rhythm = data(result)["rhythm"]
        assert rhythm["phase_known"] is True and rhythm["grid_bpm"] == 120.0, rhythm
        assert "onsets on the installation's grid (120 bpm" in text(result)
        assert rhythm["onsets"] >= 6, rhythm  # four seconds of beats, the first maybe cut
        if rhythm["audio_clock"] is not None:
            assert abs(rhythm["audio_clock"] - 1) > 0.005, rhythm
            assert "the room's audio ran" in text(result)
        if rhythm["tempo_strength"] < WEAK_PULSE:
            assert "a weak pulse" in text(result), text(result)
            continue
        regular = rhythm
        break
    print(f"the live beat on the grid: {rhythm}")
    if regular is not None:
        assert regular["tempo_bpm"] == pytest.approx(120.0, abs=2.0), regular
        assert regular["subdivision"] == "beats", regular
        # on the beat, not a pattern latency (200 ms) or a sixteenth (125 ms) off it
        assert abs(regular["median_ms"]) <= GRID_MS, regular


async def _listen_to_a_beat(client: Client) -> Any:
    """Four seconds of a kick on every beat of the installation's grid, listened to."""
    await call(client, "execute", instance="mix", code=(
        "Pdef(\\beat, Pbind(\\instrument, \\kick, \\dur, 1, \\amp, 0.8)).play(quant: 1)"))
    try:
        return await call(client, "listen", instance="mix", seconds=4.0)
    finally:
        await call(client, "execute", instance="mix", code="Pdef(\\beat).stop")


async def test_a_rendered_beat_with_known_offsets_gives_them_back(client: Client) -> None:
    offsets_ms = [0, 6, -8, 12, 0, -4, 9, 0]  # their median is 0: the fitted phase is the grid's
    events = ", ".join(f"[{i * 0.5 + ms / 1000:.4f}, [\\s_new, \\kick, -1, 0, 0, \\amp, 0.8]]"
                       for i, ms in enumerate(offsets_ms))
    rendered = await call(client, "render", code=f"[{events}]", duration=4.5)
    rhythm = data(rendered)["rhythm"]
    assert rhythm["tempo_bpm"] == pytest.approx(120.0, abs=1.5)
    assert rhythm["median_ms"] == pytest.approx(0.0, abs=1.5)
    assert rhythm["worst_ms"] == pytest.approx(12.0, abs=1.5)
    heard = data(await call(client, "listen", path=data(rendered)["audio"]))["rhythm"]
    assert "the installation's tempo (120 bpm" in heard["grid"]
    assert heard["worst_ms"] == pytest.approx(12.0, abs=1.5)


async def test_rendered_chords_are_named_with_their_key(client: Client) -> None:
    chords = [(0.0, (60, 64, 67)), (1.0, (57, 60, 64)), (2.0, (53, 57, 60)),
              (3.0, (55, 59, 62, 65))]  # C - Am - F - G7
    events = []
    for at, notes in chords:
        for note in notes:
            hz = 440 * 2 ** ((note - 69) / 12)
            events.append(f"[{at}, [\\s_new, \\saw, -1, 0, 0, \\freq, {hz:.4f}, "
                          f"\\amp, 0.15, \\rel, 0.05]]")
            events.append(f"[{at + 0.9}, [\\n_set, 0, \\gate, 0]]")
    rendered = await call(client, "render", code=f"[{', '.join(events)}]", duration=4.5)
    harmony = data(rendered)["harmony"]
    assert [c["chord"] for c in harmony["chords"]] == ["C", "Am", "F", "G7"], harmony
    assert harmony["key_plain"] == "C major"
    assert "chords: C - Am - F - G7" in text(rendered)


async def test_harmony_of_a_midi_file_names_its_mode_and_chords(
        client: Client, orchestra: Orchestra) -> None:
    path = orchestra.config.state_path() / "midi" / "vamp.mid"
    path.parent.mkdir(parents=True, exist_ok=True)
    song = mido.MidiFile(ticks_per_beat=480)
    track = mido.MidiTrack()
    song.tracks.append(track)
    for _ in range(4):  # Am7 - D7, two beats each
        for chord in ((45, 60, 64, 67), (50, 66, 69, 72)):
            track.extend(mido.Message("note_on", note=n, velocity=80, time=0) for n in chord)
            track.append(mido.Message("note_off", note=chord[0], velocity=0, time=960))
            track.extend(mido.Message("note_off", note=n, velocity=0, time=0) for n in chord[1:])
    song.save(path)
    result = await call(client, "notes", action="harmony", path="vamp.mid")
    found = data(result)["harmony"]
    assert found["key"] == "A dorian" and data(result)["count"] == 32
    assert [c["chord"] for c in found["chords"]] == ["Am7", "D7"] * 4
    assert "A dorian" in text(result) and "Am7 - D7 - Am7" in text(result)
