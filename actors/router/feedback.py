"""Feedback: each device is sent what its mapped params are now, in its own language.

The router learns of a param's new value in one place (:meth:`MidiRouter.observe`:
MCP, scenes, undo, sessions, other hosts; the engine's own moves for MIDI) and
marks it touched in the engine; :class:`FeedbackSender`, a thread of its own, takes
what was touched, draws it with each binding's profile feedback
(:mod:`midi.controllers.feedback`) and sends it to the device's output. The MIDI
input thread only marks and wakes: it never waits for a device.

No loop and no flood: a message equal to what the device shows already is not
sent; what is sent is registered with the engine as an expected echo (a device
that sends it back has not been moved); each device has a token bucket of its
profile's ``rate`` messages a second, and of several values of one light waiting
for a token only the newest is sent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from midi.controllers.feedback import address, encode
from midi.controllers.profile import Feedback, Profile
from midi.curves import Curve
from midi.engine import ECHO_WINDOW, Engine
from midi.ports import OutputPort
from midi.takeover import TOLERANCE

log = logging.getLogger(__name__)

#: Seconds of the profile's rate a device may be sent at once (a redraw's burst).
BURST = 0.05
STOP_WAIT = 2.0
ValueKey = tuple[str, str, str]


class Binding(NamedTuple):
    """One control of one device that shows one param."""

    surface: Surface
    feedback: Feedback
    value_key: ValueKey
    curve: Curve
    takeover_key: tuple[str, str] | None
    """The engine's takeover state of the control (None: it never waits to pick up)."""


@dataclass(eq=False)
class Surface:
    """One connected device that gets feedback: its output, what it shows, what waits."""

    input: str
    output: OutputPort
    profile: Profile
    page: str | None = None
    pages: dict[str, Feedback] = field(default_factory=dict)
    """Page buttons' lights by the page each shows."""
    controls: dict[str, Binding] = field(default_factory=dict)
    """Per control name with feedback, the binding that draws it (unmapped: none)."""
    shown: dict[tuple[str, int, int], bytes] = field(default_factory=dict)
    outbox: dict[tuple[str, int, int], bytes] = field(default_factory=dict)
    tokens: float = 0.0
    refilled: float = 0.0
    fresh: bool = True
    """Not set up yet: its init messages and a whole redraw go first."""
    broken: bool = False


class FeedbackSender:
    """The feedback thread: touched params to the devices' lights, rings and faders."""

    def __init__(self, lock: threading.Lock, engine: Engine) -> None:
        self._lock = lock
        self._engine = engine
        self.bindings: Mapping[ValueKey, tuple[Binding, ...]] = {}
        """Param -> the controls that show it (swapped whole by the router's actor)."""
        self.surfaces: tuple[Surface, ...] = ()
        self._redraw: set[Surface] = set()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self.counts = {"sent": 0, "replaced": 0, "unchanged": 0, "waited": 0,
                       "errors": 0}
        self.last_send_ns = 0
        """When the last message left (benchmarks read it)."""
        self.clock: Callable[[], float] = time.monotonic

    def start(self) -> None:
        """Start the feedback thread."""
        self._thread = threading.Thread(target=self._run, name="midi-router-feedback",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (what waits for a token is not sent)."""
        self._halt.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT)

    def wake(self) -> None:
        """Something was touched (any thread): draw it now."""
        if not self._wake.is_set():
            self._wake.set()

    def install(self, surfaces: tuple[Surface, ...],
                bindings: Mapping[ValueKey, tuple[Binding, ...]],
                redraw: set[Surface]) -> None:
        """Swap in the devices and what they show (router's actor thread); redraw some."""
        with self._lock:
            self.surfaces, self.bindings = surfaces, bindings
            self._redraw |= redraw
        self.wake()

    # -- the thread ------------------------------------------------------------------

    def _run(self) -> None:
        timeout: float | None = None
        while not self._halt.is_set():
            self._wake.wait(timeout)
            self._wake.clear()
            if self._halt.is_set():
                return
            try:
                timeout = self._round()
            except Exception:  # a device's failure must not end everyone's feedback
                log.exception("MIDI feedback failed; going on")
                timeout = 0.1

    def _round(self) -> float | None:
        """Draw what was touched and what must be redrawn; send what tokens allow.

        Return the seconds until a waiting message gets its token (None: nothing waits).
        """
        engine = self._engine
        with self._lock:
            touched, engine.touched = engine.touched, {}
            redraw, self._redraw = self._redraw, set()
            bindings = self.bindings
        for surface in redraw:
            self._draw_all(surface)
        for key in touched:
            for binding in bindings.get(key, ()):
                self._draw(binding)
        return self._send()

    def _draw(self, binding: Binding) -> None:
        surface = binding.surface
        value = self._engine.values.get(binding.value_key)
        position = None if value is None else binding.curve.unmap(value)
        pending = False
        if binding.takeover_key is not None and position is not None \
                and not binding.feedback.sets_control:
            control = self._engine.control_position(binding.takeover_key)
            pending = control is not None and abs(control - position) > TOLERANCE
        self._want(surface, binding.feedback, encode(binding.feedback, position, pending))

    def _draw_all(self, surface: Surface) -> None:
        """Everything the device can show: mapped controls, page lights, the rest off."""
        if surface.fresh:
            surface.fresh = False
            surface.shown.clear()
            for message in surface.profile.init:
                surface.outbox[("init", len(surface.outbox), 0)] = message
        for control in surface.profile.controls.values():
            feedback = control.feedback
            if feedback is None:
                continue
            binding = surface.controls.get(control.name)
            if binding is not None:
                self._draw(binding)
                continue
            page = next((p for p, f in surface.pages.items() if f is feedback), None)
            on = page is not None and page == surface.page
            self._want(surface, feedback, encode(feedback, 1.0 if on else None))

    def _want(self, surface: Surface, feedback: Feedback, data: bytes) -> None:
        where = address(feedback)
        if surface.shown.get(where) == data:
            log.debug("feedback to %s unchanged: %s", surface.output.name, data.hex(" "))
            self.counts["unchanged"] += 1
            surface.outbox.pop(where, None)  # a newer value went back to what it shows
            return
        if where in surface.outbox:
            self.counts["replaced"] += 1
        surface.outbox[where] = data

    def _send(self) -> float | None:
        now = self.clock()
        waits: float | None = None
        echoes: list[tuple[tuple[str, int, int], tuple[int, float]]] = []
        for surface in self.surfaces:
            if not surface.outbox or surface.broken:
                continue
            rate = surface.profile.rate
            surface.tokens = min(rate * BURST, surface.tokens + (now - surface.refilled) * rate)
            surface.refilled = now
            while surface.outbox and surface.tokens >= 1.0 - 1e-9:  # a refill's rounding
                where = next(iter(surface.outbox))
                data = surface.outbox.pop(where)
                try:
                    surface.output.send(list(data))
                except Exception as err:  # unplugged: the router's rescan retires it
                    self.counts["errors"] += 1
                    surface.broken = True
                    log.warning("MIDI feedback to %r failed: %s", surface.output.name, err)
                    break
                self.last_send_ns = time.monotonic_ns()
                log.debug("feedback to %s: %s", surface.output.name, data.hex(" "))
                self.counts["sent"] += 1
                surface.tokens -= 1.0
                if where[0] != "init":
                    surface.shown[where] = data
                if len(data) == 3:
                    echoes.append(((surface.input, data[0], data[1]),
                                   (data[2], now + ECHO_WINDOW)))
            if surface.outbox and not surface.broken:
                self.counts["waited"] += 1
                wait = (1.0 - surface.tokens) / rate
                waits = wait if waits is None else min(waits, wait)
        if echoes:
            with self._lock:
                self._engine.echoes.update(echoes)
        return waits
