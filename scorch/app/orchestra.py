"""The Orchestra: builds the facade's components and runs the actor tree's life.

Every feature is a component (``orch.rooms``, ``orch.buffers``, ``orch.midi``,
``orch.tempo``, ``orch.notes``, ``orch.sessions``, ``orch.scenes``, ``orch.studio``,
``orch.knowledge``); this module starts, reloads and stops what they reach
through the shared :class:`~scorch.app.tree.Tree`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

import pykka

from actors import Supervisor, SupervisorProxy
from actors.room.processes import RoomSettings
from scorch.app.alerts import Alerts
from scorch.app.buffers import Buffers
from scorch.app.history import Recorder
from scorch.app.hours import Hours
from scorch.app.knowledge import Knowledge
from scorch.app.meters import Meters
from scorch.app.midi import Midi
from scorch.app.notes import Notes
from scorch.app.partner import Partners
from scorch.app.patterns import Patterns
from scorch.app.rooms import Rooms
from scorch.app.scenes import SceneDirector
from scorch.app.session_keeper import Sessions
from scorch.app.soundwatch import SoundWatch
from scorch.app.studio import Studio
from scorch.app.tempo import Tempo
from scorch.app.tree import ASK, Tree
from scorch.app.undo import Undo
from scorch.config import (
    Config,
    ConfigChanges,
    check_synthdefs,
    config_changes,
    load_config,
    sclang_guard,
)
from scorch.errors import RoomNotReady
from scorch.primitives.synthdefs import SynthDefLibrary
from scorch.primitives.system import XRUN, AudioChoice, Console
from scorch.state import STARTING, CallCounts, Session, State

if TYPE_CHECKING:
    from scorch.hosts import HostRooms
    from scorch.primitives.sclang import EarlySclang

log = logging.getLogger(__name__)

HEALTH_ASK = 2.0  # seconds the health check waits, and the least lateness it forgives
RELOAD_TIMEOUT = 300.0  # seconds a reload may take (rooms restarted, one after another)


class Orchestra:
    """All the rooms of one config, and the components that serve them."""

    def __init__(self, config: Config, library: SynthDefLibrary | None = None,
                 hosted_by: str = "scorch run") -> None:
        self.hosted_by = hosted_by
        """Which process runs the rooms: ``scorch run``, or ``scorch mcp`` for its session."""
        self.library = library if library is not None else SynthDefLibrary()
        check_synthdefs(config, set(self.library.names()), self.library.errors)
        self._tree = tree = Tree(config, self.library)
        self.views = tree.views
        """Every room's view by name (thread-safe reads)."""
        self.doors = tree.doors
        """Every room's doors to its scsynth and sclang, by name (thread-safe)."""
        self.bus = tree.bus
        """Where every change of the desired state is announced (:mod:`scorch.state.bus`)."""
        self.jack_console = Console(counting={"jackd": XRUN})
        self.started_at: float | None = None
        self.audio: AudioChoice | None = None
        """The audio driver that runs (``auto`` resolved) and why, once started."""
        self._remote: HostRooms | None = None
        """Other hosts' rooms, for MIDI routes here that play them (several hosts)."""
        self._reload_lock = threading.Lock()
        state = config.state_path()
        self.rooms = Rooms(tree)
        """Rooms: status, life, code, named nodes, consoles."""
        self.buffers = Buffers(tree)
        """Sample buffers."""
        self.midi = Midi(tree)
        """The MIDI router's ports and routes."""
        self.tempo = Tempo(tree)
        """The beat grids and timed requests."""
        self.notes = Notes(tree)
        """What the MIDI inputs sound and played, as text, data and .mid files."""
        self.patterns = Patterns(self.rooms)
        """Changes to one pattern or proxy while it plays."""
        self.partner = Partners(tree, self.notes, self.rooms)
        """A partner per MIDI input: continuations, infills and live answers in its style."""
        self.sessions = Sessions(tree, self.rooms, self.buffers, self.midi, self.tempo)
        """Session files, the autosave and resume."""
        self.undo = Undo(tree, self.sessions)
        """The journal of changes: undo, redo."""
        self.scenes = SceneDirector(self.views, self.library, self.rooms.resolve,
                                    self.rooms.set_values, state, tree.await_ready)
        """Scenes: saved node values, recalled and morphed."""
        self.knowledge = Knowledge(config, ready=tree.await_ready)
        """The docs index, the execution history and the snippets (the knowledge ops')."""
        self.meters = Meters(tree, config.web.meter_hz)
        """Each room's output levels, measured by scsynth while someone watches."""
        self.sound = SoundWatch(tree, self.xruns)
        """The watch on each room's sound: faults as events, and their actions."""
        self.studio = Studio(state, self.views, tree.doors, self.library,
                             config.audio.sample_rate, tree.await_ready)
        """Recordings, listening and renders."""
        self.hours = Hours(tree)
        """The schedule and the cue list (started with the API's firer once the rooms are
        up: :meth:`Hours.start`)."""
        self.calls = CallCounts()
        """Operations called in this process by name, and their failures (/metrics)."""
        self.alerts = Alerts(config.alerts, lambda: self.views)
        """Messages that leave the machine when a room's events say so ([alerts])."""
        self.recorder = Recorder(config.state_path(), lambda: self.views, self.xruns)
        """The rooms' events kept in the state folder for ``scorch report``."""

    @property
    def config(self) -> Config:
        """The installation's config (a reload replaces it)."""
        return self._tree.config

    def _midi_cue(self, kind: str, name: str, selector: str, value: float) -> None:
        """A MIDI scene route's cue, or a cue list button's (kind ``cue``): hand it on."""
        if kind == "cue":
            self.hours.press(name, selector)
        else:
            self.scenes.cue(kind, name, selector, value)

    def xruns(self) -> dict[str, int]:
        """The xruns the JACK server scorch runs here reported since it started, for each
        room on it (rooms of other hosts count their own)."""
        count, config = self.jack_console.counted("jackd"), self.config
        return {name: count for name, inst in config.instances.items()
                if inst.host == config.host}

    @property
    def start_error(self) -> str | None:
        """Why the tree could not be started, when it could not."""
        return self._tree.start_error

    def _settings(self, name: str, config: Config | None = None, seed: Session | None = None,
                  early: EarlySclang | None = None) -> RoomSettings:
        config = config or self.config
        inst = config.instances[name]
        startup = None
        if inst.startup is not None:
            startup = config.resolve_path(inst.startup).read_text()
        return RoomSettings(
            audio=config.audio, watchdog=config.watchdog,
            compiled_synthdef=self.library.compiled, all_synthdefs=self.library.names,
            synthdescs=self.library.synthdescs,
            startup_code=startup, listen=config.listen_address(),
            seed=seed.rooms.get(name) if seed is not None else None,
            pattern_notes=self.notes.patterns, early_sclang=early,
            extra_env=sclang_guard(config),
            safety=inst.safety.over(config.safety),
        )

    def announce_start(self) -> None:
        """Say scorch is starting: rooms BOOTING, the history and a cached docs index open.

        :meth:`start` does it first; a host that runs ``start`` in another thread calls
        it before, so a call made at once waits for the rooms instead of finding
        scorch not started.
        """
        if self._tree.starting:
            return
        for view in self.views.values():
            view.update(state=State.BOOTING, reason=STARTING)
        self._tree.starting = True
        self.knowledge.open()

    def start(self, timeout: float = 60.0, seed: Session | None = None,
              early: Mapping[str, EarlySclang] | None = None) -> dict[str, str | None]:
        """Start JACK and boot every room in parallel; return boot errors by name.

        Calls made meanwhile (from other threads) wait for the tree, then for
        their room; ``list_instances`` shows BOOTING. ``seed``: a session whose
        rooms boot with its nodes and buffers in place of the config's nodes.
        ``early``: rooms' first sclangs started already (:class:`EarlySclang`); those
        their boot did not take are stopped before this returns.
        """
        early = early or {}
        try:
            return self._start(timeout, seed, early)
        finally:
            for process in early.values():
                process.discard()

    def _start(self, timeout: float, seed: Session | None,
               early: Mapping[str, EarlySclang]) -> dict[str, str | None]:
        tree = self._tree
        marks = {name: view.events.mark() for name, view in self.views.items()}
        self.announce_start()
        self.alerts.start()  # before the boot: a room that cannot boot is told too
        self.recorder.start()
        settings = {name: self._settings(name, seed=seed, early=early.get(name))
                    for name in self.config.instances}
        if self.config.hosts and self.config.midi.enabled:
            from scorch.hosts import HostRooms

            # Polls nothing until a route asks for a room of another host.
            self._remote = HostRooms(self.config, self._remote_changed, bus=tree.bus)
        try:
            supervisor = tree.supervisor = cast(SupervisorProxy, Supervisor.start(
                self.config, self.views, tree.doors, tree.bus, settings, self.jack_console,
                self._midi_cue, self._remote).proxy())
            tree.rooms = supervisor.start_tree().get(timeout=timeout)
            tree.router = supervisor.router_proxy().get(timeout=ASK)
            tree.conductor = supervisor.conductor_proxy().get(timeout=ASK)
            tree.tempo = supervisor.tempo_view().get(timeout=ASK)
            tree.watchdog = supervisor.watchdog_proxy().get(timeout=ASK)
            tree.midi_error = supervisor.midi_status().get(timeout=ASK)
            self.audio = supervisor.audio_choice().get(timeout=ASK)
        except Exception as err:
            tree.start_error = f"scorch could not start: {err}"
            for view in self.views.values():
                view.update(state=State.FAILED, reason=tree.start_error)
            tree.built.set()
            tree.started.set()
            self.stop()
            raise
        tree.built.set()
        self.started_at = time.time()
        deadline = time.monotonic() + timeout
        errors = {name: view.wait_settled(marks[name], deadline - time.monotonic())
                  for name, view in self.views.items()}
        tree.started.set()
        # After the rooms are READY (or given up), so a docs build never slows their boot.
        self.knowledge.start()
        self.studio.warm_up()  # so is the first listen's load of its libraries
        return errors

    def _remote_changed(self) -> None:
        """Another host's room moved (READY, port, nodes): the router looks again."""
        router = self._tree.router
        if router is not None:
            router.refresh_targets()

    def stop(self, timeout: float = 20.0) -> None:
        """Stop everything in reverse order; no process of scorch is left.

        The autosave session is written first, when autosave runs.
        """
        self.hours.stop()
        self.alerts.stop()
        self.recorder.stop()
        self.partner.stop()
        self.sessions.stop()
        self.meters.close()
        self.sound.close()
        self.scenes.stop()
        self.knowledge.stop()
        remote, self._remote = self._remote, None
        if remote is not None:
            remote.close()
        supervisor, self._tree.supervisor = self._tree.supervisor, None
        if supervisor is None:
            return
        try:
            self.studio.close()  # recordings end cleanly while their scsynth still runs
        except Exception:
            log.exception("recordings did not stop cleanly")
        try:
            supervisor.stop_all(timeout).get(timeout=timeout * 3)
        finally:
            supervisor.actor_ref.stop(timeout=timeout)
            self._tree.forget_actors()
            try:  # once no sclang adds to them
                self.notes.save()
            except OSError:
                log.exception("the patterns' notes were not saved")

    def reload(self, config: Config | None = None) -> tuple[ConfigChanges, dict[str, str]]:
        """Re-read the config file (or take ``config``) and apply what changed.

        A config that does not validate, or changes what a running installation
        cannot take, raises and changes nothing. Returns the changes and the rooms
        a change failed for (the rest are applied).
        """
        tree = self._tree
        with self._reload_lock:
            supervisor = tree.supervisor
            if supervisor is None or not tree.built.is_set():
                raise RoomNotReady("scorch is not running yet; reload once it is")
            if config is None:
                config = load_config(self.config.source).for_host(self.config.host)
            check_synthdefs(config, set(self.library.names()), self.library.errors)
            self.hours.check(config)
            changes = config_changes(self.config, config)
            if not changes:
                return changes, {}
            sclang_guard(config)  # [samples] changed: each sclang started from now on reads it
            settings = {name: self._settings(name, config)
                        for name in (*changes.added, *changes.rooms)}
            if self._remote is not None:
                self._remote.update(config)
            for name in changes.added:
                tree.add_room(name, config.instances[name].group).update(
                    state=State.BOOTING, reason="added by a reload")
                self.sound.watch(name)
            failed = supervisor.apply(config, changes, settings).get(timeout=RELOAD_TIMEOUT)
            tree.config = config
            for name in changes.removed:
                self.sound.forget(name)
                tree.drop_room(name)
            tree.rooms = supervisor.room_proxies().get(timeout=ASK)
            tree.router = supervisor.router_proxy().get(timeout=ASK)
            tree.watchdog = supervisor.watchdog_proxy().get(timeout=ASK)
            tree.midi_error = supervisor.midi_status().get(timeout=ASK)
            if changes.hours:
                self.hours.reload(config)
            log.info("reloaded %s: %s", config.source or "the config",
                     "; ".join(changes.summary()))
            return changes, failed

    def health(self) -> str | None:
        """Why scorch's own machinery is not healthy, or None (systemd's watchdog asks).

        Healthy: the supervisor lives and the watchdog checked the rooms lately.
        Asked of the watchdog directly, so a supervisor busy with a reload is fine.
        """
        supervisor, watchdog = self._tree.supervisor, self._tree.watchdog
        if supervisor is None or watchdog is None or not supervisor.actor_ref.is_alive():
            return "not running"
        try:
            ticked = watchdog.ticked_at().get(timeout=HEALTH_ASK)
        except (pykka.Timeout, pykka.ActorDeadError):
            return "the watchdog does not answer"
        late = time.monotonic() - ticked
        limit = max(HEALTH_ASK, 4 * self.config.watchdog.interval)
        return f"the watchdog last checked {late:.1f} s ago" if late > limit else None

    def __enter__(self) -> Orchestra:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
