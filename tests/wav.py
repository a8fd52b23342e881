"""Read the float WAV files that ``scsynth -N ... WAV float`` writes.

Standard library only, so the core does not depend on numpy; analysis code
turns :attr:`FloatWav.samples` into an array with ``numpy.frombuffer``.
"""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path

_FORMAT_IEEE_FLOAT = 3
_FORMAT_EXTENSIBLE = 0xFFFE
_FLOAT_SUBFORMAT = b"\x03\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


class WavError(ValueError):
    """A file that is not a 32-bit float WAV."""


@dataclass(frozen=True)
class FloatWav:
    """The audio of one float WAV file."""

    sample_rate: int
    channels: int
    samples: array[float]
    """Interleaved float32 samples, ``frames * channels`` of them."""

    @property
    def frames(self) -> int:
        """Return the number of sample frames."""
        return len(self.samples) // self.channels

    @property
    def duration(self) -> float:
        """Return the length in seconds."""
        return self.frames / self.sample_rate


def read_float_wav(path: Path | str) -> FloatWav:
    """Read a 32-bit IEEE float WAV (plain or WAVE_FORMAT_EXTENSIBLE)."""
    data = Path(path).read_bytes()
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise WavError(f"{path}: not a RIFF/WAVE file")
    pos = 12
    fmt: tuple[int, int, int, int] | None = None
    while pos + 8 <= len(data):
        chunk_id = data[pos : pos + 4]
        (size,) = struct.unpack_from("<I", data, pos + 4)
        body = pos + 8
        if chunk_id == b"fmt ":
            tag, channels, rate = struct.unpack_from("<HHI", data, body)
            (bits,) = struct.unpack_from("<H", data, body + 14)
            if tag == _FORMAT_EXTENSIBLE and size >= 40:
                tag = _FORMAT_IEEE_FLOAT if data[body + 24 : body + 40] == _FLOAT_SUBFORMAT else -1
            fmt = (tag, channels, rate, bits)
        elif chunk_id == b"data":
            if fmt is None:
                raise WavError(f"{path}: data chunk before fmt chunk")
            tag, channels, rate, bits = fmt
            if tag != _FORMAT_IEEE_FLOAT or bits != 32:
                raise WavError(f"{path}: not 32-bit float (format {tag}, {bits} bits)")
            # A writer that never finalised the header leaves the size at 0 or too big.
            end = min(body + size, len(data)) if size else len(data)
            usable = (end - body) // (4 * channels) * 4 * channels
            samples = array("f")
            samples.frombytes(data[body : body + usable])
            if sys.byteorder == "big":
                samples.byteswap()
            return FloatWav(sample_rate=rate, channels=channels, samples=samples)
        pos = body + size + (size & 1)
    raise WavError(f"{path}: no data chunk")
