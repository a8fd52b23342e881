"""What anyone may read about a room without asking its actor.

The room actor writes it; the facade, the watchdog and the MCP layer read
it from their own threads, so a slow boot never blocks a status query.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from scorch.errors import Booting, RoomFailed, RoomNotReady
from scorch.primitives.sclang import PatternRecord
from scorch.primitives.system import Console
from scorch.state.bus import Bus
from scorch.state.changes import RoomChanged
from scorch.state.code_runs import CodeRuns
from scorch.state.desired import BufferState, NodeState
from scorch.state.events import SOUNDING, EventLog, Kind, State
from scorch.state.meters import Readings, StageState

#: Why a room is BOOTING while scorch starts, before its actor boots it.
STARTING = "scorch is starting JACK and the rooms' actors"


@dataclass(frozen=True)
class Snapshot:
    """A room's public state at one moment."""

    name: str
    group: str | None
    state: State = State.STOPPED
    since: float = field(default_factory=time.time)
    port: int | None = None
    lang_port: int | None = None
    scsynth_pid: int | None = None
    sclang_pid: int | None = None
    sclang_state: str = "down"
    booted_at: float | None = None
    reason: str = ""
    restarts_in_window: int = 0
    restart_budget_left: int = 0
    scsynth_restarts: int = 0
    """Times scorch started scsynth again (after a crash, a hang, ``s.reboot``)."""
    sclang_restarts: int = 0
    """Times scorch started sclang again (after a crash, a hang, a timed-out request)."""
    last_crash: str = ""
    nodes: tuple[str, ...] = ()

    def phase(self) -> str:
        """Where a booting or restoring room is, in a few words: what it waits for."""
        if self.reason == STARTING:
            return STARTING
        if self.scsynth_pid is None:
            return f"starting scsynth; {self.reason}" if self.reason else "starting scsynth"
        if self.sclang_state in ("starting", "restarting"):
            return f"scsynth up, sclang {self.sclang_state}"
        return "scsynth and sclang up, restoring its SynthDefs, buffers and nodes"

    def require_ready(self, sclang_attached: bool, need_sclang: bool = False) -> None:
        """Raise what a request finds when the room cannot take it, saying why."""
        if self.state == State.FAILED:
            raise RoomFailed(f"room {self.name!r} is FAILED: {self.reason}; "
                                 "boot it again once the cause is fixed")
        if self.state in (State.RESTARTING, State.BOOTING):
            raise Booting(f"room {self.name!r} is {self.state} (since "
                                  f"{time.ctime(self.since)}); it comes back by itself, "
                                  "try again in a moment")
        if self.state not in SOUNDING:
            raise RoomNotReady(
                f"room {self.name!r} is {self.state} (since {time.ctime(self.since)})"
                + ("; it comes back by itself, try again in a moment"
                   if self.state in (State.RESTARTING, State.BOOTING) else ""))
        if need_sclang and not sclang_attached:
            if self.sclang_state == "failed":
                raise RoomNotReady(f"room {self.name!r}: {self.reason}; its sound "
                                       "plays on, and `instance restart` brings sclang back")
            raise RoomNotReady(f"room {self.name!r}: sclang is "
                                   f"{self.sclang_state}; the sound goes on, try again shortly")


class RoomView:
    """Thread-safe handle on one room's snapshot, console, events and state.

    It holds no way to the room's processes (their doors are :class:`~scorch.state.door.Door`,
    the actor's to open): what it shows is what the actor published.
    """

    def __init__(self, name: str, group: str | None, bus: Bus | None = None) -> None:
        self.console = Console()
        self.events = EventLog(name)
        self._snapshot = Snapshot(name, group)
        self._lock = threading.Condition()
        self._bus = bus
        """Where a change of the room's state or its sclang's is published."""
        self.nodes: dict[str, NodeState] = {}
        """Named persistent nodes as last published (replaced whole on change, never mutated)."""
        self.synthdefs: dict[str, bytes] = {}
        """The SynthDefs scsynth is given at every boot (library and code-sent), by name, as
        last published with the nodes (replaced whole on change, never mutated)."""
        self.buffers: dict[str, BufferState] = {}
        """Loaded sample buffers as last published (replaced whole on change, never mutated)."""
        self.patterns: dict[str, PatternRecord] = {}
        """Pdef, Tdef, Ndef... as sclang last reported them (replaced whole on change)."""
        self.records_handed = 0
        """sclang's pattern records handed to the actor's mailbox (by sclang's reader thread
        only); with :attr:`records_taken`, whether any is still on its way."""
        self.records_taken = 0
        """Those the actor took and published (by the actor's thread only)."""
        self.pattern_times: dict[str, float] = {}
        """The Unix time of each pattern's last event (``Pdef acc``; "" for code), as
        sclang's batches told it (replaced whole on change)."""
        self.code_runs = CodeRuns()
        """The latest code requests, with their history ids: what made a synth a crash lost."""
        self.stage = StageState()
        """The room's safety stage: settings and master gain (replaced whole on change)."""
        self.stage_readings = Readings()
        """What the stage measures, a few times a second."""
        self.sound: str | None = None
        """What the sound watch hears: ``ok`` or the worst fault (``nan``, ``howl``, ``dc``,
        ``limiting``, ``xruns``, ``silent``)."""

    @property
    def name(self) -> str:
        """The room's name."""
        return self._snapshot.name

    @property
    def snapshot(self) -> Snapshot:
        """The latest snapshot."""
        return self._snapshot

    def wait_settled(self, since: int, timeout: float) -> str | None:
        """Wait for READY (None) or FAILED (its reason) after event ``since``."""
        event = self.events.wait_for((Kind.READY, Kind.FAILED), since, max(timeout, 0.0))
        if event is None:
            return (f"room {self.name!r} was not READY within {timeout:g} s "
                    f"(state {self.snapshot.state}: {self.snapshot.reason or 'no reason given'})")
        return None if event.kind == Kind.READY else str(event.details.get("reason", event.message))

    def update(self, **changes: Any) -> Snapshot:
        """Replace some fields; a change of state also stamps ``since``."""
        with self._lock:
            before = self._snapshot
            if "state" in changes and changes["state"] != before.state:
                changes.setdefault("since", time.time())
            after = self._snapshot = replace(before, **changes)
            self._lock.notify_all()
        if self._bus is not None and (after.state, after.sclang_state, after.reason) != (
                before.state, before.sclang_state, before.reason):
            self._bus.publish(RoomChanged(after.name, str(after.state), after.sclang_state,
                                          after.reason))
        return after

    def restarted(self, kind: str) -> Snapshot:
        """Count a restart of ``kind`` (scsynth or sclang) that came up."""
        with self._lock:
            field = "scsynth_restarts" if kind == "scsynth" else "sclang_restarts"
            self._snapshot = replace(self._snapshot, **{
                field: getattr(self._snapshot, field) + 1})
            self._lock.notify_all()
            return self._snapshot

    def wait_until(self, settled: Callable[[Snapshot], bool], timeout: float) -> Snapshot:
        """Wait until ``settled(snapshot)`` holds or ``timeout`` passes; return the snapshot."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not settled(self._snapshot):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._lock.wait(remaining)
            return self._snapshot
