"""Sample buffers: paths and limits, loading against scsynth's own replies, restore after a crash.

The sound files are written here with soundfile; what scsynth read is checked with
its own ``/b_query`` and ``/b_get``, and what a sampler plays with a probe synth that
measures the RMS of the sampler's bus into a control bus (read with ``/c_get``).
"""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from scorch.api.local import LocalService
from scorch.app.buffers import buffer_name
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.errors import BufferNotFound, InvalidRequest, SampleNotFound, SampleRejected
from scorch.primitives.disk.samples import resolve_sample, search_samples
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.desired import SAMPLE_BUFFER_BASE
from scorch.state.events import Kind
from tests.conftest import MakeConfig

Start = Callable[[Config], Orchestra]
RATE = 48000
TONE = 440.0
#: The sampler plays onto this private audio bus, which the probe measures.
BUS = 100
CBUS = 7
PROBE_ID = 5000
PROBE = """SynthDef(\\scorchtest_probe, { |in = 100, cbus = 7|
  Out.kr(cbus, RunningSum.rms(In.ar(in, 2).sum, 4800))
}, metadata: (
  description: "Test probe: RMS of a stereo bus, summed", category: \\fx,
  specs: (cbus: ControlSpec(0, 4095, \\lin, 1, 7)),
  descriptions: (cbus: "Control bus the RMS goes to")
))
"""


def write_tone(path: Path, seconds: float = 1.0, channels: int = 1, amp: float = 0.5) -> np.ndarray:
    """A sine at TONE Hz (whole cycles per second: loops seamlessly); return its samples."""
    t = np.arange(int(RATE * seconds)) / RATE
    data = np.repeat((amp * np.sin(2 * np.pi * TONE * t))[:, None], channels, axis=1)
    sf.write(path, data, RATE, subtype="FLOAT")
    return data


# --- paths and search (no processes) ---------------------------------------------------


def test_a_relative_path_is_found_in_the_first_sample_folder_that_holds_it(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    (two / "drums").mkdir(parents=True)
    one.mkdir()
    write_tone(two / "drums" / "kick.wav")
    assert resolve_sample("drums/kick.wav", [one, two], 10**9) == two / "drums" / "kick.wav"
    assert resolve_sample(str(two / "drums" / "kick.wav"), [], 10**9) == (
        two / "drums" / "kick.wav")


@pytest.mark.parametrize(("given", "error", "words"), [
    ("nope.wav", SampleNotFound, ["no sound file 'nope.wav'", "looked in"]),
    ("folder", SampleRejected, ["not a regular file"]),
    ("big.wav", SampleRejected, ["over the limit of 0.1 MB", "[samples] max_mb"]),
    ("  ", InvalidRequest, ["path is empty"]),
])
def test_a_bad_path_says_what_is_wrong(tmp_path: Path, given: str, error: type[Exception],
                                       words: list[str]) -> None:
    (tmp_path / "folder").mkdir()
    write_tone(tmp_path / "big.wav", seconds=2.0)  # 384 kB of float samples
    with pytest.raises(error) as caught:
        resolve_sample(given, [tmp_path], int(0.1 * 1024 * 1024))
    for word in words:
        assert word in str(caught.value)


def test_a_relative_path_without_sample_folders_asks_for_them() -> None:
    with pytest.raises(SampleNotFound, match="no \\[samples\\] paths"):
        resolve_sample("kick.wav", [], 10**9)


def test_search_finds_sound_files_holding_every_word_case_insensitively(tmp_path: Path) -> None:
    (tmp_path / "Drums" / "808").mkdir(parents=True)
    for name in ("Drums/808/Kick Hard.wav", "Drums/808/snare.flac", "Drums/kick-soft.aiff",
                 "Drums/808/kick.txt"):
        (tmp_path / name).write_bytes(b"x")
    found = [f.relative for f in search_samples("KICK 808", [tmp_path])]
    assert found == ["Drums/808/Kick Hard.wav"]
    assert [f.relative for f in search_samples("kick", [tmp_path])] == [
        "Drums/kick-soft.aiff", "Drums/808/Kick Hard.wav"]
    assert len(search_samples("", [tmp_path], limit=2)) == 2


@pytest.mark.parametrize(("stem", "name"), [
    ("kick", "kick"), ("Kick Hard (808)", "Kick_Hard__808_"), ("808 kick", "s808_kick"),
    ("é", "s_"),
])
def test_buffer_names_from_file_names_are_valid_names(stem: str, name: str) -> None:
    assert buffer_name(Path(f"/x/{stem}.wav")) == name


# --- against a real scsynth ------------------------------------------------------------


def _config(make_config: MakeConfig, folder: Path, tag: str, max_mb: float = 1.0) -> Config:
    return make_config(f"""
        [instances.lobby]
        [samples]
        paths = ["{folder}"]
        max_mb = {max_mb}
        [watchdog]
        interval = 0.25
        missed = 8
        backoff_min = 0.05
        backoff_max = 1
        """, tag=tag)


def _probe(port: int, compiled: bytes) -> OscClient:
    """Start the probe at the tail of group 1 (after the sampler); return its client."""
    osc = OscClient(port)
    osc.send(_encode("/d_recv", compiled))
    osc.sync()
    osc.send(_encode("/s_new", "scorchtest_probe", PROBE_ID, 1, 1, "in", BUS, "cbus", CBUS))
    osc.sync()
    return osc


def _encode(address: str, *args: object) -> bytes:
    from scorch.primitives.osc import encode_message
    return encode_message(address, *args)  # type: ignore[arg-type]


def _bus_rms(osc: OscClient) -> float:
    reply = osc.request("/c_get", CBUS, reply="/c_set", timeout=1.0,
                        match=lambda m: m.args[0] == CBUS)
    return float(reply.args[1])  # type: ignore[arg-type]


def _settled_rms(osc: OscClient, expected: float) -> float:
    """The probe's reading once it has a full window of the sampler's sound (or the last)."""
    import time
    deadline = time.monotonic() + 5.0
    value = _bus_rms(osc)
    while time.monotonic() < deadline and not math.isclose(value, expected, rel_tol=0.02):
        time.sleep(0.05)
        value = _bus_rms(osc)
    return value


@pytest.fixture(scope="module")
def probe_def(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    directory = tmp_path_factory.mktemp("probe")
    (directory / "scorchtest_probe.scd").write_text(PROBE)
    library = SynthDefLibrary(directory, cache_dir=directory / "cache")
    assert library.errors == {}
    return library.compiled("scorchtest_probe")


@pytest.mark.integration
def test_a_loaded_sample_comes_back_under_its_bufnum_after_sigkill_and_the_sampler_sounds(
    make_config: MakeConfig, start_orchestra: Start, tmp_path: Path, probe_def: bytes,
) -> None:
    samples = tmp_path / "samples"
    samples.mkdir()
    data = write_tone(samples / "tone.wav", seconds=1.0)
    orch = start_orchestra(_config(make_config, samples, "buf"))
    api = LocalService(orch)

    loaded = api.call("buffer", {"action": "load", "instance": "lobby", "path": "tone.wav"})
    (row,) = loaded.buffers  # type: ignore[attr-defined]
    assert (row.name, row.bufnum, row.frames, row.channels, row.sample_rate) == (
        "tone", SAMPLE_BUFFER_BASE, len(data), 1, RATE)
    assert row.seconds == pytest.approx(1.0) and row.path == str(samples / "tone.wav")
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    # scsynth's own account of the buffer, and a sample of its data, as the file holds them
    info = osc.request("/b_query", row.bufnum, reply="/b_info", timeout=1.0)
    assert list(info.args) == [row.bufnum, len(data), 1, RATE]
    got = osc.request("/b_get", row.bufnum, 100, 2000, reply="/b_set", timeout=1.0)
    assert got.args[2::2] == pytest.approx([data[100, 0], data[2000, 0]], abs=1e-7)

    api.call("play", {"instance": "lobby", "synthdef": "sampler", "node": "loop",
                      "params": {"bufnum": row.bufnum, "loop": 1, "out": BUS, "amp": 0.8}})
    # Pan2 at the centre puts sqrt(1/2) on each side; the probe sums both sides.
    expected = float(np.sqrt(np.mean(data[:, 0] ** 2))) * 0.8 * math.sqrt(0.5) * 2
    probe = _probe(orch.views["lobby"].snapshot.port or 0, probe_def)
    try:
        assert _settled_rms(probe, expected) == pytest.approx(expected, rel=0.02)
    finally:
        probe.close()

    pid = orch.views["lobby"].snapshot.scsynth_pid
    assert pid is not None
    mark = orch.views["lobby"].events.mark()
    os.kill(pid, signal.SIGKILL)
    event = orch.views["lobby"].events.wait_for((Kind.RESTORED, Kind.FAILED), mark, 20.0)
    assert event is not None and event.kind == Kind.RESTORED, orch.rooms.events("lobby")
    assert "1 buffers" in event.message

    port = orch.views["lobby"].snapshot.port or 0
    probe = _probe(port, probe_def)  # scsynth keeps nothing: the probe is started again
    try:
        info = probe.request("/b_query", row.bufnum, reply="/b_info", timeout=1.0)
        assert list(info.args) == [row.bufnum, len(data), 1, RATE]
        assert _settled_rms(probe, expected) == pytest.approx(expected, rel=0.02)
    finally:
        probe.close()
    listed = api.call("buffer", {"action": "list"}).buffers  # type: ignore[attr-defined]
    assert [(b.name, b.bufnum, b.frames) for b in listed] == [("tone", row.bufnum, len(data))]


@pytest.mark.integration
def test_bad_samples_are_refused_with_scsynths_reason_and_nothing_is_kept(
    make_config: MakeConfig, start_orchestra: Start, tmp_path: Path,
) -> None:
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "notes.wav").write_text("this is text, not sound\n")
    write_tone(samples / "long.wav", seconds=4.0)  # 768 kB: over 0.5 MB
    write_tone(samples / "stereo.wav", channels=2)
    orch = start_orchestra(_config(make_config, samples, "badbuf", max_mb=0.5))
    api = LocalService(orch)

    with pytest.raises(SampleRejected, match=r"scsynth could not read .*notes\.wav as a sound"):
        api.call("buffer", {"action": "load", "instance": "lobby", "path": "notes.wav"})
    with pytest.raises(SampleRejected, match=r"over the limit of 0\.5 MB"):
        api.call("buffer", {"action": "load", "instance": "lobby", "path": "long.wav"})
    with pytest.raises(SampleNotFound, match=r"no sound file 'gone\.wav'"):
        api.call("buffer", {"action": "load", "instance": "lobby", "path": "gone.wav"})
    with pytest.raises(BufferNotFound, match="no buffer 'kick'"):
        api.call("buffer", {"action": "free", "instance": "lobby", "name": "kick"})
    with pytest.raises(InvalidRequest, match="a buffer name must be"):
        api.call("buffer", {"action": "load", "instance": "lobby", "path": "stereo.wav",
                            "name": "no spaces"})
    assert api.call("buffer", {"action": "list"}).buffers == []  # type: ignore[attr-defined]

    stereo = api.call("buffer", {"action": "load", "instance": "lobby", "path": "stereo.wav",
                                 "name": "pad"}).buffers[0]  # type: ignore[attr-defined]
    assert (stereo.bufnum, stereo.channels) == (SAMPLE_BUFFER_BASE, 2)
    # The same name again keeps its bufnum; a second name takes the next one.
    again = api.call("buffer", {"action": "load", "instance": "lobby", "path": "stereo.wav",
                                "name": "pad"}).buffers[0]  # type: ignore[attr-defined]
    other = api.call("buffer", {"action": "load", "instance": "lobby",
                                "path": str(samples / "stereo.wav")}).buffers[0]  # type: ignore[attr-defined]
    assert (again.bufnum, other.bufnum, other.name) == (
        SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_BASE + 1, "stereo")
    freed = api.call("buffer", {"action": "free", "instance": "lobby", "name": "pad"})
    assert [b.name for b in freed.buffers] == ["pad"]  # type: ignore[attr-defined]
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    info = osc.request("/b_query", SAMPLE_BUFFER_BASE, reply="/b_info", timeout=1.0)
    assert list(info.args)[1:3] == [0, 0]  # scsynth freed it
    found = api.call("buffer", {"action": "search", "query": "STEREO"}).samples  # type: ignore[attr-defined]
    assert [s.relative for s in found] == ["stereo.wav"]
