"""The actor tree as the facade's components reach it: views, typed proxies, asks.

:class:`~scorch.app.orchestra.Orchestra` fills it when it starts, reloads and
stops the tree; the components read the views (thread-safe, never waiting
behind a busy actor) and ask the actors through :meth:`Tree.ask`, which keeps a
timeout on every ``ask`` and turns pykka's errors into scorch's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import pykka

from scorch.errors import (
    Booting,
    MidiUnavailable,
    NoAnswer,
    RoomNotFound,
    RoomNotReady,
    TempoUnavailable,
)
from scorch.state import Bus, Door, RoomView, Snapshot, State, doors_of

if TYPE_CHECKING:  # the actors' modules load when the orchestra starts them, not before
    from actors import ConductorProxy, SupervisorProxy, WatchdogProxy
    from actors.room import RoomProxy
    from actors.router import MidiRouterProxy
    from scorch.config import Config
    from scorch.primitives.synthdefs import SynthDefLibrary
    from scorch.state import TempoView

T = TypeVar("T")
log = logging.getLogger(__name__)

Ready = Callable[[Iterable[str] | None, float, str], None]
""":meth:`Tree.await_ready` as a component is given it: room names (None: every room
while scorch starts), a ``time.monotonic()`` deadline, and what waits."""

ASK = 15.0  # seconds any ask to an actor may take before the call gives up
#: Seconds a call waits for the MIDI router to take what it changed (:meth:`Tree.settled`).
SETTLE = 2.0
RESTORE_WAIT = 10.0
"""Seconds a call without a timeout of its own waits for scorch to start, or for a room
to boot or restore, before it says BOOTING."""


class Tree:
    """The config, the rooms' views and, once started, the actors' typed proxies."""

    def __init__(self, config: Config, library: SynthDefLibrary) -> None:
        self.config = config
        """The installation's config (replaced by a reload)."""
        self.library = library
        self.bus = Bus()
        """Where every change of the desired state is announced (:mod:`scorch.state.bus`)."""
        self.views: dict[str, RoomView] = {}
        """Every room's view by name (a reload adds and removes, in place)."""
        self.doors: dict[str, Door] = {}
        """Every room's doors to its processes, by name (their actors open them)."""
        for name, inst in config.instances.items():
            self.add_room(name, inst.group)
        self.supervisor: SupervisorProxy | None = None
        self.rooms: dict[str, RoomProxy] = {}
        self.router: MidiRouterProxy | None = None
        self.conductor: ConductorProxy | None = None
        self.tempo: TempoView | None = None
        self.watchdog: WatchdogProxy | None = None
        self.midi_error: str | None = "MIDI is not started"
        """Why MIDI is off, or None while the router runs."""
        self.start_error: str | None = None
        """Why the tree could not be started, when it could not."""
        self.starting = False
        """A start began: calls wait for :attr:`built`, then for their rooms."""
        self.built = threading.Event()
        """Set once the actors exist (or the start failed)."""
        self.started = threading.Event()
        """Set once the start is over: every room READY or given up (or the start failed)."""

    def add_room(self, name: str, group: str | None) -> RoomView:
        """A room's view and doors (at start, and for a room a reload adds)."""
        view = self.views[name] = RoomView(name, group, self.bus)
        self.doors[name] = doors_of(view)
        return view

    def drop_room(self, name: str) -> None:
        """Forget a room a reload removed."""
        self.views.pop(name, None)
        self.doors.pop(name, None)

    def forget_actors(self) -> None:
        """The tree stopped: no proxy is left to ask, and a later start begins afresh."""
        self.starting = False
        self.built.clear()
        self.started.clear()
        self.rooms = {}
        self.router = None
        self.conductor = None
        self.tempo = None
        self.watchdog = None

    # --- names ---------------------------------------------------------------

    def names(self) -> list[str]:
        """Room names in config order."""
        return list(self.views)

    def resolve(self, selector: str) -> list[str]:
        """A room name, a group name or ``"*"`` to room names."""
        return self.config.resolve(selector)

    def view(self, name: str) -> RoomView:
        """The view of one room; RoomNotFound lists the known names."""
        try:
            return self.views[name]
        except KeyError:
            raise RoomNotFound(name, self.names(), list(self.config.groups())) from None

    def door(self, name: str) -> Door:
        """The doors of one room's processes; RoomNotFound lists the known names."""
        try:
            return self.doors[name]
        except KeyError:
            raise RoomNotFound(name, self.names(), list(self.config.groups())) from None

    def settled(self) -> None:
        """Wait (at most :data:`SETTLE`) until the readers that must be ahead of the next call
        took every change announced so far: a knob moved right after a ``set`` finds the
        MIDI router's takeover at the new value."""
        self.bus.settle(SETTLE)

    # --- actors --------------------------------------------------------------

    def await_ready(self, names: Iterable[str] | None, deadline: float, what: str,
                    need_sclang: bool = False) -> None:
        """Wait while scorch starts, and while the rooms ``names`` boot or restore.

        The one wait of every call that needs a room, the router, the tempo or
        (through ``names=None``: every room, only while scorch starts) what is
        built once the rooms are up. Returns at once when nothing is under way;
        whatever a room's state then, the call's own ask says it. Raises
        :class:`~scorch.errors.Booting`, naming the room and its phase, when the
        ``deadline`` (``time.monotonic()``) of the call, ``what``, comes first.
        """
        began = time.monotonic()
        rooms = list(names) if names is not None else (
            [] if self.started.is_set() else self.names())
        if self.starting and not self.built.wait(max(0.0, deadline - began)):
            who = f"room {rooms[0]!r} is" if rooms else "scorch is"
            raise Booting(f"{who} BOOTING (scorch is starting JACK, the MIDI router and the "
                          f"rooms' actors): {_waited(what, began)}")
        for name in rooms:
            snap = self.view(name).wait_until(partial(_settled, need_sclang),
                                              deadline - time.monotonic())
            if not _settled(need_sclang, snap):
                raise Booting(f"room {name!r} is {snap.state} ({snap.phase()}): "
                              f"{_waited(what, began)}")

    def room(self, name: str) -> RoomProxy:
        """The actor of room ``name``; RoomNotReady while there is none."""
        self.view(name)
        self.await_ready((), time.monotonic() + RESTORE_WAIT,
                         f"the call to room {name!r}")
        proxy = self.rooms.get(name)
        if proxy is None:
            raise RoomNotReady(f"room {name!r} is not running: "
                                   f"{self.start_error or 'scorch is not started'}")
        return proxy

    def ask(self, name: str, call: Callable[[RoomProxy], pykka.Future[T]],
            timeout: float = ASK) -> T:
        """``call`` room ``name``'s proxy and wait for the answer, up to ``timeout``."""
        proxy = self.room(name)
        try:
            return call(proxy).get(timeout=timeout)
        except pykka.Timeout as err:
            raise NoAnswer(
                f"room {name!r} did not answer within {timeout:g} s "
                f"(state {self.views[name].snapshot.state})"
            ) from err
        except pykka.ActorDeadError as err:
            raise RoomNotReady(f"room {name!r} is not running") from err

    def midi(self) -> MidiRouterProxy:
        """The MIDI router (waited for while scorch starts); MidiUnavailable says why not."""
        self.await_ready((), time.monotonic() + RESTORE_WAIT, "MIDI")
        if self.router is None:
            raise MidiUnavailable(self.midi_error or "MIDI is off")
        return self.router

    def tempo_owner(self) -> ConductorProxy:
        """The tempo's conductor (waited for while scorch starts); TempoUnavailable without one."""
        self.await_ready((), time.monotonic() + RESTORE_WAIT, "the tempo")
        if self.conductor is None:
            raise TempoUnavailable(
                f"the tempo is not running: {self.start_error or 'scorch is not started'}")
        return self.conductor


def _settled(need_sclang: bool, snap: Snapshot) -> bool:
    """Neither booting nor restoring (nor, when code runs, starting its sclang)."""
    if snap.state in (State.BOOTING, State.RESTARTING):
        return False
    return not (need_sclang and snap.state == State.READY
                and snap.sclang_state in ("starting", "restarting"))


def _waited(what: str, began: float) -> str:
    return (f"{what} waited {time.monotonic() - began:.1f} s for it (its own timeout); "
            "ask again in a moment, or give a longer timeout")
