"""Recordings whose writer died: real files with the headers a killed writer leaves.

Each file is written whole with soundfile, then its header is put back the way
libsndfile leaves it when the process writing it is killed (checked against
real scsynth recordings, one of whose headers is kept below byte for byte).
The integration test at the end records with a real scsynth and SIGKILLs it.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile

from scorch.audio.analysis import analyse_file
from scorch.audio.recording_file import probe, repair
from scorch.errors import AudioFileError
from scorch.primitives.osc import OscArg, decode_packet, encode_message
from scorch.primitives.system.process import DIE_WITH_PARENT
from tests.conftest import jack_name
from tests.support.audio_signals import RATE
from tests.support.recording_files import (
    FRAMES,
    as_a_killed_writer_leaves_it,
    stereo_ramp,
)

# The first 88 bytes of a float WAV that scsynth 3.13 (libsndfile 1.2.2) was
# recording with DiskOut when it was SIGKILLed: RIFF size 8, fmt (IEEE float,
# 2 channels, 48 kHz), fact 0 frames, PEAK, data size 0.
SCSYNTH_KILLED_WAV_HEADER = bytes.fromhex(
    "52494646080000005741564566 6d7420100000000300020080bb000000dc050008002000"
    "666163740400000000000000 5045414b1800000001000000832a046b0000000000000000"
    "0000000000000000 6461746100000000".replace(" ", "")
)


def stereo_noise(frames: int = FRAMES) -> np.ndarray:
    """Return noise, which FLAC cannot shrink much: every frame is many bytes long."""
    return np.random.default_rng(7).uniform(-0.5, 0.5, (frames, 2))


def written(path: Path, fmt: str, subtype: str, samples: np.ndarray | None = None) -> np.ndarray:
    samples = stereo_ramp() if samples is None else samples
    soundfile.write(path, samples, RATE, format=fmt, subtype=subtype)
    return samples


# --- WAV ---------------------------------------------------------------------


@pytest.mark.parametrize("subtype", ["FLOAT", "PCM_16", "PCM_24", "DOUBLE"])
def test_a_wav_left_by_a_killed_writer_is_repaired_and_reads_back_whole(
    tmp_path: Path, subtype: str
) -> None:
    path = tmp_path / "take.wav"
    samples = written(path, "WAV", subtype)
    as_a_killed_writer_leaves_it(path)
    before = probe(path)
    assert (before.header_frames, before.frames, before.needs_repair) == (0, FRAMES, True)

    result = repair(path)

    assert (result.repaired, result.frames, result.header_frames_before) == (True, FRAMES, 0)
    assert result.seconds == pytest.approx(FRAMES / RATE)
    back, rate = soundfile.read(path, always_2d=True)
    assert rate == RATE
    np.testing.assert_allclose(back, samples, atol=1e-4)
    assert probe(path).header_frames == FRAMES and not probe(path).needs_repair


def test_the_header_scsynth_left_when_killed_is_repaired(tmp_path: Path) -> None:
    path = tmp_path / "scsynth.wav"
    audio = stereo_ramp(4096).astype("<f4")
    path.write_bytes(SCSYNTH_KILLED_WAV_HEADER + audio.tobytes())
    found = probe(path)
    assert (found.format, found.encoding, found.channels, found.sample_rate) == (
        "WAV", "float32", 2, 48000)

    assert repair(path).frames == 4096

    info = soundfile.info(str(path))
    assert (info.frames, info.subtype) == (4096, "FLOAT")
    data = path.read_bytes()
    assert struct.unpack_from("<I", data, 4)[0] == len(data) - 8
    assert struct.unpack_from("<I", data, 44)[0] == 4096  # the fact chunk's frame count
    np.testing.assert_array_equal(soundfile.read(path, always_2d=True)[0], audio)


def test_python_wave_reads_a_repaired_wav_it_refused_before(tmp_path: Path) -> None:
    import wave

    path = tmp_path / "take.wav"
    written(path, "WAV", "PCM_16")
    as_a_killed_writer_leaves_it(path)
    with pytest.raises(wave.Error):
        wave.open(str(path)).close()
    repair(path)
    with wave.open(str(path)) as reader:
        assert reader.getnframes() == FRAMES


def test_a_partial_last_frame_is_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "take.wav"
    samples = written(path, "WAV", "FLOAT")
    as_a_killed_writer_leaves_it(path)
    with open(path, "ab") as file:
        file.write(b"\x01\x02\x03\x04\x05")  # 5 of a stereo float frame's 8 bytes
    size = path.stat().st_size

    result = repair(path)

    assert (result.frames, result.bytes_cut) == (FRAMES, 5)
    assert path.stat().st_size == size - 5
    np.testing.assert_allclose(soundfile.read(path, always_2d=True)[0], samples, atol=1e-6)


def test_odd_sized_audio_gets_the_pad_byte_riff_asks_for(tmp_path: Path) -> None:
    path = tmp_path / "mono24.wav"
    mono = np.linspace(-0.5, 0.5, 1001)  # 1001 frames of 3 bytes: an odd data size
    written(path, "WAV", "PCM_24", mono)
    as_a_killed_writer_leaves_it(path)
    data = path.read_bytes()
    path.write_bytes(data[:-1] if len(data) % 2 else data)  # as a writer leaves it: no pad

    repair(path)

    assert path.stat().st_size % 2 == 0
    assert soundfile.info(str(path)).frames == 1001
    assert not probe(path).needs_repair


def test_a_wav_cut_short_is_made_to_claim_only_what_is_left(tmp_path: Path) -> None:
    path = tmp_path / "cut.wav"
    samples = written(path, "WAV", "PCM_16")
    data = path.read_bytes()
    path.write_bytes(data[: 44 + 4 * 6000 + 3])  # 6000 whole frames and a partial one

    result = repair(path)

    assert (result.frames, result.header_frames_before, result.bytes_cut) == (6000, FRAMES, 3)
    np.testing.assert_allclose(soundfile.read(path, always_2d=True)[0], samples[:6000],
                               atol=1e-4)


def test_a_good_wav_with_chunks_after_the_audio_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "tagged.wav"
    written(path, "WAV", "PCM_16")
    data = bytearray(path.read_bytes()) + b"LIST" + struct.pack("<I", 4) + b"INFO"
    struct.pack_into("<I", data, 4, len(data) - 8)
    path.write_bytes(bytes(data))

    result = repair(path)

    assert not result.repaired and result.frames == FRAMES
    assert path.read_bytes() == bytes(data)


# --- AIFF --------------------------------------------------------------------


@pytest.mark.parametrize(("subtype", "kind", "encoding"), [
    ("PCM_24", "AIFF", "int24"), ("PCM_16", "AIFF", "int16"), ("FLOAT", "AIFC", "float32"),
])
def test_an_aiff_left_by_a_killed_writer_reads_as_empty_until_repaired(
    tmp_path: Path, subtype: str, kind: str, encoding: str
) -> None:
    path = tmp_path / "take.aiff"
    samples = written(path, "AIFF", subtype)
    as_a_killed_writer_leaves_it(path)
    assert soundfile.info(str(path)).frames == 0  # why AIFF needs the repair
    found = probe(path)
    assert (found.format, found.encoding, found.frames, found.header_frames) == (
        kind, encoding, FRAMES, 0)

    result = repair(path)

    assert result.repaired and result.frames == FRAMES
    np.testing.assert_allclose(soundfile.read(path, always_2d=True)[0], samples, atol=1e-4)
    assert not probe(path).needs_repair


def test_a_partial_last_aiff_frame_is_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "take.aiff"
    written(path, "AIFF", "PCM_24")
    as_a_killed_writer_leaves_it(path)
    with open(path, "ab") as file:
        file.write(b"\x00\x01")  # 2 of a stereo 24-bit frame's 6 bytes
    result = repair(path)
    assert (result.frames, result.bytes_cut) == (FRAMES, 2)
    assert soundfile.info(str(path)).frames == FRAMES


# --- FLAC --------------------------------------------------------------------


def test_a_flac_left_by_a_killed_writer_cannot_be_read_until_repaired(tmp_path: Path) -> None:
    path = tmp_path / "take.flac"
    samples = written(path, "FLAC", "PCM_24")
    as_a_killed_writer_leaves_it(path)
    with pytest.raises((soundfile.LibsndfileError, ValueError, MemoryError)):
        soundfile.read(path)  # libsndfile claims 2**63 - 1 frames
    with pytest.raises(AudioFileError):
        analyse_file(path)
    found = probe(path)
    assert (found.format, found.encoding, found.header_frames, found.frames) == (
        "FLAC", "flac24", None, FRAMES)

    result = repair(path)

    assert (result.repaired, result.frames, result.bytes_cut) == (True, FRAMES, 0)
    np.testing.assert_allclose(soundfile.read(path, always_2d=True)[0], samples, atol=1e-6)
    assert analyse_file(path).frames == FRAMES


def test_a_flac_cut_inside_its_last_frame_keeps_the_frames_before(tmp_path: Path) -> None:
    path = tmp_path / "take.flac"
    samples = written(path, "FLAC", "PCM_16", stereo_noise())
    as_a_killed_writer_leaves_it(path)
    data = path.read_bytes()
    # The last frame holds samples 8192 to 9999: some 7 kB of noise. Cut into it.
    path.write_bytes(data[:-300])

    result = repair(path)

    assert result.frames == 8192
    assert 1000 < result.bytes_cut < 7500
    np.testing.assert_allclose(soundfile.read(path, always_2d=True)[0], samples[:8192],
                               atol=1e-4)


def test_a_good_flac_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "good.flac"
    written(path, "FLAC", "PCM_24")
    data = path.read_bytes()
    assert repair(path).repaired is False
    assert path.read_bytes() == data


# --- every format ------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "subtype"), [("WAV", "FLOAT"), ("WAV", "PCM_24"),
                                               ("AIFF", "FLOAT"), ("AIFF", "PCM_16")])
def test_a_good_file_is_left_untouched(tmp_path: Path, fmt: str, subtype: str) -> None:
    path = tmp_path / f"good.{fmt.lower()}"
    written(path, fmt, subtype)
    data = path.read_bytes()
    found = probe(path)
    assert (found.frames, found.header_frames, found.needs_repair) == (FRAMES, FRAMES, False)
    assert found.size == len(data) and found.seconds == pytest.approx(FRAMES / RATE)
    assert repair(path) == repair(path)
    assert not repair(path).repaired and path.read_bytes() == data


def test_a_header_killed_before_any_audio_is_repaired_to_zero_frames(tmp_path: Path) -> None:
    path = tmp_path / "empty.wav"
    path.write_bytes(SCSYNTH_KILLED_WAV_HEADER)
    result = repair(path)
    assert (result.repaired, result.frames) == (True, 0)
    assert soundfile.info(str(path)).frames == 0
    assert not probe(path).needs_repair


def test_other_formats_are_probed_through_soundfile_but_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "take.w64"
    written(path, "W64", "FLOAT")
    found = probe(path)
    assert (found.format, found.frames, found.needs_repair) == ("W64", FRAMES, False)
    with pytest.raises(AudioFileError, match="only WAV, AIFF and FLAC"):
        repair(path)


def test_files_that_are_not_recordings_raise_audio_file_errors(tmp_path: Path) -> None:
    empty, text, missing = tmp_path / "a.flac", tmp_path / "b.wav", tmp_path / "c.wav"
    empty.write_bytes(b"")
    text.write_text("RIFF but not really")
    for path, message in ((empty, "empty file"), (text, "not a RIFF/WAVE"), (missing, "No such")):
        with pytest.raises(AudioFileError, match=message):
            repair(path)


# --- a real scsynth, killed while recording ------------------------------------

SCSYNTH_PORT = 58211
RECORD_DEF = """
SynthDef(\\scorchDiskRecord, { |buf = 0, freq = 440|
    DiskOut.ar(buf, SinOsc.ar(freq, 0, [0.5, 0.25]));
}).writeDefFile(%s);
0.exit;
"""
# One DiskOut buffer of 32768 frames is written to disk half a buffer at a time.
HALF_BUFFER = 16384
RECORDINGS = (("wav", "float"), ("aiff", "float"), ("flac", "int24"))


def headless_env(home: Path) -> dict[str, str]:
    env = dict(os.environ, QTWEBENGINE_DISABLE_SANDBOX="1", QT_QPA_PLATFORM="offscreen")
    # The user's startup.scd (which may boot a server) stays out of it.
    env |= {"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    return env


@pytest.fixture
def record_def(tmp_path: Path) -> Path:
    """Compile the DiskOut SynthDef with a headless sclang."""
    script = tmp_path / "record.scd"
    script.write_text(RECORD_DEF % f'"{tmp_path}"')
    subprocess.run(["sclang", str(script)], env=headless_env(tmp_path), cwd=tmp_path,
                   capture_output=True, timeout=60, check=True, preexec_fn=DIE_WITH_PARENT)
    return tmp_path / "scorchDiskRecord.scsyndef"


@pytest.fixture
def jack_server() -> Iterator[str]:
    """Run a dummy JACK server of our own and stop it with SIGTERM afterwards."""
    name = jack_name("recording")
    jackd = subprocess.Popen(["jackd", "-n", name, "-r", "-d", "dummy", "-r", "48000", "-p", "64"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=DIE_WITH_PARENT)
    try:
        subprocess.run(["jack_wait", "-s", name, "-w", "-t", "10"], check=True,
                       capture_output=True, env=dict(os.environ, JACK_NO_START_SERVER="1"))
        yield name
    finally:
        jackd.send_signal(signal.SIGTERM)
        jackd.wait(timeout=10)


def wait_for_output(process: subprocess.Popen[bytes], text: bytes, timeout: float) -> None:
    assert process.stdout is not None
    seen, deadline = b"", time.monotonic() + timeout
    while text not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r} from scsynth: {seen[-500:]!r}"
        if select.select([process.stdout], [], [], left)[0]:
            chunk = os.read(process.stdout.fileno(), 4096)
            assert chunk, f"scsynth exited: {seen[-500:]!r}"
            seen += chunk


def send(sock: socket.socket, address: str, *args: OscArg) -> None:
    sock.sendto(encode_message(address, *args), ("127.0.0.1", SCSYNTH_PORT))


def ask(sock: socket.socket, address: str, *args: OscArg) -> None:
    """Send one OSC command to scsynth and wait for its /done (fail on /fail)."""
    send(sock, address, *args)
    while True:
        for answer in decode_packet(sock.recv(65536)):
            assert answer.address != "/fail", answer
            if answer.address == "/done" and answer.args[0] == address:
                return


def wait_until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)  # polling file sizes: there is no event to wait on


@pytest.mark.integration
def test_recordings_of_a_scsynth_killed_mid_write_are_repaired(
    tmp_path: Path, record_def: Path, jack_server: str
) -> None:
    env = dict(os.environ, JACK_DEFAULT_SERVER=jack_server, JACK_NO_START_SERVER="1")
    scsynth = subprocess.Popen(
        ["scsynth", "-u", str(SCSYNTH_PORT), "-B", "127.0.0.1", "-R", "0", "-l", "4",
         "-i", "0", "-o", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=DIE_WITH_PARENT)
    paths = [tmp_path / f"take.{header}" for header, _ in RECORDINGS]
    try:
        wait_for_output(scsynth, b"server ready", 15)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(5)
            ask(sock, "/d_load", str(record_def))
            for buf, ((header, sample), path) in enumerate(zip(RECORDINGS, paths, strict=True)):
                ask(sock, "/b_alloc", buf, 2 * HALF_BUFFER, 2)
                ask(sock, "/b_write", buf, str(path), header, sample, 0, 0, 1)  # leave open
                send(sock, "/s_new", "scorchDiskRecord", 1000 + buf, 0, 0, "buf", buf)
        # Two half buffers of stereo float or 24-bit audio are past 150 kB; FLAC
        # flushes its first 4096-sample frames well before.
        wait_until(lambda: all(p.stat().st_size > 150_000 for p in paths[:2])
                   and paths[2].stat().st_size > 20_000, timeout=20)
    finally:
        scsynth.kill()  # SIGKILL: what the recording must survive
        scsynth.wait(timeout=10)
        assert scsynth.stdout is not None
        scsynth.stdout.close()
        # A killed scsynth cannot remove its shared memory segment: do it for it.
        Path(f"/dev/shm/SuperColliderServer_{SCSYNTH_PORT}").unlink(missing_ok=True)

    wav, aiff, flac = paths
    assert probe(wav).header_frames == 0 and probe(wav).needs_repair
    assert soundfile.info(str(aiff)).frames == 0
    with pytest.raises((soundfile.LibsndfileError, ValueError, MemoryError)):
        soundfile.read(flac)

    for path in paths:
        found = probe(path)
        result = repair(path)
        assert result.repaired and result.frames == found.frames >= HALF_BUFFER // 2
        report = analyse_file(path)
        assert (report.frames, report.channels, report.note) == (result.frames, 2, "A4")
        assert report.peak_dbfs == pytest.approx(-6.0, abs=0.1)  # the left channel's 0.5
        assert not probe(path).needs_repair

