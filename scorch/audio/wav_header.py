"""Check a WAV header against the file's length, and say how to fix it. Pure.

A writer that dies before closing leaves the header it wrote at open:
libsndfile (so scsynth's DiskOut) writes a RIFF size of 8, a data size of 0
and, for float, a ``fact`` chunk counting 0 frames, and fixes them only when
the file is closed. The audio after the header is intact.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from scorch.audio.file_layout import Layout, Patch, ReadAt
from scorch.errors import AudioFileError

# The header (every chunk before the audio) must lie within this many bytes.
_HEAD = 1 << 16
_EXTENSIBLE = 0xFFFE
_UNKNOWN_SIZE = 0xFFFFFFFF


class _Format(NamedTuple):
    encoding: str
    channels: int
    sample_rate: int
    frame_bytes: int


def inspect(read_at: ReadAt, size: int) -> Layout:
    """Return the layout of the WAV file of ``size`` bytes that ``read_at`` reads."""
    head = read_at(0, _HEAD)
    if head[:4] == b"RF64":
        raise AudioFileError("RF64 (WAV over 4 GiB) headers are not repaired")
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise AudioFileError("not a RIFF/WAVE file")
    fmt: _Format | None = None
    fact_at: int | None = None
    position = 12
    while position + 8 <= len(head):
        chunk = head[position : position + 4]
        (length,) = struct.unpack_from("<I", head, position + 4)
        body = position + 8
        if chunk == b"fmt ":
            fmt = _format(head, body, length)
        elif chunk == b"fact" and length >= 4:
            fact_at = body
        elif chunk == b"data":
            if fmt is None:
                raise AudioFileError("data chunk before fmt chunk")
            return _layout(head, size, fmt, fact_at, body, length)
        position = body + length + (length & 1)
    raise AudioFileError(f"no data chunk in the first {_HEAD} bytes")


def _format(head: bytes, body: int, length: int) -> _Format:
    tag, channels, rate, _, block_align, bits = struct.unpack_from("<HHIIHH", head, body)
    if tag == _EXTENSIBLE and length >= 40:
        (tag,) = struct.unpack_from("<H", head, body + 24)  # the sub-format GUID starts with it
    if channels == 0 or rate == 0:
        raise AudioFileError(f"fmt chunk says {channels} channels at {rate} Hz")
    encoding = {1: f"{'uint' if bits == 8 else 'int'}{bits}", 3: f"float{bits}", 6: "alaw",
                7: "ulaw"}.get(tag, f"format 0x{tag:04x}")
    return _Format(encoding, channels, rate, block_align or channels * ((bits + 7) // 8))


def _layout(head: bytes, size: int, fmt: _Format, fact_at: int | None, data_at: int,
            declared: int) -> Layout:
    (riff_size,) = struct.unpack_from("<I", head, 4)
    claimed = None if declared == _UNKNOWN_SIZE else declared // fmt.frame_bytes
    facts = [fact_at] if fact_at is not None else []
    # A size of 0 (never fixed), "unknown", or past the end of the file: the
    # audio runs to the end. A size inside the file is trusted, as chunks may
    # follow the audio; only a RIFF size or fact count at odds with it is fixed.
    if 0 < declared <= size - data_at:
        frames = declared // fmt.frame_bytes
        patches = [Patch(at, struct.pack("<I", frames)) for at in facts
                   if struct.unpack_from("<I", head, at)[0] != frames]
        if riff_size + 8 > size or riff_size + 8 < data_at + declared:
            patches.append(Patch(4, struct.pack("<I", size - 8)))
        return Layout("WAV", fmt.encoding, fmt.channels, fmt.sample_rate, claimed, frames,
                      tuple(patches))

    frames = (size - data_at) // fmt.frame_bytes
    data_bytes = frames * fmt.frame_bytes
    end = data_at + data_bytes + (data_bytes & 1)  # RIFF chunks are padded to even
    if end - 8 >= _UNKNOWN_SIZE:
        raise AudioFileError("the audio is over 4 GiB, more than a WAV header can count")
    if declared == data_bytes and riff_size == end - 8 and end == size:
        return Layout("WAV", fmt.encoding, fmt.channels, fmt.sample_rate, claimed, frames)
    patches = [Patch(4, struct.pack("<I", end - 8)),
               Patch(data_at - 4, struct.pack("<I", data_bytes)),
               *(Patch(at, struct.pack("<I", frames)) for at in facts)]
    if data_bytes & 1:
        patches.append(Patch(end - 1, b"\0"))
    return Layout("WAV", fmt.encoding, fmt.channels, fmt.sample_rate, claimed, frames,
                  tuple(patches), end if end != size else None)
