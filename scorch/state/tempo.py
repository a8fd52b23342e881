"""The installation's beat grid: a tempo, which beat falls when, and a transport.

A :class:`Timeline` is a value: the tempo and one (beat, time) pair fix every
other beat's time, so changing the tempo re-anchors at "now" and the beat runs
on without a jump (phase is kept). Times are ``time.monotonic()`` seconds. The
transport (playing or stopped, song position) is what MIDI clock devices follow;
the grid itself always runs, as rooms' clocks and Link do.

:class:`TempoView` holds the current timelines (the installation's, and each
group's own) behind a lock, for readers in any thread: the MIDI clock thread,
the tempo operation, the rooms.

When a timed request happens (:func:`resolve`): ``at`` (a wall-clock time, the next beat
or bar) or ``delay``. A time there is Unix seconds (``time.time()``), the same on every host whose
clock chrony keeps in step; scsynth turns it into a sample of its own audio
clock when it gets the bundle (``scorch.primitives.scsynth.commands.at``).

"The next beat or bar of the shared tempo" needs a :class:`TempoGrid`: where
beat 0 fell, the tempo and the bar's length. Whoever runs the shared tempo
(Ableton Link, the ``tempo`` operation) hands one to :func:`resolve`; without
one, ``next_beat`` and ``next_bar`` are refused with what to do instead.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from scorch.errors import InvalidRequest
from scorch.state.bus import Bus
from scorch.state.changes import TempoChanged

#: Ableton Link's range, and a sane one for MIDI clock.
MIN_BPM, MAX_BPM = 20.0, 999.0
#: Seconds a start or continue lies ahead at least: a MIDI clock thread stops looking
#: at the tempo a moment before each tick, and must see the start before its first one.
LEAD = 0.005
INSTALLATION = ""
"""The scope of the installation's own tempo (groups use their name)."""


@dataclass(frozen=True, slots=True)
class Timeline:
    """The beat grid at one moment, and the transport."""

    bpm: float
    beats_per_bar: int = 4
    beat: float = 0.0
    """The grid's beat at ``at``."""
    at: float = 0.0
    """A ``time.monotonic()`` time."""
    playing: bool = True
    start: float = 0.0
    """While playing: the grid beat at which the song position was 0."""
    position: float = 0.0
    """While stopped: the song position (in beats) where it stopped."""

    def beat_at(self, t: float) -> float:
        """The grid's beat at time ``t``."""
        return self.beat + (t - self.at) * self.bpm / 60.0

    def time_at(self, beat: float) -> float:
        """The time at which the grid reaches ``beat``."""
        return self.at + (beat - self.beat) * 60.0 / self.bpm

    def bar_phase(self, t: float) -> float:
        """Beats into the current bar at ``t`` (0 <= phase < beats_per_bar)."""
        return self.beat_at(t) % self.beats_per_bar

    def song_position(self, t: float) -> float:
        """The transport's position in beats at ``t``."""
        return self.beat_at(t) - self.start if self.playing else self.position

    def with_tempo(self, bpm: float, t: float) -> Timeline:
        """The same grid from ``t`` on at ``bpm``: the beat runs on without a jump."""
        return replace(self, bpm=bpm, beat=self.beat_at(t), at=t)

    def with_beat(self, beat: float, t: float) -> Timeline:
        """The grid moved so that ``beat`` falls at ``t``; the song position runs on."""
        shift = beat - self.beat_at(t)
        return replace(self, beat=beat, at=t, start=self.start + shift)

    def stopped(self, t: float) -> Timeline:
        """The transport stopped at ``t``, its position kept."""
        if not self.playing:
            return self
        return replace(self, playing=False, position=self.song_position(t))

    def started(self, t: float, position: float | None = None) -> Timeline:
        """The transport running from ``position`` (None: where it stopped).

        From the start it begins on the next bar line; continuing, on the next
        sixteenth, from the sixteenth it stopped in (a song position pointer counts
        sixteenths): a MIDI device counts from the clock tick after start or continue,
        and the rooms' bars line up with the device's.
        """
        position = math.floor(self.position * 4 + 1e-9) / 4 if position is None else position
        unit = self.beats_per_bar if position == 0 else 0.25
        begin = math.ceil(self.beat_at(t + LEAD) / unit - 1e-9) * unit
        return replace(self, playing=True, start=begin - position, position=position)


#: A clock coming in whose position is this far from the grid's has jumped: anchor again.
REANCHOR_BEATS = 1.0


def follow_external(line: Timeline, bpm: float, at: float, playing: bool,
                    position: float) -> Timeline:
    """The grid following a MIDI clock coming in: its tempo, transport and song position.

    The grid runs on: a start anchors the song's position on the grid beat nearest
    the grid's own with the same bar phase (at most half a bar away), and while the
    clock plays each beat is that anchor plus its position. So the rooms' clocks,
    which keep the grid's beat, move by at most half a bar when a drum machine
    starts, not back to beat 0 after an hour of playing.
    """
    beat = line.beat_at(at)
    if not playing:
        stopped = replace(line, bpm=bpm, beat=beat, at=at)
        return replace(stopped, playing=False, position=position) if line.playing else stopped
    start = line.start
    if not line.playing or abs(beat - start - position) > REANCHOR_BEATS:
        # started, or the song jumped (a restart, a song position pointer while playing)
        bar = line.beats_per_bar
        anchor = beat - (beat - position) % bar  # the latest grid beat in the song's bar phase
        if beat - anchor > bar / 2:
            anchor += bar
        start = anchor - position
    return replace(line, bpm=bpm, beat=start + position, at=at, playing=True, start=start)


def check_bpm(bpm: float) -> float:
    """Return ``bpm`` if it is a tempo scorch plays; ValueError saying the range if not."""
    if not (MIN_BPM <= bpm <= MAX_BPM) or math.isnan(bpm):
        raise ValueError(f"a tempo is {MIN_BPM:g} to {MAX_BPM:g} bpm, got {bpm:g}")
    return bpm


class TempoView:
    """The current timeline of each scope, safe to read and replace from any thread.

    With a ``bus``, each change of a scope's tempo, bar length or transport is announced
    there (:class:`~scorch.state.changes.TempoChanged`); a move of the phase alone (Link's
    re-anchoring) is not.
    """

    def __init__(self, timelines: dict[str, Timeline], bus: Bus | None = None) -> None:
        self._bus = bus
        self._timelines = dict(timelines)
        self._changed = threading.Condition()
        self.version = 0
        """Counts replacements: a reader that saw version N knows when N+1 is there."""

    def get(self, scope: str = INSTALLATION) -> Timeline:
        """The timeline of ``scope`` (KeyError for a scope without its own tempo)."""
        with self._changed:
            return self._timelines[scope]

    def scopes(self) -> list[str]:
        """Every scope with a tempo: the installation's first, then groups'."""
        with self._changed:
            return list(self._timelines)

    def put(self, scope: str, timeline: Timeline) -> None:
        """Replace the timeline of ``scope`` and wake whoever waits for a change."""
        with self._changed:
            before = self._timelines.get(scope)
            self._timelines[scope] = timeline
            self.version += 1
            self._changed.notify_all()
        shown = (timeline.bpm, timeline.beats_per_bar, timeline.playing)
        if self._bus is not None and (before is None or shown != (
                before.bpm, before.beats_per_bar, before.playing)):
            self._bus.publish(TempoChanged(scope, *shown))

    def wait(self, version: int, timeout: float) -> int:
        """Wait until the version is past ``version`` or ``timeout`` passes; return it."""
        with self._changed:
            if self.version == version:
                self._changed.wait(timeout)
            return self.version

NEXT_BEAT: Literal["next_beat"] = "next_beat"
NEXT_BAR: Literal["next_bar"] = "next_bar"
Quantum = Literal["next_beat", "next_bar"]

#: An ``at`` or ``delay`` further ahead than this is refused (a typo, or milliseconds).
MAX_AHEAD = 3600.0
#: An ``at`` further in the past than this is refused: a clock is off, or the time is wrong.
#: Nearer past times play at once (scsynth runs a late bundle as soon as it gets it).
MAX_LATE = 10.0


class TempoGrid(NamedTuple):
    """The shared tempo's grid of beats in wall-clock time."""

    bpm: float
    """Beats per minute."""
    beats_per_bar: int
    """The bar's length in beats (bars start on beat 0, 4, 8... for 4)."""
    beat_zero: float
    """The Unix time of beat 0."""

    def beat_at(self, when: float) -> float:
        """The beat (fractional) at Unix time ``when``."""
        return (when - self.beat_zero) * self.bpm / 60.0

    def time_of(self, beat: float) -> float:
        """The Unix time of ``beat``."""
        return self.beat_zero + beat * 60.0 / self.bpm

    def next(self, quantum: Quantum, now: float) -> float:
        """The Unix time of the next beat, or of the next bar's first beat, after ``now``."""
        step = 1 if quantum == NEXT_BEAT else self.beats_per_bar
        beat = math.floor(self.beat_at(now) / step + 1e-9) * step + step
        return self.time_of(beat)


def resolve(at: float | Quantum | None, delay: float | None, now: float,
            grid: TempoGrid | None = None) -> float | None:
    """The Unix time a request happens at, or None for now.

    InvalidRequest says why when both are given, when the time is too far ahead
    or behind, or when a beat is asked for without a shared tempo.
    """
    if at is not None and delay is not None:
        raise InvalidRequest("give at or delay, not both")
    if delay is not None:
        if not 0 <= delay <= MAX_AHEAD:
            raise InvalidRequest(f"delay must be 0 to {MAX_AHEAD:g} s, found {delay:g}")
        return now + delay
    if at is None:
        return None
    if isinstance(at, str):
        if grid is None:
            raise InvalidRequest(
                f"at = {at!r} needs the shared tempo, and none runs here yet; give a time "
                "(Unix seconds) or a delay instead")
        return grid.next(at, now)
    if not math.isfinite(at):
        raise InvalidRequest(f"at must be a finite Unix time, found {at!r}")
    if at > now + MAX_AHEAD:
        raise InvalidRequest(f"at is {at - now:.1f} s ahead; at most {MAX_AHEAD:g} s is "
                             "allowed (at is a Unix time in seconds, e.g. time.time() + 2)")
    if at < now - MAX_LATE:
        raise InvalidRequest(f"at is {now - at:.1f} s in the past (now is {now:.3f}); is a "
                             "clock off? `scorch doctor` shows this host's offset")
    return float(at)
