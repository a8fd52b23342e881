"""The MIDI router actor: owns the MIDI ports and sends OSC straight to scsynth.

Two paths, two kinds of thread:

- The hot path runs in the MIDI backend's callback thread: raw bytes go through
  :class:`midi.engine.Engine` under one lock and out of a UDP socket at once.
  Nothing on it goes through the actor's mailbox (that would add a thread hop
  per message); it reads route tables the actor swaps in whole.
- Everything else runs in the actor's own thread: opening and closing ports on
  hotplug, route changes, asking the targets where the instances are.

A sender thread flushes values the coalescer held back under a flood and reports
applied values to the desired state in batches, so the callback never waits on
the orchestra.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import mido
import pykka

from midi.coalesce import Coalescer
from midi.engine import Action, BendVoice, Engine, ReleaseVoice, SetParam, Snapshot, StartVoice
from midi.ports import InputPort, MessageCallback, OutputPort, find_port, open_scanners, own_port
from midi.routes import Route, RouteEntry, compile_table, port_matches, resolve_all
from midi.schema import ControlRoute, MidiConfig
from midi.store import FILENAME, load_routes, save_routes
from midi.targets import Targets
from scorch.errors import MidiPortNotFound
from scorch.primitives import commands

log = logging.getLogger(__name__)

_TIMINGS = 4096
_REPORT_EVERY = 0.02
_SEND_KINDS = {
    "note_on": "note_on",
    "note_off": "note_off",
    "cc": "control_change",
    "control_change": "control_change",
    "program": "program_change",
    "program_change": "program_change",
    "clock": "clock",
    "start": "start",
    "stop": "stop",
    "continue": "continue",
}

Address = tuple[str, int]

_FLOAT_INTO = struct.Struct(">f").pack_into
_INT32 = struct.Struct(">i").pack
#: ``/n_set <node> gate 0.0`` around the node id, for releases.
_RELEASE = commands.release(0)
_RELEASE_HEAD, _RELEASE_TAIL = _RELEASE[:16], _RELEASE[20:]


class MidiRouter(pykka.ThreadingActor):
    """Route MIDI ports to instances: control routes move parameters, key routes play."""

    def __init__(self, config: MidiConfig, targets: Targets, state_dir: Path) -> None:
        super().__init__()
        self._config = config
        self._targets = targets
        self._store = Path(state_dir) / FILENAME
        self._client = config.virtual_port or "scorch"
        self._engine = Engine()
        self._lock = threading.Lock()
        self._coalescer: Coalescer[tuple[Address, bytearray]] = Coalescer(
            config.coalesce_interval
        )
        self._dirty: dict[tuple[str, str, str], float] = {}
        self._packets: dict[tuple[Address, int, str], tuple[Address, bytearray]] = {}
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        self._config_routes = [
            RouteEntry(r.id or f"config-control-{i}", r, "config")
            for i, r in enumerate(config.controls)
        ] + [RouteEntry(r.id or f"config-key-{i}", r, "config") for i, r in enumerate(config.keys)]
        self._runtime_routes: list[RouteEntry] = []
        self._route_errors: dict[str, str] = {}
        self._inputs: dict[str, InputPort] = {}
        self._outputs: dict[str, OutputPort] = {}
        self._missing: dict[str, list[str]] = {"inputs": [], "outputs": []}
        self._api = 0
        self._backend: str = config.backend
        self._scan_in: Any = None
        self._scan_out: Any = None
        self._halt = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._learners: list[Future[dict[str, Any] | None]] = []
        self._timings = [0] * _TIMINGS
        self._timed = 0
        self._counts = {"received": 0, "handled": 0, "sent": 0, "rescans": 0}

    # -- lifecycle (actor thread) -----------------------------------------------

    def on_start(self) -> None:
        """Open the backend and ports, load run-time routes, start the helper threads."""
        self._runtime_routes = load_routes(self._store)
        self._backend, self._api, self._scan_in, self._scan_out = open_scanners(
            self._config.backend, self._client
        )
        if self._config.virtual_port:
            self._inputs[self._config.virtual_port] = InputPort.virtual(
                self._api, self._config.virtual_port, self._callback()
            )
        self._refresh_targets()
        self._rescan()
        for name, target in (("sender", self._send_loop), ("rescan", self._rescan_loop)):
            thread = threading.Thread(target=target, name=f"midi-router-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def on_stop(self) -> None:
        """Stop the threads, flush what is held back, close every port."""
        self._halt.set()
        self._wake.set()
        with self._lock:
            learners, self._learners = self._learners, []
            self._engine.learn = None
        for learner in learners:
            learner.set_result(None)  # its done callback cancels its timer
        for thread in self._threads:
            thread.join(timeout=2.0)
        for port in self._inputs.values():
            port.close()
        for output in self._outputs.values():
            output.close()
        self._inputs.clear()
        self._outputs.clear()
        for scanner in (self._scan_in, self._scan_out):
            if scanner is not None:
                scanner.delete()
        self._scan_in = self._scan_out = None
        self._socket.close()

    def on_failure(self, *_exc: object) -> None:
        """Close the ports even when the actor dies of an exception."""
        self.on_stop()

    # -- public API (actor thread) -------------------------------------------------

    def ports(self) -> dict[str, Any]:
        """Return open inputs and outputs, and the configured names that match nothing."""
        return {
            "backend": self._backend,
            "inputs": sorted(self._inputs),
            "outputs": sorted(self._outputs),
            "missing": {k: list(v) for k, v in self._missing.items()},
            "available": {
                "inputs": self._scan_in.get_ports() if self._scan_in else [],
                "outputs": self._scan_out.get_ports() if self._scan_out else [],
            },
        }

    def routes(self) -> list[dict[str, Any]]:
        """Return every route, from config and run time, with its resolved instances."""
        out = []
        for entry in self._entries():
            selector = entry.route.instance
            out.append(
                {
                    "id": entry.id,
                    "origin": entry.origin,
                    "type": "control" if isinstance(entry.route, ControlRoute) else "key",
                    "route": entry.route.model_dump(mode="json"),
                    "error": self._route_errors.get(selector),
                }
            )
        return out

    def map(self, route: Route) -> str:
        """Add (or replace, by id) a run-time route; it is saved and survives a restart."""
        route_id = route.id or f"{'control' if isinstance(route, ControlRoute) else 'key'}-" + (
            uuid.uuid4().hex[:8]
        )
        if any(e.id == route_id for e in self._config_routes):
            raise ValueError(f"route {route_id!r} comes from config.toml: edit it there")
        kept = [e for e in self._runtime_routes if e.id != route_id]
        self._commit([*kept, RouteEntry(route_id, route, "runtime")])
        return route_id

    def unmap(self, route_id: str) -> None:
        """Remove a run-time route."""
        if any(e.id == route_id for e in self._config_routes):
            raise ValueError(f"route {route_id!r} comes from config.toml: edit it there")
        kept = [e for e in self._runtime_routes if e.id != route_id]
        if len(kept) == len(self._runtime_routes):
            raise KeyError(f"no run-time MIDI route {route_id!r}")
        self._commit(kept)

    def learn(self, timeout_s: float) -> Future[dict[str, Any] | None]:
        """Arm learning; return a future of the first control or note moved within ``timeout_s``.

        Returns at once, so the actor keeps serving rescans and route changes while
        the caller waits on the future (None when nothing moved in time). Learners
        armed together all get the same event.
        """
        learned: Future[dict[str, Any] | None] = Future()
        learned.set_running_or_notify_cancel()  # not cancellable: only the router ends it
        with self._lock:
            self._learners.append(learned)
            self._engine.learn = self._learned
        timer = threading.Timer(timeout_s, self._learn_expired, args=(learned,))
        timer.name, timer.daemon = "midi-router-learn", True
        timer.start()
        learned.add_done_callback(lambda _: timer.cancel())
        return learned

    def send(self, port: str, kind: str, channel: int = 1, **fields: int) -> None:
        """Send a note, CC, program change or clock message to the output matching ``port``.

        ``kind`` is note_on, note_off, cc, program, clock, start, stop or continue;
        fields are mido's (note, velocity, control, value, program); channel is 1-16.
        """
        if kind not in _SEND_KINDS:
            raise ValueError(f"cannot send {kind!r}: use one of {sorted(_SEND_KINDS)}")
        mido_kind = _SEND_KINDS[kind]
        if mido_kind in ("clock", "start", "stop", "continue"):
            message = mido.Message(mido_kind)
        else:
            if not 1 <= channel <= 16:
                raise ValueError(f"channel must be 1-16, got {channel}")
            message = mido.Message(mido_kind, channel=channel - 1, **fields)
        self._output(port).send(message.bytes())

    def panic(self) -> int:
        """Release every voice, lift every pedal, send all-notes-off to every output."""
        with self._lock:
            actions = self._engine.panic()
            self._apply(actions, time.monotonic_ns() * 1e-9)
        for output in self._outputs.values():
            for channel in range(16):
                output.send([0xB0 | channel, 64, 0])
                output.send([0xB0 | channel, 123, 0])
        return len(actions)

    def observe(self, instance: str, node: str, param: str, value: float) -> None:
        """Note a parameter value set elsewhere (MCP, restore) so takeover will not jump."""
        with self._lock:
            self._engine.observe(instance, node, param, value)

    def refresh_targets(self) -> None:
        """Ask the targets again where instances and nodes are (tell this when one is READY)."""
        self._refresh_targets()

    def stats(self) -> dict[str, Any]:
        """Return counters and the hot path's time from callback to datagram sent."""
        count = min(self._timed, _TIMINGS)
        timings = sorted(self._timings[:count])

        def pick(q: float) -> float | None:
            return timings[min(count - 1, int(q * count))] / 1000.0 if count else None

        return {
            **self._counts,
            "errors": self._engine.errors,
            "notes_on": self._engine.notes[0],
            "notes_off": self._engine.notes[1],
            "coalesced": self._coalescer.coalesced,
            "voices": len(self._engine.voices),
            "hot_path_us": {"p50": pick(0.5), "p99": pick(0.99), "max": pick(1.0)},
        }

    def rescan(self) -> None:
        """Look for ports that came or went (the rescan thread tells this)."""
        try:
            self._rescan()
            self._refresh_targets()
        except Exception:
            # Told, not asked: an exception here would stop the actor, and the next tick
            # may well succeed (a port that vanished mid-open, an orchestra mid-restart).
            log.exception("MIDI rescan failed")

    # -- hot path (MIDI callback threads) ------------------------------------------

    def _callback(self) -> MessageCallback:
        # Bind what the callback needs once: it runs thousands of times a second.
        engine, lock, counts = self._engine, self._lock, self._counts
        timings, clock = self._timings, time.monotonic_ns
        apply = self._apply

        def on_message(port: str, data: list[int]) -> None:
            start = clock()
            with lock:
                counts["received"] += 1
                actions = engine.handle(port, data)
                if actions:
                    apply(actions, start * 1e-9)
                    timings[self._timed % _TIMINGS] = clock() - start
                    self._timed += 1
                counts["handled"] += 1

        return on_message

    def _apply(self, actions: list[Action], now: float) -> None:
        """Send ``actions`` (called with the lock held)."""
        send = self._socket.sendto
        for action in actions:
            if type(action) is SetParam:
                instance, node, param, value, address, node_id = action
                self._dirty[(instance, node, param)] = value
                if address is None or node_id is None:
                    continue
                self._set(address, node_id, param, value, now, send)
            elif type(action) is BendVoice:
                self._set(action.address, action.node_id, "freq", action.freq, now, send)
            elif type(action) is StartVoice:
                send(
                    commands.s_new(action.synthdef, action.node_id, commands.AddAction.HEAD,
                                   commands.DEFAULT_GROUP, action.args),
                    action.address,
                )
                self._counts["sent"] += 1
            elif type(action) is ReleaseVoice:
                send(_RELEASE_HEAD + _INT32(action.node_id) + _RELEASE_TAIL, action.address)
                self._counts["sent"] += 1

    def _set(
        self, address: Address, node_id: int, param: str, value: float, now: float, send: Any
    ) -> None:
        """Send ``/n_set node_id param value`` now, or leave it to the coalescer."""
        key = (address, node_id, param)
        item = self._packets.get(key)
        if item is None:
            if len(self._packets) > 4096:
                self._packets.clear()
            # One buffer per key, the value patched in place: the coalescer keeps at most
            # this key's newest value, which is exactly what the buffer holds.
            item = self._packets[key] = (
                address,
                bytearray(commands.n_set(node_id, {param: 0.0})),
            )
        _FLOAT_INTO(item[1], -4, value)
        if self._coalescer.offer(key, item, now):
            send(item[1], address)
            self._counts["sent"] += 1
        elif not self._wake.is_set():  # set() costs a lock; is_set() does not
            self._wake.set()

    def _learned(self, event: dict[str, object]) -> None:
        """Hand the first moved control to every learner (called with the lock held)."""
        learners, self._learners = self._learners, []
        for learner in learners:
            learner.set_result(dict(event))

    def _learn_expired(self, learned: Future[dict[str, Any] | None]) -> None:
        """End one learner with None; disarm the engine if it was the last (timer thread)."""
        with self._lock:
            if learned not in self._learners:
                return  # an event got there first
            self._learners.remove(learned)
            if not self._learners:
                self._engine.learn = None
        learned.set_result(None)

    # -- helper threads ------------------------------------------------------------

    def _send_loop(self) -> None:
        """Flush held-back values when due; report applied values to the desired state."""
        next_report = time.monotonic_ns() * 1e-9 + _REPORT_EVERY
        while not self._halt.is_set():
            self._wake.clear()  # before looking, so a value held back from now on wakes us
            now = time.monotonic_ns() * 1e-9  # the callback's clock
            report = now >= next_report
            next_due = self._flush(now, report)
            if report:
                next_report = now + _REPORT_EVERY
            wait = next_report - now if next_due is None else min(next_due, next_report) - now
            self._wake.wait(max(wait, 0.0))
        self._flush(float("inf"), report=True)

    def _flush(self, now: float, report: bool) -> float | None:
        """Send the values held back until ``now``; with ``report``, report applied values.

        Return when the next held-back value is due (None if none is).
        """
        dirty = None
        with self._lock:
            ready, next_due = self._coalescer.due(now)
            for address, packet in ready:
                self._socket.sendto(packet, address)
            self._counts["sent"] += len(ready)
            if report and self._dirty:
                dirty, self._dirty = self._dirty, {}
        if dirty:  # outside the lock: the callback never waits on the orchestra
            for (instance, node, param), value in dirty.items():
                try:
                    self._targets.param_changed(instance, node, param, value)
                except Exception:
                    log.exception("reporting %s.%s.%s failed", instance, node, param)
        return next_due

    def _rescan_loop(self) -> None:
        proxy = self.actor_ref.proxy()
        while not self._halt.wait(self._config.rescan_interval):
            try:
                proxy.rescan()  # a tell: the rescan runs in the actor's own thread
            except pykka.ActorDeadError:
                return

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
        endpoints: dict[str, Address] = {}
        nodes: dict[tuple[str, str], int] = {}
        for instance in {i for names in resolved.values() for i in names}:
            address = self._targets.endpoint(instance)
            if address is None:
                continue
            endpoints[instance] = address
            for entry in entries:
                route = entry.route
                if isinstance(route, ControlRoute) and instance in resolved.get(
                    route.instance, ()
                ):
                    node_id = self._targets.node_id(instance, route.node)
                    if node_id is not None:
                        nodes[(instance, route.node)] = node_id
        tables = {name: compile_table(name, entries, resolved) for name in self._inputs}
        with self._lock:  # one swap, so a message sees old or new, never half
            self._engine.tables = tables
            self._engine.snapshot = Snapshot(endpoints, nodes)

    def _wanted_inputs(self) -> list[str]:
        return [*self._config.inputs, *(e.route.port for e in self._entries())]

    def _rescan(self) -> None:
        self._counts["rescans"] += 1
        available = [p for p in self._scan_in.get_ports() if not own_port(p, self._client)]
        wanted = self._wanted_inputs()
        changed = False
        for name in list(self._inputs):
            if name != self._config.virtual_port and name not in available:
                log.warning("MIDI input %r disappeared", name)
                self._inputs.pop(name).close()
                changed = True
        for name in available:
            if name in self._inputs or not any(port_matches(p, name) for p in wanted):
                continue
            try:
                self._inputs[name] = InputPort(
                    self._api, name, f"{self._client}-in", self._callback()
                )
            except (MidiPortNotFound, RuntimeError) as err:
                log.warning("MIDI input %r not opened: %s", name, err)
                continue
            log.info("MIDI input %r opened", name)
            changed = True
        self._missing["inputs"] = sorted(
            {p for p in wanted if p != "*" and not any(port_matches(p, n) for n in available)}
        )
        self._rescan_outputs()
        if changed:
            self._refresh_targets()

    def _rescan_outputs(self) -> None:
        available = [p for p in self._scan_out.get_ports() if not own_port(p, self._client)]
        for name in list(self._outputs):
            if name not in available:
                log.warning("MIDI output %r disappeared", name)
                self._outputs.pop(name).close()
        missing = []
        for pattern in self._config.outputs:
            if any(port_matches(pattern, n) for n in self._outputs):
                continue
            try:
                self._open_output(find_port(available, pattern))
            except (MidiPortNotFound, RuntimeError):
                missing.append(pattern)
        self._missing["outputs"] = missing

    def _open_output(self, name: str) -> OutputPort:
        port = self._outputs[name] = OutputPort(self._api, name, f"{self._client}-out")
        log.info("MIDI output %r opened", name)
        return port

    def _output(self, pattern: str) -> OutputPort:
        for name, port in self._outputs.items():
            if port_matches(pattern, name):
                return port
        available = [p for p in self._scan_out.get_ports() if not own_port(p, self._client)]
        return self._open_output(find_port(available, pattern))


#: The typed proxy other actors and the facade hold.
MidiRouterProxy = pykka.ActorProxy[MidiRouter]
