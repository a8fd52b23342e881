"""Check an AIFF or AIFF-C header against the file's length, and say how to fix it. Pure.

A writer that dies before closing leaves the header it wrote at open:
libsndfile (so scsynth's DiskOut) writes a FORM size of 0xFFFFFFF8 (0 less 8,
unsigned), 0 frames in ``COMM`` and an ``SSND`` chunk of 8 bytes (its offset
and block size, no audio), and fixes them only when the file is closed.
libsndfile then reads 0 frames, though the audio after the header is intact.
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

from scorch.audio.file_layout import Layout, Patch, ReadAt
from scorch.errors import AudioFileError

_HEAD = 1 << 16
# AIFF-C compression types whose samples are plain numbers, and their encodings.
_ENCODINGS = {b"NONE": "int", b"twos": "int", b"sowt": "int", b"raw ": "uint",
              b"fl32": "float32", b"FL32": "float32", b"fl64": "float64", b"FL64": "float64",
              b"ulaw": "ulaw", b"ULAW": "ulaw", b"alaw": "alaw", b"ALAW": "alaw"}


class _Common(NamedTuple):
    at: int
    """Where the COMM chunk's body starts."""
    channels: int
    frames: int
    encoding: str
    sample_rate: int
    frame_bytes: int


def inspect(read_at: ReadAt, size: int) -> Layout:
    """Return the layout of the AIFF or AIFF-C file of ``size`` bytes that ``read_at`` reads."""
    head = read_at(0, _HEAD)
    if len(head) < 12 or head[:4] != b"FORM" or head[8:12] not in (b"AIFF", b"AIFC"):
        raise AudioFileError("not an AIFF or AIFF-C file")
    kind = head[8:12].decode()
    common: _Common | None = None
    position = 12
    while position + 8 <= len(head):
        chunk = head[position : position + 4]
        (length,) = struct.unpack_from(">I", head, position + 4)
        body = position + 8
        if chunk == b"COMM":
            common = _common(head, body, kind)
        elif chunk == b"SSND":
            if common is None:
                raise AudioFileError("SSND chunk before COMM chunk")
            return _layout(head, size, kind, common, position, length)
        position = body + length + (length & 1)
    raise AudioFileError(f"no SSND chunk in the first {_HEAD} bytes")


def _common(head: bytes, body: int, kind: str) -> _Common:
    channels, frames, bits = struct.unpack_from(">HIh", head, body)
    rate = _extended(head[body + 8 : body + 18])
    compression = head[body + 18 : body + 22] if kind == "AIFC" else b"NONE"
    name = _ENCODINGS.get(compression)
    if name is None:
        raise AudioFileError(f"AIFF-C compression {compression!r} is not repaired")
    if channels == 0 or rate <= 0:
        raise AudioFileError(f"COMM chunk says {channels} channels at {rate} Hz")
    sample_bytes = {"float32": 4, "float64": 8, "ulaw": 1, "alaw": 1}.get(name, (bits + 7) // 8)
    encoding = f"{name}{bits}" if name in ("int", "uint") else name
    return _Common(body, channels, frames, encoding, round(rate), channels * sample_bytes)


def _extended(data: bytes) -> float:
    """Decode the 80-bit IEEE 754 extended float that AIFF stores its sample rate in."""
    exponent, mantissa = struct.unpack(">HQ", data)
    sign = -1.0 if exponent & 0x8000 else 1.0
    exponent &= 0x7FFF
    if exponent == 0 and mantissa == 0:
        return 0.0
    return sign * math.ldexp(mantissa, exponent - 16383 - 63)


def _layout(head: bytes, size: int, kind: str, common: _Common, ssnd_at: int,
            length: int) -> Layout:
    (form_size,) = struct.unpack_from(">I", head, 4)
    (offset,) = struct.unpack_from(">I", head, ssnd_at + 8)
    data_at = ssnd_at + 16 + offset
    declared = length - 8 - offset
    fields = ("AIFF" if kind == "AIFF" else "AIFC", common.encoding, common.channels,
              common.sample_rate, common.frames)
    # An empty SSND chunk or one past the end of the file: the audio runs to the
    # end. A size inside the file is trusted, as chunks may follow the audio.
    if 0 < declared <= size - data_at:
        frames = declared // common.frame_bytes
        patches = []
        if common.frames != frames:
            patches.append(Patch(common.at + 2, struct.pack(">I", frames)))
        if form_size + 8 > size or form_size + 8 < data_at + declared:
            patches.append(Patch(4, struct.pack(">I", size - 8)))
        return Layout(*fields, frames, tuple(patches))

    frames = max(0, size - data_at) // common.frame_bytes
    data_bytes = frames * common.frame_bytes
    end = data_at + data_bytes + (data_bytes & 1)  # IFF chunks are padded to even
    if end - 8 > 0xFFFFFFFF:
        raise AudioFileError("the audio is over 4 GiB, more than an AIFF header can count")
    if declared == data_bytes and common.frames == frames and form_size == end - 8 \
            and end == size:
        return Layout(*fields, frames)
    patches = [Patch(4, struct.pack(">I", end - 8)),
               Patch(common.at + 2, struct.pack(">I", frames)),
               Patch(ssnd_at + 4, struct.pack(">I", 8 + offset + data_bytes))]
    if data_bytes & 1:
        patches.append(Patch(end - 1, b"\0"))
    return Layout(*fields, frames, tuple(patches), end if end != size else None)
