"""Room states and the bounded log of lifecycle events."""

from __future__ import annotations

import enum
import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any


class State(enum.StrEnum):
    """Where a room is in its life."""

    STOPPED = "STOPPED"
    BOOTING = "BOOTING"
    READY = "READY"
    RESTARTING = "RESTARTING"
    DEGRADED = "DEGRADED"
    """scsynth plays; sclang gave up (code cannot run until the room is restarted)."""
    FAILED = "FAILED"
    STOPPING = "STOPPING"


#: States in which scsynth plays (and MIDI, play and set reach it).
SOUNDING = (State.READY, State.DEGRADED)


class Kind(enum.StrEnum):
    """What happened."""

    BOOTING = "BOOTING"
    READY = "READY"
    CRASHED = "CRASHED"
    HUNG = "HUNG"
    RESTARTING = "RESTARTING"
    RESTORED = "RESTORED"
    FAILED = "FAILED"
    STOPPED = "STOPPED"
    SCLANG_RESTARTED = "SCLANG_RESTARTED"
    BOOT_FAILED = "BOOT_FAILED"
    STARTUP_ERROR = "STARTUP_ERROR"
    NODE_ENDED = "NODE_ENDED"
    DEGRADED = "DEGRADED"
    SERVER_REQUEST = "SERVER_REQUEST"
    BUFFER_LOST = "BUFFER_LOST"
    PATTERN_CHANGED = "PATTERN_CHANGED"
    """A pattern or proxy changed through the ``pattern`` operation (source, key, stop...)."""
    UNDONE = "UNDONE"
    """A change was undone or redone (``undo``, ``redo``, ``back``)."""
    SYNTHS_LOST = "SYNTHS_LOST"
    """Synths a scsynth crash took that scorch neither made nor restores (made by code)."""
    SCHEDULED = "SCHEDULED"
    """A schedule entry or a cue made its calls in the room (``[[schedule]]``, ``cue``)."""
    SCHEDULE_FAILED = "SCHEDULE_FAILED"
    """A call of a schedule entry or a cue failed (the message says which and why)."""
    SOUND_SILENT = "SOUND_SILENT"
    """A room expected to sound was silent for ``silence_s`` (details: what was measured)."""
    SOUND_LIMITING = "SOUND_LIMITING"
    """The safety stage limited a room without a pause for more than ``limit_s``."""
    SOUND_HOWL = "SOUND_HOWL"
    """One tone kept rising in a room for seconds, as feedback does (``howl``)."""
    SOUND_NAN = "SOUND_NAN"
    """The safety stage caught a NaN or an infinity from the room's code (silenced)."""
    SOUND_DC = "SOUND_DC"
    """A DC offset came from the room's code for seconds (the safety stage blocks it)."""
    SOUND_XRUNS = "SOUND_XRUNS"
    """The room's JACK server reported more xruns in a minute than ``xruns_per_min``."""
    SOUND_OK = "SOUND_OK"
    """A fault of the sound ended (details: which, and how long it lasted)."""
    SOUND_ACTION = "SOUND_ACTION"
    """The watch carried out the action the config names for a fault (or could not)."""


@dataclass(frozen=True)
class Event:
    """One lifecycle event of one room."""

    seq: int
    time: float
    room: str
    kind: Kind
    message: str
    details: dict[str, Any] = field(default_factory=dict)


# One sequence for every room's events, so "events since N" means the same
# thing whether it asks one room or all of them.
_sequence = itertools.count(1)


class EventLog:
    """Keep the last ``limit`` events of one room; thread-safe."""

    def __init__(self, room: str, limit: int = 500) -> None:
        self.room = room
        self._events: deque[Event] = deque(maxlen=limit)
        self._seq = 0
        self._lock = threading.Condition()

    def add(self, kind: Kind, message: str, **details: Any) -> Event:
        """Record an event, wake waiters and return it."""
        with self._lock:
            self._seq = next(_sequence)
            event = Event(self._seq, time.time(), self.room, kind, message, details)
            self._events.append(event)
            self._lock.notify_all()
            return event

    def mark(self) -> int:
        """The sequence number of the newest event (wait for later ones)."""
        with self._lock:
            return self._seq

    def wait_for(self, kinds: Kind | tuple[Kind, ...], since: int,
                 timeout: float) -> Event | None:
        """Wait for the first event of ``kinds`` after ``since``; None on timeout."""
        wanted = kinds if isinstance(kinds, tuple) else (kinds,)
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for event in self._events:
                    if event.seq > since and event.kind in wanted:
                        return event
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._lock.wait(remaining)

    def since(self, seq: int = 0) -> list[Event]:
        """Events after ``seq``, oldest first."""
        with self._lock:
            return [e for e in self._events if e.seq > seq]

    def last(self, kind: Kind) -> Event | None:
        """The newest event of ``kind``."""
        with self._lock:
            return next((e for e in reversed(self._events) if e.kind == kind), None)
