"""The MIDI router actor: owns the MIDI ports and sends OSC straight to scsynth.

The hot path is the input thread's (:class:`~actors.router.input.MidiInput`): the
inputs' queues through the engine and out of the sender, never through the mailbox, on
tables the actor swaps in whole. The feedback thread (:mod:`actors.router.feedback`)
draws devices' lights. The actor's thread does the rest: ports on hotplug, routes,
learning, the targets, the devices' profiles and pages (:mod:`actors.router.surfaces`).
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pykka

from actors.router.bus_link import BusLink
from actors.router.clock import ClockOut
from actors.router.feedback import FeedbackSender
from actors.router.hotplug import PortWatch
from actors.router.input import MidiInput
from actors.router.learn import Learners
from actors.router.outgoing import PANIC, encode
from actors.router.ports import OPEN_ERRORS, PortSet
from actors.router.sender import OscSender
from actors.router.surfaces import Devices
from actors.router.targets import Targets, where_targets_are
from actors.ticker import Ticker
from midi import (
    FILENAME,
    KIND,
    ClockOutConfig,
    ClockReading,
    Engine,
    MidiConfig,
    Route,
    RouteEntry,
    load_routes,
    port_matches,
    resolve_all,
    save_routes,
)
from midi.io import InputPort, OutputPort
from scorch.config import Profiles, load_profiles
from scorch.errors import RouteNotFound
from scorch.notes import OUTPUT, Capture
from scorch.state import INSTALLATION, Bus, TempoView

log = logging.getLogger(__name__)


class MidiRouter(pykka.ThreadingActor):
    """Route MIDI ports to rooms: control routes move parameters, key routes play."""

    def __init__(self, config: MidiConfig, targets: Targets, state_dir: Path,
                 jack_server: str | None = None, voice_slot: int | None = None,
                 tempo: TempoView | None = None,
                 on_clock: Callable[[ClockReading], None] | None = None,
                 tempo_scope: Callable[[str | None], str] = lambda group: INSTALLATION,
                 profiles: Profiles | None = None, bus: Bus | None = None) -> None:
        super().__init__()
        self._config = config
        self._bus = BusLink(bus)
        """Where the values MIDI changed and the routes are announced, and whence what others
        changed comes."""
        self._tempo = tempo
        """The tempo MIDI clock out follows (None: no clock out)."""
        self._tempo_scope = tempo_scope
        self._clocks: list[ClockOut] = []
        self._targets = targets
        self._store = Path(state_dir) / FILENAME
        self._notes = Path(state_dir) / "notes"  # the inputs' notes, kept across restarts
        self._client = config.virtual_port or "scorch"
        self._jack_server = jack_server
        """The JACK server the JACK backend joins (scorch's own), or None for the default."""
        # Several hosts: each host's router takes its own voice ids, so two routers
        # playing one room never reuse each other's nodes.
        # A router started again (a reload) must not reuse the ids of voices the last one
        # released and that still fade out: start somewhere else in the span.
        self._engine = Engine(voice_slot, voice_offset=random.randrange(2**24))
        self._lock = threading.Lock()
        self._sender = OscSender(self._lock, config.coalesce_interval, self._bus.report,
                                 targets.scene, self._page_pressed)
        self._devices = Devices(profiles if profiles is not None else load_profiles(),
                                config.feedback)
        self._feedback = FeedbackSender(self._lock, self._engine)
        kinds: list[tuple[str, tuple[Route, ...]]] = [
            ("control", config.controls), ("key", config.keys), ("scene", config.scenes),
            ("page", config.pages), ("cue", config.cues)]
        self._config_routes = [RouteEntry(r.id or f"config-{kind}-{i}", r, "config")
                               for kind, routes in kinds for i, r in enumerate(routes)]
        self._runtime_routes: list[RouteEntry] = []
        self._route_errors: dict[str, str] = {}
        self._ports: PortSet | None = None
        self._rescanner: Ticker | None = None
        self._watcher: PortWatch | None = None
        self._holds = False
        """A key route has a max_hold: voices are looked at every WATCH_INTERVAL."""
        self._learners = Learners(self._lock, self._engine)
        self._me: Any = None  # the actor's own proxy: the input thread tells it of pages
        self._counts = {"received": 0, "thinned": 0, "handled": 0, "rescans": 0,
                        "ports_gone": 0, "released_gone": 0, "released_max_hold": 0,
                        "input_errors": 0}
        self._input = MidiInput(self._lock, self._engine, self._sender, self._counts,
                                on_clock, self._feedback.wake)

    @property
    def _open(self) -> PortSet:
        assert self._ports is not None, "the router's ports open in on_start"
        return self._ports

    # -- lifecycle (actor thread) -----------------------------------------------

    def on_start(self) -> None:
        """Open the backend and ports, load run-time routes, start the helper threads."""
        self._runtime_routes = load_routes(self._store)
        if self._config.capture_notes:  # before the input thread, its one writer, starts
            self._input.capture = Capture.load(self._notes, self._config.capture_notes)
            self._engine.played = self._input.played  # the rooms' notes too
        self._sender.start()  # before any port: the input thread sends through it
        self._feedback.start()
        self._ports = PortSet(self._config.backend, self._client, self._jack_server,
                              self._config.clock_in, self._input.wake)
        self._input.event_driven = self._ports.native
        if self._config.virtual_port:
            self._ports.open_virtual(self._config.virtual_port)
            self._input.ports = tuple(self._ports.inputs.values())
        self._refresh_targets()
        self._rescan()
        self._input.start()
        me = self._me = self.actor_ref.proxy()
        self._bus.follow(me)
        self._rescanner = Ticker(self._config.rescan_interval, me.rescan,
                                 "midi-router-rescan").start()
        self._watcher = PortWatch(self._ports.told, me.watch, self._rescanner.hurry,
                                  lambda: self._holds).start()
        if self._tempo is not None and self._config.clock_out:
            scopes: dict[str, list[ClockOutConfig]] = {}
            for clock in self._config.clock_out:
                scopes.setdefault(self._tempo_scope(clock.group), []).append(clock)
            self._clocks = [ClockOut(scope, clocks, self._tempo, self._clock_output).start()
                            for scope, clocks in scopes.items()]

    def on_stop(self) -> None:
        """Stop the threads, close every port, flush what is held back."""
        self._bus.close()
        if self._watcher is not None:
            self._watcher.stop()
        if self._rescanner is not None:
            self._rescanner.stop()
        for clock in self._clocks:
            clock.stop()
        self._clocks = []
        input_stopped = self._input.stop()
        self._feedback.stop()  # before the outputs it sends to close
        self._learners.cancel()
        with self._lock:
            # A router that stops (a reload, shutdown) leaves no voice sounding: its
            # successor knows none of them, so their note-offs would match nothing.
            released = self._engine.panic()
            if released:
                self._sender.apply(released, time.monotonic_ns() * 1e-9)
                log.info("MIDI router stopping: released %d voices", len(released))
        if self._ports is not None:
            with self._lock:  # never while the input thread takes from them
                self._input.ports = ()
                if input_stopped:
                    self._ports.close()
                else:  # deleting an rtmidi port in use would crash the process: leak it
                    log.error("MIDI input thread did not stop; its ports are left open")
            self._ports = None
        if input_stopped:  # its eventfd, after every input that wrote it is closed
            self._input.close()
        self._sender.stop()
        if self._input.capture is not None:
            try:
                self._input.capture.save(self._notes)
            except OSError:
                log.exception("the captured notes were not saved in %s", self._notes)

    def on_failure(self, *_exc: object) -> None:
        """Close the ports even when the actor dies of an exception."""
        self.on_stop()

    # -- public API (actor thread) -------------------------------------------------

    def ports(self) -> dict[str, Any]:
        """Return open inputs and outputs, the configured names that match nothing, and the
        devices recognised by their profiles."""
        described = self._open.describe()
        ports = [name for side in described["available"].values() for name in side]
        return {**described, "devices": self._devices.describe(ports),
                "pages": dict(self._devices.pages)}

    def profiles(self) -> Profiles:
        """The controller profiles the router knows (immutable: read from any thread)."""
        return self._devices.profiles

    def switch_page(self, port: str, page: str) -> None:
        """Show ``page`` of the routes of the device on input ``port`` (a page button)."""
        if self._devices.switch(port, page):
            log.info("MIDI %s: page %s", port, page)
            self._refresh_targets()

    def routes(self) -> list[dict[str, Any]]:
        """Return every route, from config and run time, with its resolved rooms."""
        out = []
        for entry in self._entries():
            selector = getattr(entry.route, "instance", "")
            out.append({"id": entry.id, "origin": entry.origin, "type": KIND[type(entry.route)],
                        "route": entry.route.model_dump(mode="json"),
                        "error": self._route_errors.get(selector)})
        return out

    def map(self, route: Route) -> str:
        """Add (or replace, by id) a run-time route; it is saved and survives a restart."""
        route_id = route.id or f"{KIND[type(route)]}-" + uuid.uuid4().hex[:8]
        if any(e.id == route_id for e in self._config_routes):
            raise ValueError(f"route {route_id!r} comes from config.toml: edit it there")
        kept = [e for e in self._runtime_routes if e.id != route_id]
        self._commit([*kept, RouteEntry(route_id, route, "runtime")])
        self._bus.route(route_id, route.model_dump(mode="json"))
        return route_id

    def unmap(self, route_id: str) -> None:
        """Remove a run-time route."""
        if any(e.id == route_id for e in self._config_routes):
            raise ValueError(f"route {route_id!r} comes from config.toml: edit it there")
        kept = [e for e in self._runtime_routes if e.id != route_id]
        if len(kept) == len(self._runtime_routes):
            ids = [e.id for e in self._runtime_routes]
            raise RouteNotFound(f"no run-time MIDI route {route_id!r}; run-time routes: "
                                f"{', '.join(ids) or '(none)'}", name=route_id, known=ids)
        self._commit(kept)
        self._bus.route(route_id, None)

    def learn(self, timeout_s: float) -> Future[dict[str, Any] | None]:
        """Arm learning; return a future of the first control or note moved within
        ``timeout_s`` (None: none): at once, so the actor serves others while it waits."""
        return self._learners.arm(timeout_s)

    def send(self, port: str, kind: str, channel: int = 1, **fields: int) -> str:
        """Send a note, CC, program change or clock message to the output matching ``port``,
        or into scorch's own input; return where it went. ``kind`` is note_on, note_off, cc,
        program, clock, start, stop or continue; fields are mido's (note, velocity, control,
        value, program); channel is 1-16."""
        data = encode(kind, channel, fields)
        if (own := self._open.own_input(port)) is not None:
            with self._lock:  # as if it came in there: routed and captured
                return self._input.inject(own, data, time.monotonic_ns())
        output = self._open.output(port)
        output.send(data)
        capture = self._input.capture
        if capture is not None and len(data) == 3:  # kept as the output's notes
            with self._lock:  # the rings' writers take turns under it
                capture.ring(OUTPUT + output.name).message(time.monotonic(), *data)
        return output.name

    def panic(self) -> int:
        """Release every voice, lift every pedal, send all-notes-off to every output."""
        with self._lock:
            actions = self._engine.panic()
            self._sender.apply(actions, time.monotonic_ns() * 1e-9)
        for output in self._open.outputs.values():
            for message in PANIC:
                output.send(message)
        return len(actions)

    def observe(self, room: str, node: str, values: dict[str, float],
                moved: bool = False) -> None:
        """Note values set elsewhere (MCP, a scene, another host's knob, a replayed node) so
        takeover will not jump; the bus's changes come here (:class:`BusLink`).

        ``moved``: the node was (re)started with a new id; the router looks again.
        """
        with self._lock:
            touched = self._engine.touched
            for param, value in values.items():
                self._engine.observe(room, node, param, value)
                touched[(room, node, param)] = None  # feedback draws it
        self._feedback.told()
        if moved:
            self._refresh_targets()

    def forget(self, room: str, node: str | None) -> None:
        """Forget the values of a node that is gone (None: of every node of ``room``)."""
        with self._lock:
            self._engine.forget(room, node)

    def refresh_targets(self) -> None:
        """Ask the targets again where rooms and nodes are (tell this when one is READY)."""
        self._refresh_targets()

    def capture(self) -> Capture | None:
        """The inputs' notes (read from any thread: see NoteRing), or None: not captured."""
        return self._input.capture

    def stats(self) -> dict[str, Any]:
        """Return counters and the hot path's time from callback to datagram sent."""
        return {
            **self._counts, "inputs": {p.name: p.taken for p in self._input.ports},
            "queued": sum(p.taken for p in self._input.ports), **self._sender.stats(),
            "errors": self._engine.errors, "notes_on": self._engine.notes[0],
            "notes_off": self._engine.notes[1], "voices": len(self._engine.voices),
            "bus": self._bus.stats(),
            "watch": {"looks": watcher.looks, "told": watcher.told, "event_driven":
                      self._ports is not None and self._ports.told is not None}
            if (watcher := self._watcher) is not None else None,
            "clock_in": self._clock_in_state(),
            "clock_out": {clock.scope: {"ticks": clock.stats.ticks, "late": clock.stats.late}
                          for clock in self._clocks},
            "feedback": {**self._feedback.counts, "echoes_dropped": self._engine.echoed,
                         "devices": sorted(self._devices.surfaces)},
        }

    def hot_path_ns(self) -> tuple[int, list[int]]:
        """Messages timed so far, and the hot path's ns of the last of them (benchmarks)."""
        sender = self._sender
        return sender.timed, list(sender.timings)

    def clock_lateness(self) -> dict[str, list[float]]:
        """Seconds after its time each of the last ticks of each clock left (benchmarks)."""
        return {clock.scope: list(clock.stats.lateness) for clock in self._clocks}

    def _clock_in_state(self) -> dict[str, Any] | None:
        if self._config.clock_in is None:
            return None
        with self._lock:
            follower = self._input.follower
            return {"port": self._config.clock_in, "ticks": follower.ticks_seen,
                    "bpm": follower.bpm(), "playing": follower.playing}

    def rescan(self) -> None:
        """Look for ports that came or went (the rescan thread tells this)."""
        try:
            self._rescan()
            self._refresh_targets()
        except Exception:
            # Told, not asked: an exception here would stop the actor, and the next tick
            # may well succeed (a port that vanished mid-open, an orchestra mid-restart).
            log.exception("MIDI rescan failed")

    def watch(self) -> None:
        """Release the voices of inputs that went away and those past max_hold (ticker)."""
        try:
            gone = self._open.gone()
            if gone:
                self._retire(gone)
                self._refresh_targets()
            with self._lock:
                actions = self._engine.expire(self._engine.clock())
                if actions:
                    self._sender.apply(actions, time.monotonic_ns() * 1e-9)
            if actions:
                self._counts["released_max_hold"] += len(actions)
                log.warning("released %d MIDI voices held past their max_hold", len(actions))
        except Exception:
            log.exception("MIDI watch failed")  # told, not asked: the next tick tries again

    # -- called from other threads ------------------------------------------------

    def _clock_output(self, pattern: str) -> OutputPort | None:
        """The open output a clock sends to (clock threads; a dict read is atomic)."""
        ports = self._ports
        if ports is None:
            return None
        for name, port in list(ports.outputs.items()):
            if port_matches(pattern, name):
                return port
        return None

    def _page_pressed(self, port: str, page: str) -> None:
        """A page button was pressed (input thread): the actor switches, not this thread."""
        self._me.switch_page(port, page)  # set in on_start, before the input thread

    # -- internals (actor thread) -----------------------------------------------------

    def _entries(self) -> list[RouteEntry]:
        return [*self._config_routes, *self._runtime_routes]

    def _commit(self, runtime: list[RouteEntry]) -> None:
        save_routes(self._store, runtime)
        self._runtime_routes = runtime
        self._refresh_targets()
        self._rescan()

    def _refresh_targets(self) -> None:
        entries = self._entries()
        resolved, errors = resolve_all(entries, self._targets.resolve)
        for selector, message in errors.items():
            if self._route_errors.get(selector) != message:
                log.error("MIDI route to %r: %s", selector, message)
        self._route_errors = errors
        self._holds = any(getattr(e.route, "max_hold", None) for e in entries)
        snapshot = where_targets_are(entries, resolved, self._targets)
        devices = self._devices
        devices.surface(self._open.inputs, self._open.outputs)
        tables = devices.tables(self._open.inputs, entries, resolved)
        with self._lock:  # one swap, so a message sees old or new, never half
            self._engine.tables = tables
            self._engine.snapshot = snapshot
        self._feedback.install(*devices.bindings(tables, entries))

    def _rescan(self) -> None:
        self._counts["rescans"] += 1
        wanted = [*self._config.inputs, *(e.route.port for e in self._entries())]
        if self._config.clock_in is not None:
            wanted.append(self._config.clock_in)
        outputs = [*self._config.outputs, *(c.port for c in self._config.clock_out)]
        before = set(self._open.inputs)
        try:
            gone = self._open.rescan(wanted, outputs, lambda inputs, outs: self._devices.outputs(
                {"inputs": inputs, "outputs": outs}, wanted))
        except OPEN_ERRORS as err:  # the ports could not even be listed: the next rescan
            log.warning("MIDI ports not rescanned: %s", err)
            return
        if gone:
            self._retire(gone)
        if gone or set(self._open.inputs) != before:
            self._input.ports = tuple(self._open.inputs.values())
            self._refresh_targets()

    def _retire(self, gone: list[InputPort]) -> None:
        """Close inputs that went away; release every voice they started."""
        self._input.ports = tuple(self._open.inputs.values())
        for port in gone:
            log.warning("MIDI input %r disappeared", port.name)
            port.stop()
        released = 0
        with self._lock:
            for port in gone:
                start = time.monotonic_ns()
                self._input.take(port, start)  # what it sent before it went, note-offs too
                port.closed = True
                actions = self._engine.drop_port(port.name)
                self._sender.apply(actions, start * 1e-9)
                released += len(actions)
                port.close()
        self._counts["ports_gone"] += len(gone)
        self._counts["released_gone"] += released
        if released:
            log.warning("released %d MIDI voices started from %s", released,
                        ", ".join(repr(p.name) for p in gone))
