"""Keep recordings readable when the process writing them dies: probe and repair.

scsynth records with DiskOut through libsndfile, which writes a file's header
when it opens the file and fixes the sizes in it only when it closes it. When
scsynth is killed (SIGKILL, a crash, a power cut) the audio already written
is intact but the header still says there is none:

- WAV: RIFF size 8, data size 0, ``fact`` 0 frames. libsndfile (so soundfile)
  reads such a file to its end anyway; other readers see nothing.
- AIFF / AIFF-C: FORM size 0xFFFFFFF8, ``COMM`` 0 frames, ``SSND`` size 8.
  libsndfile reads 0 frames.
- FLAC: STREAMINFO 0 samples ("unknown"); the block being encoded is lost.
  libsndfile reports 2**63 - 1 frames and ``soundfile.read`` fails.

:func:`repair` rewrites the header in place so that every reader agrees,
keeping whole frames only (a partial last frame is cut off). Call it only on
a file that nothing is writing any more. Other formats are probed as
soundfile sees them and are not repaired.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scorch.audio import aiff_header, flac_stream, wav_header
from scorch.audio.file_layout import Layout, ReadAt
from scorch.errors import AudioFileError

_PARSERS = {b"RIFF": wav_header.inspect, b"RF64": wav_header.inspect,
            b"FORM": aiff_header.inspect, b"fLaC": flac_stream.inspect}


@dataclass(frozen=True)
class RecordingProbe:
    """What a recording file holds, and whether its header says so."""

    format: str
    """``WAV``, ``AIFF``, ``AIFC``, ``FLAC``, or soundfile's name for another format."""
    encoding: str
    """``float32``, ``int24``, ``flac24``..., or soundfile's subtype for another format."""
    channels: int
    sample_rate: int
    frames: int
    """Whole sample frames in the file, whatever the header says."""
    seconds: float
    size: int
    """File size in bytes."""
    header_frames: int | None
    """The frames the header claims; None when it says it does not know."""
    needs_repair: bool
    """True when the header disagrees with the file (see :func:`repair`)."""


@dataclass(frozen=True)
class RepairResult:
    """What :func:`repair` did."""

    repaired: bool
    """True when the header was rewritten (or a partial frame cut off)."""
    frames: int
    """Whole sample frames readable now."""
    seconds: float
    header_frames_before: int | None
    """The frames the header claimed before the repair."""
    bytes_cut: int
    """Bytes of a partial last frame cut off the end of the file."""


def probe(path: Path | str) -> RecordingProbe:
    """Describe the recording at ``path`` without changing it."""
    size = _size(path)
    layout = _layout(path)
    if layout is None:
        return _probe_with_soundfile(path, size)
    return RecordingProbe(layout.format, layout.encoding, layout.channels, layout.sample_rate,
                          layout.frames, layout.frames / layout.sample_rate, size,
                          layout.header_frames, layout.needs_repair)


def repair(path: Path | str) -> RepairResult:
    """Make the header of the WAV, AIFF or FLAC file at ``path`` agree with its audio.

    Does nothing to a file whose header is right. Raises
    :class:`~scorch.errors.AudioFileError` for other formats.
    """
    size = _size(path)
    layout = _layout(path)
    if layout is None:
        raise AudioFileError(f"{path}: only WAV, AIFF and FLAC headers are repaired")
    if layout.needs_repair:
        with open(path, "r+b") as file:
            if layout.truncate_to is not None:
                file.truncate(layout.truncate_to)
            for patch in layout.patches:
                file.seek(patch.offset)
                file.write(patch.data)
            file.flush()
            os.fsync(file.fileno())
    cut = max(0, size - layout.truncate_to) if layout.truncate_to is not None else 0
    return RepairResult(layout.needs_repair, layout.frames, layout.frames / layout.sample_rate,
                        layout.header_frames, cut)


def _size(path: Path | str) -> int:
    try:
        return os.stat(path).st_size
    except OSError as err:
        raise AudioFileError(f"{path}: {err.strerror}") from err


def _layout(path: Path | str) -> Layout | None:
    """Return the layout of a WAV, AIFF or FLAC file; None for another format."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size

        def read_at(offset: int, length: int) -> bytes:
            file.seek(offset)
            return file.read(length)

        reader: ReadAt = read_at
        if size == 0:
            # What a killed FLAC writer leaves if it dies before its first block.
            raise AudioFileError(f"{path}: empty file, not even a header was written")
        parser = _PARSERS.get(reader(0, 4))
        if parser is None:
            return None
        try:
            return parser(reader, size)
        except AudioFileError as err:
            raise AudioFileError(f"{path}: {err}") from err


def _probe_with_soundfile(path: Path | str, size: int) -> RecordingProbe:
    import soundfile

    try:
        info = soundfile.info(str(path))
    except (soundfile.LibsndfileError, RuntimeError) as err:
        raise AudioFileError(f"{path}: not a recording soundfile can read: {err}") from err
    return RecordingProbe(info.format, info.subtype, info.channels, info.samplerate,
                          info.frames, info.frames / info.samplerate, size, info.frames, False)
