"""The errors the audio package raises."""

from __future__ import annotations


class AudioFileError(ValueError):
    """A file that cannot be read, or repaired, as audio."""
