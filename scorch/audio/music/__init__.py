"""Hear what a sound plays as music: tempo and timing on a grid, key and chords.

:mod:`~scorch.audio.music.key`, :mod:`~scorch.audio.music.chords` and the grid of
:mod:`~scorch.audio.music.tempo` are plain Python; :mod:`~scorch.audio.music.chroma`
imports numpy at the top and is imported inside the calls that need it.
"""
