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

from midi import TOLERANCE, Curve, Engine
from midi.controllers import WINDOW, Feedback, Profile, address, encode
from midi.io import OutputPort

log = logging.getLogger(__name__)

#: Seconds of the profile's rate a device may be sent at once (a redraw's burst).
BURST = 0.05
#: Seconds between two rounds of the thread while MIDI keeps moving controls (their lights
#: redrawn at 100 Hz at most): a flood wakes it once per batch, and each round takes the
#: GIL from the input thread (2 ms between rounds tripled the input thread's p99 under a
#: flood, BENCHMARKS.md); what is touched meanwhile is drawn once, at the next round. A
#: change the router is told of (MCP, a scene, undo...) cuts the wait short.
ROUND_GAP = 0.01
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
    address: tuple[str, int, int]
    """What one message of its feedback replaces (:func:`midi.controllers.feedback.address`)."""


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
    outbox: dict[tuple[str, int, int], bytes | Binding] = field(default_factory=dict)
    """What waits for a token: fixed bytes, or a binding drawn when its token comes."""
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
        self._urgent = threading.Event()
        """A change the router was told of: drawn now, not after :data:`ROUND_GAP`."""
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
        self._urgent.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT)

    def wake(self) -> None:
        """MIDI moved controls (the input thread): draw them at the next round."""
        if self.surfaces and not self._wake.is_set():
            self._wake.set()

    def told(self) -> None:
        """The router was told of a change (its actor): draw it now."""
        if self.surfaces:
            self._urgent.set()
            self._wake.set()

    def install(self, surfaces: tuple[Surface, ...],
                bindings: Mapping[ValueKey, tuple[Binding, ...]],
                redraw: set[Surface]) -> None:
        """Swap in the devices and what they show (router's actor thread); redraw some."""
        with self._lock:
            self.surfaces, self.bindings = surfaces, bindings
            self._redraw |= redraw
            if not surfaces:
                self._engine.touched.clear()  # no one to draw it for
        self._urgent.set()
        self._wake.set()

    # -- the thread ------------------------------------------------------------------

    def _run(self) -> None:
        timeout: float | None = None
        while not self._halt.is_set():
            self._wake.wait(timeout)
            self._wake.clear()
            self._urgent.clear()
            if self._halt.is_set():
                return
            try:
                timeout = self._round()
            except Exception:  # a device's failure must not end everyone's feedback
                log.exception("MIDI feedback failed; going on")
                timeout = 0.1
            self._urgent.wait(ROUND_GAP)

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
                self._later(binding)
        return self._send()

    def _later(self, binding: Binding) -> None:
        """Draw ``binding`` when its device has a token for it (a flood draws it once)."""
        outbox, where = binding.surface.outbox, binding.address
        if where in outbox:
            self.counts["replaced"] += 1
            del outbox[where]  # to the end: the newest change goes last
        outbox[where] = binding

    def _bytes(self, binding: Binding) -> bytes:
        """What shows ``binding``'s param now (blinking while its control waits to pick up)."""
        value = self._engine.values.get(binding.value_key)
        position = None if value is None else binding.curve.unmap(value)
        pending = False
        if binding.takeover_key is not None and position is not None \
                and not binding.feedback.sets_control:
            control = self._engine.control_position(binding.takeover_key)
            pending = control is not None and abs(control - position) > TOLERANCE
        return encode(binding.feedback, position, pending)

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
                self._later(binding)
                continue
            page = next((p for p, f in surface.pages.items() if f is feedback), None)
            on = page is not None and page == surface.page
            self._want(surface, feedback, encode(feedback, 1.0 if on else None))

    def _want(self, surface: Surface, feedback: Feedback, data: bytes) -> None:
        where = address(feedback)
        if surface.shown.get(where) == data:
            self.counts["unchanged"] += 1
            surface.outbox.pop(where, None)  # a newer value went back to what it shows
            return
        if where in surface.outbox:
            self.counts["replaced"] += 1
        surface.outbox[where] = data

    def _send(self) -> float | None:
        now = self.clock()
        waits: float | None = None
        echoes: list[tuple[tuple[str, int, int], int]] = []
        for surface in self.surfaces:
            if not surface.outbox or surface.broken:
                continue
            rate = surface.profile.rate
            surface.tokens = min(rate * BURST, surface.tokens + (now - surface.refilled) * rate)
            surface.refilled = now
            while surface.outbox and surface.tokens >= 1.0 - 1e-9:  # a refill's rounding
                where = next(iter(surface.outbox))
                item = surface.outbox.pop(where)
                data = item if isinstance(item, bytes) else self._bytes(item)
                if surface.shown.get(where) == data:
                    self.counts["unchanged"] += 1  # back to what it shows: no token spent
                    continue
                try:
                    surface.output.send(list(data))
                except Exception as err:  # unplugged: the router's rescan retires it
                    self.counts["errors"] += 1
                    surface.broken = True
                    log.warning("MIDI feedback to %r failed: %s", surface.output.name, err)
                    break
                self.last_send_ns = time.monotonic_ns()
                self.counts["sent"] += 1
                surface.tokens -= 1.0
                if where[0] != "init":
                    surface.shown[where] = data
                if len(data) == 3:
                    echoes.append(((surface.input, data[0], data[1]), data[2]))
            if surface.outbox and not surface.broken:
                self.counts["waited"] += 1
                wait = (1.0 - surface.tokens) / rate
                waits = wait if waits is None else min(waits, wait)
        if echoes:
            with self._lock:
                expect = self._engine.echoes.expect
                for key, value in echoes:
                    expect(key, value, now + WINDOW)
        return waits
