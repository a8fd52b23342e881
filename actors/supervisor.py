"""The Supervisor actor: builds the tree from the config, starts it in order, stops it in reverse.

jackd dies: restart it, then every room (rest_for_one). A room's own
crashes are handled by its actor; the supervisor only handles what is shared.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import cast

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.conductor import Conductor, ConductorProxy
from actors.jack import Jack, JackProxy
from actors.keeper import Keeper
from actors.room import Room, RoomProxy
from actors.room.actor import RoomSettings
from actors.router import MidiRouter, MidiRouterProxy, OrchestraTargets, RemoteRooms, SceneCue
from actors.watchdog import Watchdog, WatchdogProxy
from midi import MidiConfig
from scorch.config import Config, ConfigChanges, load_profiles, user_folders
from scorch.errors import BootError, ScorchError
from scorch.primitives.system import AudioChoice, Console, choose
from scorch.state import Bus, Door, RoomView, TempoView, Timeline

log = logging.getLogger(__name__)

ASK_TIMEOUT = 30.0
#: Seconds a room may take to take a reloaded config (a restart included).
RECONFIGURE_TIMEOUT = 90.0


class Supervisor(pykka.ThreadingActor):
    """Root of the tree: the JACK server, the rooms, the watchdog, tempo and MIDI."""

    def __init__(self, config: Config, views: dict[str, RoomView], doors: dict[str, Door],
                 bus: Bus, settings: dict[str, RoomSettings], jack_console: Console,
                 on_scene: SceneCue = lambda kind, scene, room, value: None,
                 remote: RemoteRooms | None = None) -> None:
        super().__init__()
        self.on_scene = on_scene
        """Where MIDI scene routes send their cues (must not block: the MIDI thread calls)."""
        self.config = config
        self.remote = remote
        """Other hosts' rooms, for MIDI routes that play them (None: none)."""
        self.views = views
        self.doors = doors
        """Each room's doors: its actor opens them, the watchdog and the conductor use them."""
        self.bus = bus
        """Where the desired state's changes are announced."""
        self.settings = settings
        self.jack_console = jack_console
        self.jack: JackProxy | None = None
        self.rooms: dict[str, RoomProxy] = {}
        self.watchdog: WatchdogProxy | None = None
        self.router: MidiRouterProxy | None = None
        self.tempo = TempoView(config.timelines(time.monotonic()), bus)
        """The installation's beat grid (and groups'), read by clocks and the facade."""
        self.conductor: ConductorProxy | None = None
        self.midi_error: str | None = "MIDI is not started"
        self._jack_keeper: Keeper | None = None
        self._jack_alive: Callable[[], bool] | None = None
        self._stopping = False
        self.audio: AudioChoice | None = None
        """The driver that runs (``auto`` resolved), once :meth:`start_tree` chose it."""

    def owns_jack(self) -> bool:
        """True when scorch runs its own jackd (dummy or ALSA driver)."""
        return self.config.audio.driver in ("dummy", "alsa")

    def _use(self, audio: AudioChoice) -> None:
        """Run with ``audio``: the config the children see names the driver that runs."""
        self.audio = audio
        self.config = self._resolved(self.config)

    def _resolved(self, config: Config) -> Config:
        """``config`` naming the driver that runs (a reload cannot change [audio])."""
        if self.audio is None:
            return config
        return config.model_copy(update={"audio": config.audio.model_copy(update={
            "driver": self.audio.driver, "jack_server": self.audio.server,
            "device": self.audio.device})})

    def audio_choice(self) -> AudioChoice | None:
        """The driver the installation runs with, and why."""
        return self.audio

    def _start_jack(self) -> None:
        """Start the private jackd; a sound card ``auto`` chose that fails falls back to dummy."""
        me = self.actor_ref.proxy()
        self.jack = Jack.start(self.config, self.jack_console,
                               lambda how: me.jack_crashed(how)).proxy()
        try:
            self.jack.start_server().get(timeout=ASK_TIMEOUT)
        except BootError as err:
            assert self.audio is not None
            if self.audio.asked != "auto" or self.audio.driver != "alsa":
                raise
            self.jack.actor_ref.stop()
            self._use(self.audio.without_card(str(err).splitlines()[0]))
            log.warning("audio: %s", self.audio.describe())
            self._start_jack()

    def start_tree(self) -> dict[str, RoomProxy]:
        """Start JACK, then every room (each boots in its own thread), the watchdog and MIDI.

        Returns the room actors at once: they report READY or FAILED on
        their views, so a caller waits there (one room failing does not
        stop the others) while calls to the rest go through.
        """
        audio = self.config.audio
        self._use(choose(audio.driver, self.config.jack_server(), audio.device))
        assert self.audio is not None
        log.info("audio: %s", self.audio.describe())
        if self.owns_jack():
            self._start_jack()
            assert self.jack is not None
            self._jack_alive = self.jack.alive_check().get(timeout=ASK_TIMEOUT)
            self._jack_keeper = self._keep_jack()
        for name, inst_config in self.config.instances.items():
            self.rooms[name] = cast(RoomProxy, Room.start(
                name, inst_config, self._wired(name, self.settings[name]),
                self.views[name], self.doors[name], self.bus).proxy())
        for proxy in self.rooms.values():
            proxy.boot()  # all at once: each boots in its own actor's thread
        self._start_watchdog()
        self._start_conductor()
        self._start_router()
        return dict(self.rooms)

    def _wired(self, name: str, settings: RoomSettings) -> RoomSettings:
        """A room's settings, told where to report changes, the JACK server that runs
        and how to see it, and the beat grid its clock follows."""
        tempo = self.tempo

        def grid() -> Timeline | None:  # sclang's reader thread: a dict read, no ask
            try:
                return tempo.get(self.config.tempo_scope(name))
            except KeyError:  # a group whose tempo a reload has not put in place yet
                return None

        settings = replace(settings, on_changed=self.actor_ref.proxy().room_changed,
                           audio=self.config.audio, grid=grid)
        if self._jack_alive is not None:
            settings = replace(settings, jack_alive=self._jack_alive)
        return settings

    def _start_watchdog(self) -> None:
        wd = self.config.watchdog
        self.watchdog = cast(WatchdogProxy, Watchdog.start(
            {name: (self.views[name], self.doors[name], proxy)
             for name, proxy in self.rooms.items()},
            wd.interval, wd.missed, wd.busy_limit,
        ).proxy())

    def _start_conductor(self) -> None:
        midi = self.config.midi
        self.conductor = cast(ConductorProxy, Conductor.start(
            self.config, self.views, self.doors, self.tempo,
            midi.clock_in if midi.enabled else None).proxy())

    def apply(self, config: Config, changes: ConfigChanges,
              settings: dict[str, RoomSettings]) -> dict[str, str]:
        """Apply a reloaded config's changes (see ``scorch.config.reload``).

        Rooms removed stop, rooms added boot (their views are in place already),
        changed rooms take their new config, then MIDI and the watchdog restart
        when what they watch changed. Returns the rooms a change failed for, and why.
        """
        self.config = self._resolved(config)
        self.settings.update(settings)
        for name in changes.removed:
            proxy = self.rooms.pop(name)
            _stop(f"room {name!r}", proxy.actor_ref.stop(block=False), ASK_TIMEOUT)
        for name in changes.added:
            self.rooms[name] = cast(RoomProxy, Room.start(
                name, config.instances[name], self._wired(name, settings[name]),
                self.views[name], self.doors[name], self.bus).proxy())
            self.rooms[name].boot()
        failed: dict[str, str] = {}
        for name, room in changes.rooms.items():
            try:
                self.rooms[name].reconfigure(
                    config.instances[name], self._wired(name, settings[name]), room,
                ).get(timeout=RECONFIGURE_TIMEOUT)
            except (ScorchError, pykka.Timeout) as err:
                failed[name] = str(err) or type(err).__name__
        if changes.watchdog or changes.added or changes.removed:
            if self.watchdog is not None:
                _stop("watchdog", self.watchdog.actor_ref.stop(block=False), ASK_TIMEOUT)
            self._start_watchdog()
        if self.conductor is not None:  # rooms came, went or changed group: their tempo
            self.conductor.reconfigure(self.config)
        if changes.midi:
            if self.router is not None:
                _stop("MIDI router", self.router.actor_ref.stop(block=False), ASK_TIMEOUT)
                self.router = None
            self._start_router()
        return failed

    def watchdog_proxy(self) -> WatchdogProxy | None:
        """The watchdog actor (health checks ask it directly, not through this actor)."""
        return self.watchdog

    def room_proxies(self) -> dict[str, RoomProxy]:
        """The room actors, by name."""
        return dict(self.rooms)

    def start_midi(self, backend: str | None = None) -> str | None:
        """Start the MIDI router now (asked by a tool), even when the config disables it,
        with ``backend`` if given; return why it is off, or None when it runs."""
        if self.router is None:
            midi = self.config.midi.model_copy(update={"enabled": True, **(
                {"backend": backend} if backend is not None else {})})
            self._start_router(midi)
        return self.midi_error

    def _start_router(self, midi: MidiConfig | None = None) -> None:
        """Start the MIDI router; without a usable MIDI backend scorch plays on without it."""
        midi = midi or self.config.midi
        if not midi.enabled:
            self.midi_error = "MIDI is disabled in the config ([midi] enabled = false)"
            return
        # rtmidi's JACK backend joins scorch's server (or the one named), never autostarting one.
        uses_jack = self.owns_jack() or self.config.audio.driver == "jack"
        targets = OrchestraTargets(self.config, self.views, self.on_scene, self.remote)
        conductor = self.conductor
        try:
            router = cast(MidiRouterProxy, MidiRouter.start(
                midi, targets, self.config.state_path(),
                self.config.audio.jack_server if uses_jack else None,
                self.config.voice_slot(), tempo=self.tempo,
                on_clock=None if conductor is None else conductor.follow_clock,
                tempo_scope=self.config.tempo_scope,
                profiles=load_profiles(user_folders(self.config.source)), bus=self.bus).proxy())
            # on_start runs in the router's thread: a backend that cannot open
            # shows up here as a dead actor (its error is in the log).
            router.ports().get(timeout=ASK_TIMEOUT)
        except (pykka.ActorDeadError, pykka.Timeout, OSError) as err:
            self.midi_error = (f"MIDI is off: no backend {midi.backend!r} could be "
                               f"opened ({type(err).__name__}); see the log and `scorch doctor`")
            log.error("%s", self.midi_error)
            return
        self.router = router
        self.midi_error = None

    def router_proxy(self) -> MidiRouterProxy | None:
        """The MIDI router, when MIDI runs."""
        return self.router

    def conductor_proxy(self) -> ConductorProxy | None:
        """The tempo's owner, once the tree is started."""
        return self.conductor

    def tempo_view(self) -> TempoView:
        """The beat grids, for readers in any thread (the conductor replaces them)."""
        return self.tempo

    def midi_status(self) -> str | None:
        """Why MIDI is off, or None when it runs."""
        return self.midi_error

    def room_changed(self, name: str) -> None:
        """A room is READY again, or its nodes changed: the router re-reads where they are,
        and the conductor gives a new sclang the tempo at once."""
        if self.router is not None:
            self.router.refresh_targets()
        if self.conductor is not None:
            self.conductor.tick()

    def jack_pid(self) -> int | None:
        """The pid of scorch's own jackd, if it runs."""
        return self.jack.pid().get(timeout=ASK_TIMEOUT) if self.jack is not None else None

    def _keep_jack(self) -> Keeper:
        """A keeper for the private jackd: restart it with backoff, then the rooms."""
        me = self.actor_ref.proxy()
        wd = self.config.watchdog
        server = self.config.audio.jack_server
        keeper = Keeper(
            "jackd", wd.backoff(), wd.intensity(),
            restart=lambda: me.restart_jack().get(timeout=ASK_TIMEOUT),
            gave_up=lambda reason: me.jack_gave_up(reason),
            retrying=lambda delay, attempt, failure: log.warning(
                "restarting jackd %r in %.2f s (attempt %d)", server, delay, attempt),
        )
        keeper.start()
        return keeper

    def jack_crashed(self, how: str) -> None:
        """jackd exited on its own: its keeper restarts it (the rooms wait for it)."""
        if self._stopping or self._jack_keeper is None:
            return
        log.warning("jackd %r crashed (%s)", self.config.audio.jack_server, how)
        self._jack_keeper.fault(f"jackd {how}")

    def restart_jack(self) -> None:
        """Start jackd again and tell every room that JACK is back (the keeper asks)."""
        if self._stopping or self.jack is None:
            return
        self.jack.stop_server().get(timeout=ASK_TIMEOUT)
        self.jack.start_server().get(timeout=ASK_TIMEOUT)  # BootError: the keeper retries
        for proxy in self.rooms.values():
            proxy.jack_restarted()

    def jack_gave_up(self, reason: str) -> None:
        """jackd cannot be kept up: every room is FAILED with the reason."""
        reason = f"the JACK server {self.config.audio.jack_server!r} keeps dying: {reason}"
        log.error("%s; every room is FAILED", reason)
        for proxy in self.rooms.values():
            proxy.jack_failed(reason)

    def stop_all(self, timeout: float = 20.0) -> None:
        """Stop in reverse order: MIDI, watchdog, rooms (in parallel), JACK.

        A child that does not stop in time is logged and the rest still stop.
        """
        self._stopping = True
        if self._jack_keeper is not None:
            self._jack_keeper.halt()
        children = (("MIDI router", self.router), ("conductor", self.conductor),
                    ("watchdog", self.watchdog))
        for name, child in children:
            if child is not None:
                _stop(name, child.actor_ref.stop(block=False), timeout)
        self.router = None
        self.conductor = None
        self.watchdog = None
        stops = {name: proxy.actor_ref.stop(block=False) for name, proxy in self.rooms.items()}
        for name, future in stops.items():
            _stop(f"room {name!r}", future, timeout)
        self.rooms.clear()
        if self.jack is not None:
            _stop("jackd", self.jack.actor_ref.stop(block=False), timeout)
            self.jack = None

    def on_stop(self) -> None:
        """Stop the tree with the supervisor (actor thread)."""
        if not self._stopping:
            self.stop_all()


def _stop(what: str, future: pykka.Future[bool], timeout: float) -> None:
    try:
        future.get(timeout=timeout)
    except pykka.Timeout:
        log.error("%s did not stop within %g s; stopping the rest", what, timeout)


class SupervisorProxy(ActorMemberMixin, pykka.ActorProxy[Supervisor]):
    """The supervisor's typed proxy (``Supervisor.start(...).proxy()`` is cast to it)."""

    start_tree = proxy_method(Supervisor.start_tree)
    apply = proxy_method(Supervisor.apply)
    stop_all = proxy_method(Supervisor.stop_all)
    room_proxies = proxy_method(Supervisor.room_proxies)
    router_proxy = proxy_method(Supervisor.router_proxy)
    conductor_proxy = proxy_method(Supervisor.conductor_proxy)
    watchdog_proxy = proxy_method(Supervisor.watchdog_proxy)
    tempo_view = proxy_method(Supervisor.tempo_view)
    midi_status = proxy_method(Supervisor.midi_status)
    start_midi = proxy_method(Supervisor.start_midi)
    audio_choice = proxy_method(Supervisor.audio_choice)
    jack_pid = proxy_method(Supervisor.jack_pid)
