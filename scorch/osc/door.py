"""The OSC door: surfaces (TouchOSC, Open Stage Control, other software) play scorch by OSC.

A front end like the page and MCP: each message from a surface is read without trust
(:mod:`scorch.osc.addresses`) and run as an operation through the service (``set``,
``scene``, ``midi panic``), so it is checked and journaled as any other call. Only this
machine and the ``[osc] allow`` addresses are heard. Every param change, from anywhere,
goes back to the registered surfaces (newest value first, at most ``[osc] rate`` a
second each), except to a surface the very value came from.

Two threads: one reads the socket and runs the calls; one sends the changes.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from scorch.config import OscConfig, parse_listen
from scorch.errors import InvalidRequest, OscError, ScorchError
from scorch.osc.addresses import (
    PREFIX,
    CueGo,
    Nothing,
    Panic,
    Scene,
    SetParam,
    Surface,
    param_address,
    parse,
)
from scorch.primitives import decode_packet, encode_message
from scorch.state import NodeStarted, ParamsChanged, Published
from scorch.state.changes import Change

if TYPE_CHECKING:
    from scorch.app import Orchestra

log = logging.getLogger(__name__)

#: A datagram's most bytes (UDP's).
MAX_DATAGRAM = 65535
#: Seconds a surface's own value is not sent back to it (it shows it already).
ECHO_WINDOW = 2.0
#: Registered surfaces at most (each is sent every change).
MAX_SURFACES = 64
STOP_WAIT = 2.0
_F32 = struct.Struct(">f")

Address = tuple[str, int]
ParamKey = tuple[str, str, str]


def float32(value: float) -> float:
    """``value`` as an OSC float carries it (what a surface and scsynth hold)."""
    return float(_F32.unpack(_F32.pack(value))[0])


class Caller(Protocol):
    """What runs the operations (a service)."""

    def call(self, name: str, args: Mapping[str, Any]) -> Any:
        """Run operation ``name`` with ``args``."""
        ...


@dataclass(eq=False)
class _Surface:
    """One registered surface: where it listens, what waits for it, what it sent us."""

    address: Address
    outbox: dict[str, float] = field(default_factory=dict)
    tokens: float = 0.0
    refilled: float = 0.0


class OscDoor:
    """Hear OSC from surfaces and run it; tell the surfaces every param change."""

    def __init__(self, service: Caller, config: OscConfig,
                 current: Callable[[], Mapping[ParamKey, float]] | None = None) -> None:
        self._service = service
        self._config = config
        self._current = current
        """Every named node's params now (sent to a surface when it registers)."""
        self._socket: socket.socket | None = None
        self._surfaces: dict[Address, _Surface] = {}
        self._heard: dict[tuple[Address, str], tuple[float, float]] = {}
        """(surface, address) -> (the value it sent, when): not sent back to it."""
        self._pending: dict[ParamKey, float] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._threads: list[threading.Thread] = []
        self.counts = {"received": 0, "refused": 0, "errors": 0, "sent": 0, "replaced": 0}
        self.address: Address | None = None
        """Where the door listens, once started."""
        self.on_stop: Callable[[], None] | None = None
        """Called when the door stops (what stops it hearing of changes)."""

    def start(self) -> None:
        """Bind the socket and start both threads; OSError when the port is taken."""
        host, port = self._config.address()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_DGRAM)
        try:
            sock.bind((host, port))
        except OSError:
            sock.close()
            raise
        self._socket = sock
        self.address = sock.getsockname()[:2]
        for text in self._config.surfaces:
            self._register(parse_listen(text, port))
        for target, name in ((self._receive, "osc-door"), (self._feed, "osc-feedback")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        log.info("OSC door on %s:%d", *self.address)

    def stop(self) -> None:
        """Stop both threads and close the socket."""
        if self.on_stop is not None:
            self.on_stop()
        self._halt.set()
        self._wake.set()
        sock, self._socket = self._socket, None
        if sock is not None:
            sock.close()
        for thread in self._threads:
            thread.join(timeout=STOP_WAIT)

    def changed(self, room: str, node: str, values: Mapping[str, float]) -> None:
        """Params set somewhere (any thread; never waits): the surfaces are told."""
        with self._lock:
            for param, value in values.items():
                self._pending[(room, node, param)] = value
        self._wake.set()

    def surfaces(self) -> list[Address]:
        """The registered surfaces."""
        with self._lock:
            return list(self._surfaces)

    # -- the socket's thread ---------------------------------------------------------

    def _receive(self) -> None:
        while not self._halt.is_set():
            sock = self._socket
            if sock is None:
                return
            try:
                data, sender = sock.recvfrom(MAX_DATAGRAM)
            except OSError:
                return
            if not self._config.allowed(sender[0]):
                self.counts["refused"] += 1
                continue
            self.counts["received"] += 1
            try:
                messages = decode_packet(data)
            except (OscError, ValueError, RecursionError) as err:
                self._refuse(sender, f"not OSC: {err}")
                continue
            for message in messages:
                try:
                    self._run(parse(message), sender[:2])
                except ScorchError as err:
                    self._refuse(sender, str(err))
                except Exception:  # a call's own bug: logged, the door stays open
                    self.counts["errors"] += 1
                    log.exception("OSC %s failed", message.address)

    def _run(self, command: Any, sender: Address) -> None:
        if isinstance(command, SetParam):
            if command.value is None:
                self._answer(sender, command)
                return
            self._heard[(sender, param_address(*command[:3]))] = (
                float32(command.value), time.monotonic())
            if len(self._heard) > 4096:
                self._heard.clear()
            self._service.call("set", {"instance": command.room, "node": command.node,
                                       "params": {command.param: command.value}})
        elif isinstance(command, Scene):
            args: dict[str, Any] = {"action": command.action, "name": command.name}
            if command.position is not None:
                args["position"] = command.position
            self._service.call("scene", args)
        elif isinstance(command, CueGo):
            # through the cue operation: journaled, and fired on every host at one time
            go: dict[str, Any] = {"action": "go", "cue": command.number}
            if command.at is not None:
                go["at"] = command.at
            self._service.call("cue", go)
        elif isinstance(command, Panic):
            self._service.call("midi", {"action": "panic"})
        elif isinstance(command, Surface):
            where = (sender[0], command.port or sender[1])
            if command.add:
                self._register(where)
            else:
                with self._lock:
                    self._surfaces.pop(where, None)
        else:
            assert isinstance(command, Nothing)

    def _register(self, where: Address) -> None:
        with self._lock:
            if where not in self._surfaces and len(self._surfaces) >= MAX_SURFACES:
                raise InvalidRequest(f"{MAX_SURFACES} surfaces are registered already")
            surface = self._surfaces.setdefault(where, _Surface(where))
            if self._current is not None:
                for key, value in self._current().items():
                    surface.outbox[param_address(*key)] = value
        log.info("OSC surface %s:%d registered", *where)
        self._wake.set()

    def _answer(self, sender: Address, command: SetParam) -> None:
        values = self._current() if self._current is not None else {}
        value = values.get(command[:3])
        if value is None:
            raise InvalidRequest(f"no param {command.param!r} of a node {command.node!r} "
                                 f"in {command.room!r}")
        self._send(encode_message(param_address(*command[:3]), float(value)), sender)

    def _refuse(self, sender: Address, why: str) -> None:
        self.counts["errors"] += 1
        log.debug("OSC from %s:%d refused: %s", sender[0], sender[1], why)
        self._send(encode_message(f"{PREFIX}/error", why[:500]), sender[:2])

    def _send(self, packet: bytes, where: Address) -> None:
        sock = self._socket
        if sock is None:
            return
        try:
            sock.sendto(packet, where)
        except OSError as err:  # a surface gone, an unreachable host: it loses this one
            log.debug("OSC to %s:%d: %s", where[0], where[1], err)

    # -- the feedback thread ---------------------------------------------------------

    def _feed(self) -> None:
        waits: float | None = None
        while not self._halt.is_set():
            self._wake.wait(waits)
            self._wake.clear()
            with self._lock:
                pending, self._pending = self._pending, {}
                surfaces = list(self._surfaces.values())
            now = time.monotonic()
            waits = None
            for surface in surfaces:
                for key, value in pending.items():
                    address = param_address(*key)
                    heard = self._heard.get((surface.address, address))
                    if heard is not None and heard[0] == float32(value) and \
                            now - heard[1] < ECHO_WINDOW:
                        continue  # its own value: it shows it already
                    if address in surface.outbox:
                        self.counts["replaced"] += 1
                    surface.outbox.pop(address, None)
                    surface.outbox[address] = value
                wait = self._flush(surface, now)
                if wait is not None:
                    waits = wait if waits is None else min(waits, wait)

    def _flush(self, surface: _Surface, now: float) -> float | None:
        rate = self._config.rate
        surface.tokens = min(rate * 0.05 + 1, surface.tokens + (now - surface.refilled) * rate)
        surface.refilled = now
        while surface.outbox and surface.tokens >= 1.0 - 1e-9:
            address = next(iter(surface.outbox))
            value = surface.outbox.pop(address)
            self._send(encode_message(address, float(value)), surface.address)
            self.counts["sent"] += 1
            surface.tokens -= 1.0
        return (1.0 - surface.tokens) / rate if surface.outbox else None


def shown(change: Change) -> bool:
    """What the surfaces are sent from the change bus: params set, and a node's start."""
    kind = type(change)
    return kind is ParamsChanged or kind is NodeStarted


def open_door(service: Caller, orch: Orchestra, config: OscConfig) -> OscDoor:
    """Start the OSC door of ``orch`` (OSError: its port is taken) and have it follow every
    param change on the change bus."""
    def current() -> dict[ParamKey, float]:
        return {(room, node, param): value for room in orch.views
                for node, info in orch.rooms.nodes(room).items()
                for param, value in info.params.items()}

    door = OscDoor(service, config, current)
    door.start()
    def follow(published: Published) -> None:
        change = published.change
        assert isinstance(change, (ParamsChanged, NodeStarted))
        door.changed(change.room, change.node, change.params)

    door.on_stop = orch.bus.subscribe(follow, "osc-door", shown).close
    return door
