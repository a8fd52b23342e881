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
    InstanceNotFound,
    InstanceNotReady,
    MidiUnavailable,
    NoAnswer,
    TempoUnavailable,
)
from scorch.state.events import State
from scorch.state.view import InstanceView, Snapshot

if TYPE_CHECKING:  # the actors' modules load when the orchestra starts them, not before
    from actors.conductor import ConductorProxy
    from actors.instance.proxy import InstanceProxy
    from actors.router.proxy import MidiRouterProxy
    from actors.supervisor import SupervisorProxy
    from actors.watchdog import WatchdogProxy
    from scorch.config.installation import Config
    from scorch.primitives.synthdefs.library import SynthDefLibrary
    from scorch.state.tempo import TempoView

T = TypeVar("T")
log = logging.getLogger(__name__)

ParamWatcher = Callable[[str, str | None, "dict[str, float] | None"], None]
"""Told of params set on a named node (room, node, values; values None: the node, or with
node None every node of the room, is gone). Called from any thread; must not block."""
Ready = Callable[[Iterable[str] | None, float, str], None]
""":meth:`Tree.await_ready` as a component is given it: room names (None: every room
while scorch starts), a ``time.monotonic()`` deadline, and what waits."""

ASK = 15.0  # seconds any ask to an actor may take before the call gives up
RESTORE_WAIT = 10.0
"""Seconds a call without a timeout of its own waits for scorch to start, or for a room
to boot or restore, before it says BOOTING."""


class Tree:
    """The config, the instances' views and, once started, the actors' typed proxies."""

    def __init__(self, config: Config, library: SynthDefLibrary) -> None:
        self.config = config
        """The installation's config (replaced by a reload)."""
        self.library = library
        self.views = {name: InstanceView(name, inst.group)
                      for name, inst in config.instances.items()}
        """Every instance's view by name (a reload adds and removes, in place)."""
        self.supervisor: SupervisorProxy | None = None
        self.instances: dict[str, InstanceProxy] = {}
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
        self._watchers: tuple[ParamWatcher, ...] = ()

    def forget_actors(self) -> None:
        """The tree stopped: no proxy is left to ask, and a later start begins afresh."""
        self.starting = False
        self.built.clear()
        self.started.clear()
        self.instances = {}
        self.router = None
        self.conductor = None
        self.tempo = None
        self.watchdog = None

    # --- names ---------------------------------------------------------------

    def names(self) -> list[str]:
        """Instance names in config order."""
        return list(self.views)

    def resolve(self, selector: str) -> list[str]:
        """An instance name, a group name or ``"*"`` to instance names."""
        return self.config.resolve(selector)

    def view(self, name: str) -> InstanceView:
        """The view of one instance; InstanceNotFound lists the known names."""
        try:
            return self.views[name]
        except KeyError:
            raise InstanceNotFound(name, self.names(), list(self.config.groups())) from None

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
            who = f"instance {rooms[0]!r} is" if rooms else "scorch is"
            raise Booting(f"{who} BOOTING (scorch is starting JACK, the MIDI router and the "
                          f"rooms' actors): {_waited(what, began)}")
        for name in rooms:
            snap = self.view(name).wait_until(partial(_settled, need_sclang),
                                              deadline - time.monotonic())
            if not _settled(need_sclang, snap):
                raise Booting(f"instance {name!r} is {snap.state} ({snap.phase()}): "
                              f"{_waited(what, began)}")

    def instance(self, name: str) -> InstanceProxy:
        """The actor of instance ``name``; InstanceNotReady while there is none."""
        self.view(name)
        self.await_ready((), time.monotonic() + RESTORE_WAIT,
                         f"the call to instance {name!r}")
        proxy = self.instances.get(name)
        if proxy is None:
            raise InstanceNotReady(f"instance {name!r} is not running: "
                                   f"{self.start_error or 'scorch is not started'}")
        return proxy

    def ask(self, name: str, call: Callable[[InstanceProxy], pykka.Future[T]],
            timeout: float = ASK) -> T:
        """``call`` instance ``name``'s proxy and wait for the answer, up to ``timeout``."""
        proxy = self.instance(name)
        try:
            return call(proxy).get(timeout=timeout)
        except pykka.Timeout as err:
            raise NoAnswer(
                f"instance {name!r} did not answer within {timeout:g} s "
                f"(state {self.views[name].snapshot.state})"
            ) from err
        except pykka.ActorDeadError as err:
            raise InstanceNotReady(f"instance {name!r} is not running") from err

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

    def watch(self, watcher: ParamWatcher) -> Callable[[], None]:
        """Tell ``watcher`` of every param set from now on; return what stops it."""
        self._watchers = (*self._watchers, watcher)

        def stop() -> None:
            self._watchers = tuple(w for w in self._watchers if w is not watcher)

        return stop

    def changed(self, name: str, node: str | None, values: dict[str, float] | None) -> None:
        """Tell the watchers (the OSC door) of params set (any thread)."""
        for watcher in self._watchers:
            try:
                watcher(name, node, values)
            except Exception:
                log.exception("a param watcher failed")

    def tell_router(self, name: str, node: str | None, values: dict[str, float] | None,
                    moved: bool = False) -> None:
        """Tell MIDI takeover (and its feedback) and the watchers where a node's params are
        now (None: the node is gone).

        Without this a knob in pickup mode compares against a value the node no
        longer has, and jumps or never picks up. ``moved``: the node has a new id.
        Waited for, so a knob moved right after the call sees the new values.
        """
        self.changed(name, node, values)
        if self.router is None:
            return
        if values is None:
            self.router.forget(name, node).get(timeout=ASK)
            return
        assert node is not None
        self.router.observe(name, node, values, moved).get(timeout=ASK)


def _settled(need_sclang: bool, snap: Snapshot) -> bool:
    """Neither booting nor restoring (nor, when code runs, starting its sclang)."""
    if snap.state in (State.BOOTING, State.RESTARTING):
        return False
    return not (need_sclang and snap.state == State.READY
                and snap.sclang_state in ("starting", "restarting"))


def _waited(what: str, began: float) -> str:
    return (f"{what} waited {time.monotonic() - began:.1f} s for it (its own timeout); "
            "ask again in a moment, or give a longer timeout")
