"""The patterns and proxies one room's sclang plays: recorded, and restored after it restarts.

:class:`Patterns` belongs to the Room actor (``proxy.patterns``): every method
runs in the actor's thread. sclang's reader thread hands it the ``pattern`` records
(``ScorchPatterns.sc``) with a ``tell``; after a new sclang attached (a crash, a hang,
a timeout, a recompile), :meth:`Patterns.restore` defines them again and resumes
those that played on the next bar of the room's clock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace

import pykka

from actors.room.processes import Processes, RoomSettings
from scorch.notes import Capture, Note, velocity_of
from scorch.primitives.sclang import (
    Batch,
    ExecuteResult,
    PatternEvent,
    parse_events,
    parse_gone,
    parse_pattern,
    restore_code,
)
from scorch.state import Bus, DesiredState, Kind, PatternChanged, PatternGone, RoomView, Timeline

log = logging.getLogger(__name__)

#: How long the restore code may take in sclang (it only defines and schedules).
RESTORE_TIMEOUT = 10.0
#: sclang restarting again this soon after patterns resumed: one of them may be what
#: stops it (a Tdef that never yields), so the next restore defines them and plays none.
RELAPSE = 10.0
#: Seconds an event's beat on the room's clock may lie from its time for the beat to be
#: trusted: the clock follows the grid to a millisecond, and a tempo change reaches it
#: tens of milliseconds after the grid's.
BEAT_TRUST = 0.1

Event = Callable[..., None]


class Patterns:
    """Pdef, Pbindef, Tdef and Ndef of one room (actor thread)."""

    def __init__(self, name: str, desired: DesiredState, processes: Processes,
                 view: RoomView, bus: Bus, event: Event, settings: RoomSettings) -> None:
        self.name = name
        self._bus = bus
        self.notes = settings.pattern_notes
        """Where the notes the patterns play go: a ring per pattern, ``ROOM/KEY``."""
        self._grid = settings.grid
        """The grid the room's clock follows (a note's beat on it is its onset)."""
        self._desired = desired
        self._processes = processes
        self._view = view
        self._event = event
        self._resumed_at: float | None = None
        """``time.monotonic()`` of the last restore that resumed patterns."""

    def bind(self, recorded: Callable[[str, str], object]) -> None:
        """Take sclang's records through the actor's mailbox (``recorded``: its proxy's)."""

        def hand_off(name: str, payload: str) -> None:  # sclang's reader thread
            if name == "pattern-events":  # a few a second: kept here, not via the mailbox
                try:
                    self.played(payload)
                except Exception:  # the reader thread must live on: it reads every record
                    log.exception("%s: pattern events not kept", self.name)
                return
            self._view.records_handed += 1
            try:
                recorded(name, payload)
            except pykka.ActorDeadError:  # never taken: none on its way
                self._view.records_handed -= 1

        self._processes.on_pattern = hand_off
        self._processes.on_sclang_started = self.restore

    def recorded(self, name: str, payload: str) -> None:
        """Take one ``pattern``, ``pattern-gone`` or ``pattern-error`` record from sclang."""
        try:
            self._record(name, payload)
        finally:
            self._view.records_taken += 1

    def _record(self, name: str, payload: str) -> None:
        try:
            if name == "pattern":
                self._desired.record_pattern(parse_pattern(payload))
            elif name == "pattern-gone":
                key, kind = parse_gone(payload), payload.partition("\t")[0]
                held = self._desired.patterns.get(key)
                # a Pbindef whose source became a Pbind is a Pdef now: reported as such
                # before its old kind is reported gone, under the same key
                if held is not None and held.kind == kind:
                    del self._desired.patterns[key]
            elif name == "pattern-error":
                self._event(Kind.STARTUP_ERROR, f"pattern not restored: {payload}")
                return
            else:
                return
        except ValueError as err:
            log.warning("%s: %s", self.name, err)
            return
        self.publish()

    def played(self, payload: str) -> None:
        """Take one batch of the events the patterns played (sclang's reader thread).

        Each pattern's last event time goes to the view; each note to the pattern's ring,
        on this process's monotonic clock (the one reader thread of this room writes it), at
        its beat's time on the grid the room's clock follows.
        """
        try:
            batch = parse_events(payload)
        except ValueError as err:
            log.warning("%s: pattern events: %s", self.name, err)
            return
        last = batch.last_times()
        if last:
            self._view.pattern_times = {**self._view.pattern_times, **last}
        if self.notes is not None:
            keep(self.notes, self.name, batch, time.monotonic() - time.time(), self._grid())

    def publish(self) -> None:
        """Show the patterns to readers (a new dict: they read it unlocked); announce each
        that changed or went."""
        before, now = self._view.patterns, dict(self._desired.patterns)
        self._view.patterns = now
        for key, record in now.items():
            if before.get(key) != record:
                self._bus.publish(PatternChanged(self.name, key, record.kind, record.name,
                                                 record.playing, record.mute))
        for key in before.keys() - now.keys():
            self._bus.publish(PatternGone(self.name, key))

    def restore(self, kinds: tuple[str, ...] | None = None) -> None:
        """Define every recorded pattern in the new sclang; those that played resume.

        ``kinds``: only these (after an scsynth restart, sclang's Pdefs and Tdefs play on,
        but an Ndef's group and synths died with the old scsynth).
        """
        session = self._processes.session
        patterns = [p for p in self._desired.patterns.values()
                    if kinds is None or p.kind in kinds]
        if session is None or not patterns:
            return
        now = time.monotonic()
        # only a new sclang can be one a pattern stops again
        if kinds is None and self._resumed_at is not None and now - self._resumed_at < RELAPSE:
            stopped = [p.key for p in patterns if p.playing]
            patterns = [replace(p, playing=False) for p in patterns]
            for p in patterns:
                self._desired.patterns[p.key] = p
            self.publish()
            self._event(Kind.STARTUP_ERROR, f"sclang restarted again within {RELAPSE:g} s of "
                        f"resuming patterns: defined again, not resumed: {', '.join(stopped)}",
                        patterns=stopped)
        if kinds is None:
            self._resumed_at = now if any(p.playing for p in patterns) else None
        _, future = session.submit(restore_code(patterns), RESTORE_TIMEOUT, raw=True)
        future.add_done_callback(self._restored)
        playing = [p.key for p in patterns if p.playing]
        self._event(Kind.RESTORED, f"patterns defined again: {len(patterns)}; resuming on the "
                    f"next bar: {', '.join(playing) or 'none'}", process="sclang",
                    patterns=[p.key for p in patterns])

    def _restored(self, future: Future[ExecuteResult]) -> None:
        try:
            result = future.result()
        except Exception as err:
            self._event(Kind.STARTUP_ERROR, f"patterns were not restored: {err}")
            return
        if not result.ok and result.error is not None:
            self._event(Kind.STARTUP_ERROR, f"patterns were not restored: "
                        f"{result.error.describe()}")


def source_of(room: str, key: str) -> str:
    """The capture's source name of a pattern's notes: ``hall/Pdef acc`` (``hall/code``)."""
    return f"{room}/{key or 'code'}"


def onset_of(event: PatternEvent, shift: float, grid: Timeline | None) -> float:
    """When ``event`` played on the monotonic clock: its beat's time on ``grid``.

    Its seconds came through sclang's clock and the wall clock, a fraction of a
    millisecond off the grid (a downbeat read as the bar before's last beat); its
    beat on the clock that follows the grid is exact. A beat further than
    :data:`BEAT_TRUST` from its seconds is a clock not yet on the grid (a new sclang
    before the conductor told it the beat): the seconds are kept.
    """
    seconds = event.time + shift
    if event.beat is None or grid is None:
        return seconds
    on_grid = grid.time_at(event.beat)
    return on_grid if abs(on_grid - seconds) <= BEAT_TRUST else seconds


def keep(notes: Capture, room: str, batch: Batch, shift: float,
         grid: Timeline | None = None) -> None:
    """Put the notes of ``batch`` in their patterns' rings (``shift``: Unix to monotonic;
    ``grid``: the one the room's clock follows)."""
    for event in batch.events:
        if not event.pitches:
            continue
        ring = notes.ring(source_of(room, event.key))
        velocity = velocity_of(event.amp)
        onset = onset_of(event, shift, grid)
        for pitch in event.pitches:
            ring.add(Note(onset, event.sustain, pitch, velocity, 0, ring.source))
