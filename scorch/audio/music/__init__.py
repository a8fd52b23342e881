"""Hear what a sound plays as music: tempo and timing on a grid, key and chords.

:mod:`~scorch.audio.music.key`, :mod:`~scorch.audio.music.chords` and the grid of
:mod:`~scorch.audio.music.tempo` are plain Python; :mod:`~scorch.audio.music.chroma`
imports numpy at the top and is imported inside the calls that need it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.audio.music.figures import Grid, Harmony, Rhythm, harmony, harmony_of_notes, rhythm

__all__ = [
    "Grid", "Harmony", "Rhythm", "harmony", "harmony_of_notes", "rhythm",
]
__getattr__ = lazy_face(__name__, __file__)
