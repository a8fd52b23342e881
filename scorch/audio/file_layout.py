"""Where a recording's audio lies, and what its header must say to match. Pure.

The parsers (:mod:`~scorch.audio.wav_header`, :mod:`~scorch.audio.aiff_header`,
:mod:`~scorch.audio.flac_stream`) read through a :data:`ReadAt` callable and
return a :class:`Layout`; :mod:`~scorch.audio.recording_file` does the I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Read ``length`` bytes at ``offset`` (fewer at the end of the file).
ReadAt = Callable[[int, int], bytes]


@dataclass(frozen=True)
class Patch:
    """Bytes to write over a file at an offset."""

    offset: int
    data: bytes


@dataclass(frozen=True)
class Layout:
    """What a file holds, and how to make its header say so."""

    format: str
    """``WAV``, ``AIFF``, ``AIFC`` or ``FLAC``."""
    encoding: str
    """``float32``, ``int16``, ``int24``... (``flac16`` and the like for FLAC)."""
    channels: int
    sample_rate: int
    header_frames: int | None
    """The sample frames the header claims; None when it says it does not know."""
    frames: int
    """The whole sample frames the file really holds."""
    patches: tuple[Patch, ...] = ()
    """Header fields to rewrite, after truncating."""
    truncate_to: int | None = None
    """The file's new length, None to keep it: shorter to cut off a partial last
    frame (or a partial FLAC frame), one byte longer for a RIFF pad byte."""

    @property
    def needs_repair(self) -> bool:
        """Return True when the header disagrees with the file."""
        return bool(self.patches) or self.truncate_to is not None
