"""What a sound plays as music: its tempo and timing on a grid, its key and chords.

The models travel as JSON (plain numbers); the functions measure samples and import
numpy (and the modules that use it) inside the call only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from scorch.audio.music.chords import Span, progression
from scorch.audio.music.key import Key, find_key
from scorch.audio.music.tempo import MIN_ONSETS, GridFit, estimate, fit

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: A key is named from at least this many pitch classes (a bass line of two notes has none).
MIN_PITCH_CLASSES = 3
#: ...and when its profile correlates at least this well with the key's.
MIN_KEY_CORRELATION = 0.5
#: Chords listed at most.
MAX_CHORDS = 24
#: A tempo that fewer onset pairs keep than this share is said to be a weak pulse (a
#: steady beat whose onsets wander by 10 ms each, as a loaded machine plays them, keeps
#: about half; a regular one nearly all).
WEAK_PULSE = 0.5
_SEGMENTS = 48  # stretches a sound is split into for its chords, at most
_PRESENT = 0.15
_SAME_TEMPO = 0.02
_MOST_BEATS = 4096  # beats given a chord each at most (a long range: its start)
_BASS_SHARE = 0.25  # a note sounding this much of a stretch may be its bass


class Grid(NamedTuple):
    """The beat grid a sound is measured against."""

    bpm: float
    beat_at: float | None
    """Seconds into the audio where a beat falls (any beat); None: not known (a file)."""
    source: str
    """What the grid is, for a person: "the installation's grid"..."""
    clock: float = 1.0
    """Wall-clock seconds per second of the audio (a room's audio clock may run slow);
    ``beat_at`` is in wall-clock seconds from the audio's start."""


class Rhythm(BaseModel):
    """The tempo of a rhythmic sound and how its onsets lie on a grid."""

    model_config = ConfigDict(frozen=True)

    tempo_bpm: float = Field(description="The tempo heard in the onsets.")
    tempo_strength: float = Field(description="Share of onset pairs that agree with it, 0-1.")
    grid: str = Field(description="The grid the onsets were placed on: its source, bpm and "
                      "subdivision.")
    grid_bpm: float
    subdivision: str = Field(description="beats, eighths, triplets, sixteenths...: the "
                             "coarsest that holds the onsets.")
    phase_known: bool = Field(description="True when the grid's beats were known (a room "
                              "on the installation's tempo); False: fitted to the onsets.")
    median_ms: float = Field(description="Median distance of the onsets from their grid "
                             "lines, ms (negative: early).")
    worst_ms: float = Field(description="The onset furthest from its line, ms, signed.")
    onsets: int
    audio_clock: float | None = Field(None, description=(
        "Wall-clock seconds per second of the room's audio, when it was off by more than "
        "0.5 % (1.05: 5 % slow, as a headless driver on a busy machine runs); "
        "the tempo and offsets are in wall-clock time, as patterns are timed."))

    def lines(self) -> list[str]:
        """The figures as a line of text."""
        phase = "" if self.phase_known else ", phase fitted"
        weak = (f" (a weak pulse: {self.tempo_strength:.0%} of the onset pairs keep it; the "
                "onsets are irregular)" if self.tempo_strength < WEAK_PULSE else "")
        clock = (f" (times on the wall clock: the room's audio ran {self.audio_clock:.3f} "
                 "s of wall clock per second)" if self.audio_clock else "")
        return [f"rhythm: {self.tempo_bpm:g} bpm{weak}; onsets on {self.grid}{phase}: median "
                f"{self.median_ms:+.1f} ms, worst {self.worst_ms:+.1f} ms{clock}"]


class ChordAt(BaseModel):
    """One chord and when it sounds."""

    model_config = ConfigDict(frozen=True)

    chord: str = Field(description="Such as Am7, D7, C, F#m.")
    start: float = Field(description="Seconds.")
    end: float


class Harmony(BaseModel):
    """The key and chords of what plays."""

    model_config = ConfigDict(frozen=True)

    key: str | None = Field(description="Tonic and mode, such as 'D dorian' or 'F# minor' "
                            "(Krumhansl-Schmuckler, then the mode); None: too few notes.")
    key_plain: str | None = Field(description="The major or minor key alone.")
    key_correlation: float | None = Field(description="How well the notes fit the key's "
                                          "profile, -1 to 1.")
    chords: list[ChordAt] = Field(description="The chords in time order, a held chord once.")
    more_chords: int = Field(0, description="Chords left out after the first 24.")

    def lines(self) -> list[str]:
        """The key and chords as a line of text."""
        key = (f"{self.key} (fit {self.key_correlation:.2f})" if self.key
               else "key unclear")
        chords = f"; chords: {self.progression_text()}" if self.chords else ""
        return [f"harmony: {key}{chords}"]

    def progression_text(self) -> str:
        """Such as ``Am7 - D7 - G``."""
        text = " - ".join(c.chord for c in self.chords)
        return f"{text} (and {self.more_chords} more)" if self.more_chords else text


def rhythm(onsets: Sequence[float], grid: Grid | None,
           ) -> tuple[Rhythm, tuple[float, float]] | None:
    """The tempo of ``onsets`` and how they lie on ``grid`` (None: their own tempo's),
    with where a beat falls and how long it is (seconds); None with too few onsets."""
    if grid is not None and grid.beat_at is not None:
        # A room's capture begins mid-sound: what played at its start (an onset at 0)
        # began before it, at a time not heard, so it says nothing of the grid.
        onsets = [t for t in onsets if t > 0.0]
    if len(onsets) < MIN_ONSETS:
        return None
    clock = grid.clock if grid is not None else 1.0
    onsets = [t * clock for t in onsets]  # on the wall clock, as the grid is
    tempo = estimate(onsets)
    if tempo is None:
        return None
    if grid is not None and grid.beat_at is None and not _agree(tempo.bpm, grid.bpm):
        grid = Grid(tempo.bpm, None, f"its own tempo (not {grid.source}, {grid.bpm:g} bpm)")
    bpm = grid.bpm if grid is not None else tempo.bpm
    placed: GridFit | None = fit(onsets, bpm, grid.beat_at if grid is not None else None)
    if placed is None:
        return None
    source = grid.source if grid is not None else "its own tempo"
    found = Rhythm(tempo_bpm=round(tempo.bpm, 1), tempo_strength=round(tempo.strength, 2),
                   grid=f"{source} ({bpm:g} bpm, {placed.name})", grid_bpm=round(bpm, 3),
                   subdivision=placed.name, phase_known=placed.phase_given,
                   median_ms=round(placed.median * 1000, 1),
                   worst_ms=round(placed.worst * 1000, 1), onsets=len(onsets),
                   audio_clock=round(clock, 4) if clock != 1.0 else None)
    first = min(onsets)
    line = (grid.beat_at if grid is not None and grid.beat_at is not None
            else first - placed.offsets[0])
    return found, (line / clock, 60.0 / bpm / clock)  # in the audio's own seconds


def _agree(heard: float, grid: float) -> bool:
    """Whether a tempo heard is the grid's, or half or twice it, within 2 %."""
    return any(abs(heard * factor / grid - 1) <= _SAME_TEMPO for factor in (0.5, 1.0, 2.0))


def key_of(profile: Sequence[float]) -> Key | None:
    """The key of a profile, None with fewer than three pitch classes or a poor fit."""
    strongest = max(profile) if profile else 0.0
    if strongest <= 0 or sum(w >= _PRESENT * strongest for w in profile) < MIN_PITCH_CLASSES:
        return None
    found = find_key(profile)
    return found if found is not None and found.correlation >= MIN_KEY_CORRELATION else None


def harmony_of(profile: Sequence[float], spans: list[Span]) -> Harmony | None:
    """The key of a whole profile and the chords of its stretches; None when neither."""
    key = key_of(profile)
    if key is None and not spans:
        return None
    chords = [ChordAt(chord=s.chord.name, start=round(s.start, 3), end=round(s.end, 3))
              for s in spans[:MAX_CHORDS]]
    return Harmony(key=key.name if key else None, key_plain=key.plain if key else None,
                   key_correlation=round(key.correlation, 3) if key else None,
                   chords=chords, more_chords=max(0, len(spans) - MAX_CHORDS))


def harmony(mono: NDArray[np.float64], sample_rate: int, onsets: Sequence[float],
            beat: tuple[float, float] | None) -> Harmony | None:
    """The key and chords of ``mono``: chords per beat (``beat``: a beat's time and
    length), else between onsets, else per second."""
    from scorch.audio.music.chroma import MIN_SECONDS, chroma

    seconds = len(mono) / sample_rate
    bounds = _bounds(seconds, onsets, beat)
    segments = []
    total = [0.0] * 12
    for start, end in itertools.pairwise(bounds):
        if end - start < MIN_SECONDS:
            continue
        heard = chroma(mono[round(start * sample_rate):round(end * sample_rate)], sample_rate)
        segments.append((start, end, heard.profile, heard.bass))
        total = [t + w * (end - start) for t, w in zip(total, heard.profile, strict=True)]
    return harmony_of(total, progression(segments))


def harmony_of_notes(notes: Sequence[tuple[float, float, int]],
                     beat: tuple[float, float] | None) -> Harmony | None:
    """The key and chords of (onset, duration, MIDI pitch) notes, times in seconds: a chord
    per beat (``beat``: a beat's time and length), else per distinct onset."""
    if not notes:
        return None
    first = min(onset for onset, _, _ in notes)
    last = max(onset + duration for onset, duration, _ in notes)
    if beat is not None:
        at, length = beat
        start = at + math.floor((first - at) / length + 1e-9) * length
        count = min(_MOST_BEATS, math.ceil((last - start) / length - 1e-9))
        bounds = [start + i * length for i in range(count + 1)]
    else:
        bounds = sorted({onset for onset, _, _ in notes} | {last})
    segments = []
    for start, end in itertools.pairwise(bounds):
        profile = [0.0] * 12
        low: int | None = None
        for onset, duration, pitch in notes:
            overlap = min(end, onset + duration) - max(start, onset)
            if overlap <= 0:
                continue
            profile[pitch % 12] += overlap
            if overlap >= _BASS_SHARE * (end - start) and (low is None or pitch < low):
                low = pitch
        segments.append((start - first, end - first, profile, None if low is None else low % 12))
    total = [0.0] * 12
    for _, duration, pitch in notes:
        total[pitch % 12] += max(0.0, duration)
    return harmony_of(total, progression(segments))


def _bounds(seconds: float, onsets: Sequence[float],
            beat: tuple[float, float] | None) -> list[float]:
    """Where a sound's stretches start and end, at most :data:`_SEGMENTS` of them."""
    if beat is not None:
        at, length = beat
        first = at % length
        bounds = [first + i * length for i in range(int((seconds - first) / length) + 1)]
    elif len(onsets) >= 2:
        bounds = list(onsets)
    else:
        bounds = [float(i) for i in range(int(seconds) + 1)]
    bounds = sorted({0.0, *[b for b in bounds if 0 < b < seconds], seconds})
    while len(bounds) - 1 > _SEGMENTS:
        bounds = bounds[::2] + ([] if (len(bounds) - 1) % 2 == 0 else [bounds[-1]])
    return bounds
