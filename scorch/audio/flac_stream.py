"""Count the whole frames of a FLAC stream whose writer died, and say how to fix it. Pure.

libsndfile writes nothing when a FLAC file is opened: the header goes out with
the first block of audio. A writer that dies later leaves STREAMINFO saying 0
total samples (which FLAC defines as "unknown"), 0 for the frame sizes and an
all-zero MD5 (both "unknown" too), and every frame the encoder had flushed;
the block it was still filling is lost. libsndfile then reports 2**63 - 1
frames and cannot seek, so ``soundfile.read`` fails.

The fix is to find the last complete frame (sync code, header CRC-8, frame
CRC-16), cut off anything after it, and write the sample count it ends at
into STREAMINFO.
"""

from __future__ import annotations

import re
import struct
from typing import NamedTuple

from scorch.audio.file_layout import Layout, Patch, ReadAt
from scorch.errors import AudioFileError

# The last complete frame is looked for in this much of the end of the file:
# far more than any frame (4096 samples of 8 channels of 32 bits is 128 KiB).
_TAIL = 4 << 20
_STREAMINFO_AT = 8  # "fLaC", then the first metadata block's 4-byte header
_SYNC = re.compile(b"\xff[\xf8\xf9]")
_CHANNELS = (1, 2, 3, 4, 5, 6, 7, 8, 2, 2, 2)


class _StreamInfo(NamedTuple):
    max_block: int
    sample_rate: int
    channels: int
    bits: int
    total: int
    audio_at: int
    """Where the first frame starts, after the last metadata block."""


class _Frame(NamedTuple):
    start: int
    first_sample: int
    block: int


def inspect(read_at: ReadAt, size: int) -> Layout:
    """Return the layout of the FLAC file of ``size`` bytes that ``read_at`` reads."""
    if size == 0:
        raise AudioFileError("empty file: a FLAC writer writes its header with the first audio")
    info = _stream_info(read_at)
    fields = ("FLAC", f"flac{info.bits}", info.channels, info.sample_rate)
    if info.total:
        return Layout(*fields, info.total, info.total)
    tail_at = max(info.audio_at, size - _TAIL)
    found = _last_complete_frame(read_at(tail_at, size - tail_at), tail_at, info)
    if found is None:
        # No whole frame: STREAMINFO cannot say 0 samples (0 means unknown).
        return Layout(*fields, None, 0)
    last, end = found
    total = last.first_sample + last.block
    (packed,) = struct.unpack(">Q", read_at(_STREAMINFO_AT + 10, 8))
    packed = (packed & ~((1 << 36) - 1)) | total
    return Layout(*fields, None, total, (Patch(_STREAMINFO_AT + 10, struct.pack(">Q", packed)),),
                  end if end != size else None)


def _stream_info(read_at: ReadAt) -> _StreamInfo:
    head = read_at(0, 42)
    if len(head) < 42 or head[:4] != b"fLaC" or head[4] & 0x7F != 0:
        raise AudioFileError("not a FLAC stream starting with STREAMINFO")
    _, max_block = struct.unpack_from(">HH", head, _STREAMINFO_AT)
    (packed,) = struct.unpack_from(">Q", head, _STREAMINFO_AT + 10)
    rate, channels, bits = packed >> 44, ((packed >> 41) & 7) + 1, ((packed >> 36) & 31) + 1
    position, last = 4, False
    while not last:  # walk the metadata blocks to the first frame
        block = read_at(position, 4)
        if len(block) < 4:
            raise AudioFileError("FLAC metadata runs past the end of the file")
        last = bool(block[0] & 0x80)
        position += 4 + int.from_bytes(block[1:4], "big")
    return _StreamInfo(max_block, rate, channels, bits, packed & ((1 << 36) - 1), position)


def _last_complete_frame(
    tail: bytes, tail_at: int, info: _StreamInfo
) -> tuple[_Frame, int] | None:
    """Return the last frame of ``tail`` whose CRC-16 checks, and where it ends.

    A frame ends where another starts or at the end of the file.
    """
    starts = [match.start() for match in _SYNC.finditer(tail)]
    frames = [f for f in (_frame_header(tail, s, tail_at, info) for s in starts) if f]
    boundaries = [f.start - tail_at for f in frames] + [len(tail)]
    for index in range(len(frames) - 1, -1, -1):
        begin = frames[index].start - tail_at
        # A sync code inside audio may pass the header CRC by chance (1 in 256):
        # try every later boundary, nearest first, for the frame's own end.
        for end in boundaries[index + 1 :]:
            footer = int.from_bytes(tail[end - 2 : end], "big")
            if end - begin >= 4 and _crc16(tail[begin : end - 2]) == footer:
                return frames[index], tail_at + end
    return None


def _frame_header(data: bytes, at: int, data_at: int, info: _StreamInfo) -> _Frame | None:
    """Parse the frame header at ``data[at:]``; None unless it is one, CRC-8 and all."""
    if at + 6 > len(data):
        return None
    variable = data[at + 1] & 1
    block_code, rate_code = data[at + 2] >> 4, data[at + 2] & 15
    channel_code, bits_code = data[at + 3] >> 4, (data[at + 3] >> 1) & 7
    if (block_code == 0 or rate_code == 15 or channel_code > 10 or bits_code == 3
            or data[at + 3] & 1 or _CHANNELS[channel_code] != info.channels):
        return None
    number, position = _utf8_number(data, at + 4)
    if number is None:
        return None
    if block_code == 6:
        block, position = data[position] + 1 if position < len(data) else 0, position + 1
    elif block_code == 7:
        block, position = int.from_bytes(data[position : position + 2], "big") + 1, position + 2
    elif block_code == 1:
        block = 192
    elif block_code <= 5:
        block = 576 << (block_code - 2)
    else:
        block = 256 << (block_code - 8)
    position += {12: 1, 13: 2, 14: 2}.get(rate_code, 0)
    if position >= len(data) or _crc8(data[at:position]) != data[position]:
        return None
    first = number if variable else number * info.max_block
    return _Frame(data_at + at, first, block)


def _utf8_number(data: bytes, at: int) -> tuple[int | None, int]:
    """Decode FLAC's UTF-8-like coded frame or sample number."""
    if at >= len(data):
        return None, at
    lead = data[at]
    ones = next((n for n in range(8) if not lead & (0x80 >> n)), 8)
    if ones == 0:
        return lead, at + 1
    extra = ones - 1
    if extra == 0 or extra > 6 or at + 1 + extra > len(data):  # 10xxxxxx, 11111111, cut off
        return None, at
    value = lead & (0x3F >> extra)
    for byte in data[at + 1 : at + 1 + extra]:
        if byte & 0xC0 != 0x80:
            return None, at
        value = (value << 6) | (byte & 0x3F)
    return value, at + 1 + extra


def _table(polynomial: int, width: int) -> list[int]:
    top, mask = 1 << (width - 1), (1 << width) - 1
    table = []
    for byte in range(256):
        crc = byte << (width - 8)
        for _ in range(8):
            crc = ((crc << 1) ^ polynomial) & mask if crc & top else (crc << 1) & mask
        table.append(crc)
    return table


_CRC8 = _table(0x07, 8)
_CRC16 = _table(0x8005, 16)


def _crc8(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = _CRC8[crc ^ byte]
    return crc


def _crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[(crc >> 8) ^ byte]
    return crc
