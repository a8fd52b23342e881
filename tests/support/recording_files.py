"""Sound files as recordings leave them: exact stereo samples, headers a killed writer left."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

FRAMES = 10000  # not a multiple of FLAC's 4096-sample blocks


def stereo_ramp(frames: int = FRAMES) -> np.ndarray:
    """Return distinct, exactly representable samples: a ramp on the left, its negation right."""
    left = (np.arange(frames) % 2000 - 1000) / 1024.0
    return np.stack([left, -left], axis=1)


def chunks(data: bytes | bytearray, start: int, endian: str) -> dict[bytes, int]:
    """Return where each RIFF/IFF chunk's header starts, by chunk name."""
    found, position = {}, start
    while position + 8 <= len(data):
        name = bytes(data[position : position + 4])
        (length,) = struct.unpack_from(endian + "I", data, position + 4)
        found[name] = position
        if name in (b"data", b"SSND"):
            break
        position += 8 + length + (length & 1)
    return found


def as_a_killed_writer_leaves_it(path: Path) -> None:
    """Put back the header libsndfile wrote at open, as a writer killed mid-way leaves it."""
    data = bytearray(path.read_bytes())
    if data[:4] == b"RIFF":
        at = chunks(data, 12, "<")
        struct.pack_into("<I", data, 4, 8)
        struct.pack_into("<I", data, at[b"data"] + 4, 0)
        if b"fact" in at:
            struct.pack_into("<I", data, at[b"fact"] + 8, 0)
    elif data[:4] == b"FORM":
        at = chunks(data, 12, ">")
        struct.pack_into(">I", data, 4, 0xFFFFFFF8)
        struct.pack_into(">I", data, at[b"COMM"] + 10, 0)
        struct.pack_into(">I", data, at[b"SSND"] + 4, 8)
    else:  # FLAC: total samples, frame sizes and MD5 all "unknown"
        packed = struct.unpack_from(">Q", data, 18)[0] & ~((1 << 36) - 1)
        struct.pack_into(">Q", data, 18, packed)
        data[12:18] = bytes(6)
        data[26:42] = bytes(16)
    path.write_bytes(bytes(data))
