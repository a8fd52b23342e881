"""Render every SynthDef of the library offline (``scsynth -N``) and check its audio.

Each sound is played once at its defaults through a non-realtime score: drums
and plucks on their own, sustained sounds with ``gate 0`` at 1.5 s, effects fed
by a snare on a private bus. Pitched sounds are played a second time an octave
away and their pitch is measured. With SCORCH_WRITE_RENDER_TABLE=1 the figures go
to ``synthdefs/README.md``.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from scorch.audio.analysis import read_audio
from scorch.primitives.osc import encode_bundle, encode_message
from scorch.primitives.synthdefs.library import DEFAULT_DIRECTORY, SynthDefInfo, SynthDefLibrary
from scorch.primitives.system.process import DIE_WITH_PARENT

pytestmark = pytest.mark.integration

SAMPLE_RATE = 48000
NODE = 1000
SOURCE_NODE = 1001
FX_BUS = 64  # a private audio bus, well above the 2 outputs rendered
GATE_OFF = 1.5
PERCUSSIVE_LENGTH = 4.0
SILENT_DB = -60.0
MIN_RMS_DB = -40.0
MAX_PEAK_DB = 0.0
TAIL = 0.1  # seconds that must be silent at the end of the render
PITCH_TOLERANCE = 0.05
FX_SOURCE = "snare"
#: Samplers play a looped sine of this pitch from a WAV file (mono or stereo, as they read).
SAMPLE_TONE = 440.0
SAMPLE_BUFNUM = 768
SAMPLE_CHANNELS = {"sampler": 1, "sampler_stereo": 2}

README = DEFAULT_DIRECTORY / "README.md"
TABLE_START = "<!-- render-table:start -->"
TABLE_END = "<!-- render-table:end -->"

NAMES = sorted(path.stem for path in DEFAULT_DIRECTORY.glob("*.scd"))


@dataclass
class Render:
    """One NRT render of one SynthDef and what was measured in it."""

    name: str
    freq: float | None
    length: float
    audio: np.ndarray
    dumps: list[str]
    """The node tree printed at each ``/g_dumpTree``: early, then at the end."""
    log: str
    returncode: int
    pitch: float | None = None


@dataclass
class Renders:
    """Every render of the library, by SynthDef name (default render first)."""

    by_name: dict[str, list[Render]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _packet(time: float, *messages: bytes) -> bytes:
    bundle = encode_bundle(int(time * 2**32), list(messages))
    return struct.pack(">i", len(bundle)) + bundle


def sampled(info: SynthDefInfo) -> bool:
    """A sampler: it plays a buffer (``bufnum``), and its pitch follows its ``rate``."""
    return any(p.name == "bufnum" for p in info.params)


def sample_file(workdir: Path, channels: int) -> Path:
    """A 1 s WAV of a sine at SAMPLE_TONE (a whole number of cycles: it loops seamlessly)."""
    path = workdir / f"tone-{channels}ch.wav"
    if not path.exists():
        t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
        tone = 0.5 * np.sin(2 * np.pi * SAMPLE_TONE * t)
        sf.write(path, np.repeat(tone[:, None], channels, axis=1), SAMPLE_RATE,
                 subtype="FLOAT")
    return path


def _render_length(info: SynthDefInfo) -> float:
    if not info.sustained:
        return PERCUSSIVE_LENGTH
    release = info.param("rel").default if any(p.name == "rel" for p in info.params) else 1.0
    return GATE_OFF + release + 1.0


def _score(
    library: SynthDefLibrary, info: SynthDefInfo, freq: float | None, *, release: bool = True,
    sample: Path | None = None,
) -> bytes:
    args: list[str | float] = ["freq", freq] if freq is not None and info.pitched else []
    events: list[tuple[float, list[bytes]]] = []
    if sample is not None:
        # The sampler loops the tone at the rate that gives ``freq``.
        rate = (freq or SAMPLE_TONE) / SAMPLE_TONE
        args = ["bufnum", SAMPLE_BUFNUM, "loop", 1, "rate", rate]
        events.append((0.0, [encode_message("/b_allocRead", SAMPLE_BUFNUM, str(sample))]))
    if info.category == "fx":
        events.append((0.0, [encode_message("/d_recv", library.compiled(info.name)),
                             encode_message("/d_recv", library.compiled(FX_SOURCE))]))
        # The effect at the tail of the root group, its sources at the head: they run first.
        events.append((0.0, [encode_message("/s_new", info.name, NODE, 1, 0, "in", FX_BUS)]))
        # A hit every quarter second until gate 0, then the effect's tail alone.
        for hit in range(int(GATE_OFF / 0.25)):
            events.append((hit * 0.25, [encode_message(
                "/s_new", FX_SOURCE, SOURCE_NODE + hit, 0, 0, "out", FX_BUS)]))
    else:
        events.append((0.0, [encode_message("/d_recv", library.compiled(info.name))]))
        events.append((0.0, [encode_message("/s_new", info.name, NODE, 0, 0, *args)]))
    events.append((0.01, [encode_message("/g_dumpTree", 0, 0)]))
    if info.sustained and release:
        events.append((GATE_OFF, [encode_message("/n_set", NODE, "gate", 0)]))
    # The last command sets the length of the render and shows what is still running.
    events.append((_render_length(info), [encode_message("/g_dumpTree", 0, 0)]))
    # NRT reads the score in order: bundles must be sorted by time (sort is stable).
    return b"".join(_packet(time, *messages) for time, messages in
                    sorted(events, key=lambda event: event[0]))


def _render(
    library: SynthDefLibrary, info: SynthDefInfo, freq: float | None, workdir: Path
) -> Render:
    tag = f"{info.name}-{freq:g}" if freq is not None else info.name
    score_path = workdir / f"{tag}.osc"
    wav_path = workdir / f"{tag}.wav"
    sample = sample_file(workdir, SAMPLE_CHANNELS[info.name]) if sampled(info) else None
    score_path.write_bytes(_score(library, info, freq, sample=sample))
    argv = ["scsynth", "-D", "0", "-i", "0", "-o", "2",
            "-N", str(score_path), "_", str(wav_path), str(SAMPLE_RATE), "WAV", "float"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=DIE_WITH_PARENT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
    log = out.decode(errors="replace")
    audio, _ = read_audio(wav_path)
    dumps = [chunk for chunk in log.split("NODE TREE")[1:]]
    render = Render(info.name, freq, _render_length(info), audio.astype(np.float64), dumps, log,
                    proc.returncode)
    if freq is not None:
        render.pitch = measure_pitch(render.audio, expected=freq, sustained=info.sustained)
    return render


def db(value: float) -> float:
    """Return ``value`` (linear amplitude) in dBFS."""
    return 20 * np.log10(max(value, 1e-12))


def sound_length(audio: np.ndarray) -> float:
    """Return the time of the last sample louder than -60 dBFS."""
    loud = np.flatnonzero(np.abs(audio).max(axis=1) > 10 ** (SILENT_DB / 20))
    return 0.0 if loud.size == 0 else (loud[-1] + 1) / SAMPLE_RATE


def rms_db(audio: np.ndarray) -> float:
    """Return the RMS in dBFS over the part that sounds (start to last audible sample)."""
    end = max(int(sound_length(audio) * SAMPLE_RATE), 1)
    return db(float(np.sqrt(np.mean(audio[:end] ** 2))))


def measure_pitch(audio: np.ndarray, expected: float, sustained: bool) -> float | None:
    """Estimate the fundamental, searching within 3x of ``expected``.

    YIN, which finds the period even when a filter lifts an upper partial, from
    0.5 s on for sustained sounds (after attack and vibrato onset) and from 30 ms
    on for percussive ones (after their pitch sweeps). Where YIN finds no clear
    period (a snare's body under its noise), the strongest spectral peak of the
    next 150 ms, where a drum's decaying body stands above the noise.
    """
    mono = audio.mean(axis=1)
    start = int((0.5 if sustained else 0.03) * SAMPLE_RATE)
    tau_min = max(int(SAMPLE_RATE / (expected * 3)), 2)
    tau_max = int(SAMPLE_RATE / (expected / 3))
    window = max(int(0.2 * SAMPLE_RATE), 3 * tau_max)
    frame = mono[start : start + window + tau_max]
    if frame.size < window + tau_max or not np.any(frame):
        return None
    base = frame[:window]
    diff = np.array([np.sum((base - frame[tau : tau + window]) ** 2)
                     for tau in range(tau_max + 1)])
    cumulative = np.cumsum(diff[1:])
    cmnd = np.ones_like(diff)
    cmnd[1:] = diff[1:] * np.arange(1, tau_max + 1) / np.maximum(cumulative, 1e-20)
    below = np.flatnonzero(cmnd[tau_min:] < 0.15)
    if below.size:
        tau = tau_min + int(below[0])
        while tau + 1 <= tau_max and cmnd[tau + 1] < cmnd[tau]:
            tau += 1
        return SAMPLE_RATE / (tau + _parabola(cmnd, tau))
    return _spectral_peak(mono[start : start + int(0.15 * SAMPLE_RATE)], expected)


def _spectral_peak(segment: np.ndarray, expected: float) -> float | None:
    if segment.size < 64 or not np.any(segment):
        return None
    size = 1 << 18  # zero-padded: bins of 0.18 Hz at 48 kHz
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(segment.size), size))
    freqs = np.fft.rfftfreq(size, 1 / SAMPLE_RATE)
    band = np.flatnonzero((freqs >= expected / 3) & (freqs <= expected * 3))
    peak = int(band[np.argmax(spectrum[band])])
    return float(freqs[peak] + _parabola(np.log(spectrum + 1e-20), peak) * (freqs[1] - freqs[0]))


def _parabola(values: np.ndarray, index: int) -> float:
    """Return the offset of a parabola's vertex through ``values[index - 1 : index + 2]``."""
    if not 0 < index < values.size - 1:
        return 0.0
    a, b, c = values[index - 1], values[index], values[index + 1]
    denom = a - 2 * b + c
    return float(0.5 * (a - c) / denom) if denom else 0.0


def second_freq(info: SynthDefInfo) -> float:
    """Return an octave above the default freq, or below if above is out of range."""
    spec = info.param("freq")
    return spec.default * 2 if spec.default * 2 <= spec.maxval else spec.default / 2


def problems(info: SynthDefInfo, renders: list[Render]) -> list[str]:
    """Return what is wrong with a SynthDef's renders; empty when it passes."""
    found: list[str] = []
    for render in renders:
        label = f"freq {render.freq:g}" if render.freq is not None else "default"
        audio = render.audio
        if render.returncode != 0 or "FAILURE" in render.log:
            found.append(f"{label}: scsynth reported a failure: {render.log[-400:]}")
        if not np.all(np.isfinite(audio)):
            found.append(f"{label}: NaN or inf in the output")
            continue
        peak = db(float(np.abs(audio).max()))
        if peak > MAX_PEAK_DB:
            found.append(f"{label}: clips, peak {peak:.1f} dBFS")
        if rms_db(audio) < MIN_RMS_DB:
            found.append(f"{label}: too quiet, RMS {rms_db(audio):.1f} dBFS")
        tail = audio[-int(TAIL * SAMPLE_RATE) :]
        if db(float(np.abs(tail).max())) > SILENT_DB:
            found.append(f"{label}: still sounding at the end ({render.length:g} s)")
        if len(render.dumps) != 2 or f"{NODE} {info.name}" not in render.dumps[0]:
            found.append(f"{label}: node {NODE} was not running at 10 ms")
        elif re.search(rf"^\s*{NODE}\s", render.dumps[1], re.MULTILINE):
            found.append(f"{label}: node {NODE} was not freed by {render.length:g} s")
        if info.sustained and sound_length(audio) < GATE_OFF:
            found.append(f"{label}: stopped at {sound_length(audio):.2f} s, before gate 0")
        if render.freq is not None:
            if render.pitch is None:
                found.append(f"{label}: no pitch found")
            elif abs(render.pitch / render.freq - 1) > PITCH_TOLERANCE:
                found.append(f"{label}: measured pitch {render.pitch:.1f} Hz")
    pitched = [r for r in renders if r.pitch is not None and r.freq is not None]
    if (info.pitched or sampled(info)) and len(pitched) == 2:
        want = pitched[1].freq / pitched[0].freq  # type: ignore[operator]
        got = pitched[1].pitch / pitched[0].pitch  # type: ignore[operator]
        if abs(got / want - 1) > PITCH_TOLERANCE:
            found.append(f"freq ratio {want:g} moved the pitch by {got:.3f}")
    return found


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> SynthDefLibrary:
    """Compile the real library with a fresh cache, so compiling is part of the test."""
    return SynthDefLibrary(cache_dir=tmp_path_factory.mktemp("synthdef-cache"))


@pytest.fixture(scope="module")
def renders(library: SynthDefLibrary, tmp_path_factory: pytest.TempPathFactory) -> Renders:
    """Render every SynthDef (twice for pitched ones) in parallel."""
    workdir = tmp_path_factory.mktemp("renders")
    for channels in set(SAMPLE_CHANNELS.values()):
        sample_file(workdir, channels)  # before the threads: each only reads it
    jobs: list[tuple[SynthDefInfo, float | None]] = []
    for info in library.all():
        if info.pitched:
            jobs += [(info, info.param("freq").default), (info, second_freq(info))]
        elif sampled(info):  # rate 1 and 2: the tone, then an octave up
            jobs += [(info, SAMPLE_TONE), (info, 2 * SAMPLE_TONE)]
        else:
            jobs.append((info, None))
    result = Renders(errors=library.errors)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        done = pool.map(lambda job: _render(library, job[0], job[1], workdir), jobs)
        for render in done:
            result.by_name.setdefault(render.name, []).append(render)
    return result


@pytest.mark.parametrize("name", NAMES)
def test_synthdef_renders_audible_unclipped_finite_and_ends(
    name: str, library: SynthDefLibrary, renders: Renders
) -> None:
    assert name not in renders.errors, renders.errors.get(name)
    assert problems(library.info(name), renders.by_name[name]) == []


def test_a_sound_never_released_fails_the_checks(library: SynthDefLibrary, tmp_path: Path) -> None:
    """The checks can fail: a sustained sound never released keeps sounding and running."""
    info = library.info("sine")
    score = _score(library, info, 440.0, release=False)
    path = tmp_path / "stuck.osc"
    path.write_bytes(score)
    subprocess.run(["scsynth", "-D", "0", "-i", "0", "-o", "2", "-N", str(path), "_",
                    str(tmp_path / "stuck.wav"), str(SAMPLE_RATE), "WAV", "float"],
                   capture_output=True, timeout=60, check=True)
    audio = read_audio(tmp_path / "stuck.wav")[0].astype(np.float64)
    stuck = Render("sine", None, _render_length(info), audio, [], "", 0)
    found = problems(info, [stuck])
    assert any("still sounding" in p for p in found)
    assert measure_pitch(audio, expected=440.0, sustained=True) == pytest.approx(440, rel=0.02)


def test_every_render_sounds_right_and_the_figures_can_go_to_the_readme(
        library: SynthDefLibrary, renders: Renders) -> None:
    """Fail if any sound failed; with SCORCH_WRITE_RENDER_TABLE=1, write the figures too.

    Noise-based sounds change by a dB between runs: a plain test run leaves the
    checkout as it was.
    """
    rows = ["| SynthDef | category | render s | RMS dBFS | peak dBFS | sounds until s "
            "| freq Hz -> measured Hz | result |",
            "|---|---|---|---|---|---|---|---|"]
    failed = []
    for info in library.all():
        group = renders.by_name[info.name]
        first = group[0]
        pitches = ", ".join(f"{r.freq:g} -> {r.pitch:.1f}" if r.pitch else f"{r.freq:g} -> none"
                            for r in group if r.freq is not None) or "-"
        issues = problems(info, group)
        failed += [f"{info.name}: {issue}" for issue in issues]
        rows.append(
            f"| {info.name} | {info.category} | {first.length:.1f} "
            f"| {rms_db(first.audio):.1f} | {db(float(np.abs(first.audio).max())):.1f} "
            f"| {sound_length(first.audio):.2f} | {pitches} | {'ok' if not issues else 'FAIL'} |"
        )
    table = "\n".join(rows)
    text = README.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    updated = text[:start] + "\n" + table + "\n" + text[end:]
    if updated != text and os.environ.get("SCORCH_WRITE_RENDER_TABLE") == "1":
        README.write_text(updated, encoding="utf-8")
    assert failed == []
