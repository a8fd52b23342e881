"""The router's input thread: MIDI from the inputs' queues to the engine and out as OSC.

The hot path. On JACK, each input is scorch's own client (``scorch_jack``): its
process callback, in C, queues the cycle's messages and wakes this thread through
an eventfd, so the thread sleeps until MIDI comes and takes it at once. On other
backends (or without a C compiler) rtmidi queues each input's messages in C and
wakes nothing (no backend thread ever runs Python); this thread then takes them
every :data:`POLL_ACTIVE` seconds while MIDI flows (and while a partner's answer
plays, so the key press that cuts it is seen at once: :attr:`Capture.awaited`),
every :data:`POLL_IDLE` after a quiet second and :data:`POLL_QUIET` after quiet
:data:`QUIET_AFTER` seconds (see below). Either way it feeds the
clock-in port's clock to the follower, recovers what a broken SysEx swallowed,
thins out controller values a later one replaces (:mod:`midi.batch`), and runs the
rest through the engine and out of the sender, all under the router's one lock. The
router (its actor thread) replaces :attr:`MidiInput.ports` whole when ports come and go.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from time import monotonic

from actors.router.sender import OscSender
from midi import CLOCK_MESSAGES, ClockFollower, ClockReading, Engine, Message, Voice, recover
from midi.batch import coalesce
from midi.io import InputPort, Wake
from scorch.notes import ROOM, Capture, NoteRing
from scorch.primitives.system import tighten_current_thread

log = logging.getLogger(__name__)

#: Seconds between two looks at the inputs' queues while MIDI comes in, after
#: IDLE_AFTER seconds without any (a first note then waits a millisecond on average),
#: and after QUIET_AFTER seconds (2 ms on average, at most POLL_QUIET).
#:
#: Only for rtmidi's queues (not JACK's, see the module's docstring): they wake
#: nothing, and python-rtmidi's callbacks run Python in the backend's thread. Each
#: look costs a wake-up of this thread: 4,000/s while MIDI flows, 500/s idle,
#: 250/s quiet.
POLL_ACTIVE = 0.00025
POLL_IDLE = 0.002
POLL_QUIET = 0.004
IDLE_AFTER = 1.0
QUIET_AFTER = 10.0
#: Nanoseconds between two logs of a failing MIDI input batch.
ERROR_LOG_EVERY_NS = 5_000_000_000
#: Seconds the router waits for the input thread to stop.
STOP_WAIT = 2.0


class MidiInput:
    """The input thread, and what it does with one port's batch (also asked by the router)."""

    def __init__(self, lock: threading.Lock, engine: Engine, sender: OscSender,
                 counts: dict[str, int],
                 on_clock: Callable[[ClockReading], None] | None = None,
                 touched: Callable[[], None] | None = None) -> None:
        self._lock = lock
        self._engine = engine
        self._sender = sender
        self._counts = counts
        self._on_clock = on_clock
        """Told what the clock-in port's clock says (from this thread: a tell)."""
        self._touched = touched
        """Called after a batch that moved controls: the feedback thread draws them."""
        self.follower = ClockFollower()
        self.ports: tuple[InputPort, ...] = ()
        """The open inputs (replaced whole by the router's actor thread)."""
        self.capture: Capture | None = None
        """Where each input's notes are kept (a ring per port), or None: not kept."""
        self._rooms: dict[str, NoteRing] = {}
        """The rooms' rings of :attr:`capture` by room, for :meth:`played`."""
        self._rooms_of: Capture | None = None
        self._played: list[tuple[Voice, int]] | None = None
        """While :meth:`_handle` runs: what the engine played, kept once the datagrams are out."""
        self.wake = Wake() if hasattr(os, "eventfd") else None
        """Written by scorch's JACK inputs when a cycle brought MIDI (and by :meth:`stop`)."""
        self.event_driven = False
        """The inputs wake :attr:`wake` (set by the router before :meth:`start`): no poll."""
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._error_logged = 0

    def start(self) -> None:
        """Start the input thread."""
        self._thread = threading.Thread(target=self._run, name="midi-router-input",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> bool:
        """Stop the input thread; False if it did not stop (its ports must not be deleted)."""
        self._halt.set()
        if self.wake is not None:
            self.wake.set()
        if self._thread is None:
            return True
        self._thread.join(timeout=STOP_WAIT)
        return not self._thread.is_alive()

    def close(self) -> None:
        """Release the eventfd (once stopped, and its inputs closed)."""
        wake, self.wake = self.wake, None
        if wake is not None:
            wake.close()

    def take(self, port: InputPort, start: int) -> bool:
        """Take what ``port`` queued and act on it (router lock held); True if anything."""
        batch = port.take()
        if not batch:
            return False
        if port.timing:
            batch = self._clock_in(batch, start)
        if batch:
            self._handle(port.name, batch, start)
        return True

    def inject(self, name: str, data: list[int], start: int) -> str:
        """Act on one message as if it came in on input ``name`` (router lock held): what
        ``send`` plays into scorch's own input, captured and routed as a keyboard's.
        Returns the input's name."""
        self._handle(name, [(data, 0.0)], start)
        return name

    def _run(self) -> None:
        """Take what the inputs queued and act on it, until stopped (input thread)."""
        tighten_current_thread()
        if self.event_driven and self.wake is not None:
            self._wait(self.wake)
        else:
            self._poll()

    def _wait(self, wake: Wake) -> None:
        """Sleep until an input (or :meth:`stop`) writes the eventfd; take; again."""
        clock, lock, wait = time.monotonic_ns, self._lock, wake.wait
        while True:
            wait()
            if self._halt.is_set():
                return
            now = clock()
            try:
                with lock:
                    for port in self.ports:
                        self.take(port, now)
            except Exception:  # never the end of MIDI input: log, and take the next batch
                self._failed(now)

    def _failed(self, now: int) -> None:
        self._counts["input_errors"] += 1
        if now - self._error_logged > ERROR_LOG_EVERY_NS:
            self._error_logged = now
            log.exception("MIDI input failed (%d so far); going on",
                          self._counts["input_errors"])

    def _poll(self) -> None:
        """Look at rtmidi's queues, more often while MIDI flows (input thread)."""
        clock, lock, sleep = time.monotonic_ns, self._lock, time.sleep
        last = clock()
        idle_after, quiet_after = int(IDLE_AFTER * 1e9), int(QUIET_AFTER * 1e9)
        while not self._halt.is_set():
            now = clock()
            try:
                with lock:
                    for port in self.ports:
                        if self.take(port, now):
                            last = now
            except Exception:  # never the end of MIDI input: log, and take the next batch
                self._failed(now)
            capture = self.capture
            if capture is not None and capture.awaited:  # a key press would cut an answer
                last = now
            silent = now - last
            sleep(POLL_ACTIVE if silent < idle_after else
                  POLL_IDLE if silent < quiet_after else POLL_QUIET)

    def played(self, voice: Voice, velocity: int) -> None:
        """Keep a voice the engine started (its velocity) or ended (0) as its room's note.

        The engine's hook (:attr:`Engine.played`), called under the router's lock: from
        this thread, or the actor's for a release on a timer, a panic, a port gone.
        """
        if self.capture is None:
            return
        if self._played is not None:  # this thread's batch: kept after its datagrams went out
            self._played.append((voice, velocity))
            return
        self._keep(voice, velocity, monotonic())

    def _keep(self, voice: Voice, velocity: int, t: float) -> None:
        """Keep one voice started or ended at ``t`` in its room's ring."""
        capture = self.capture
        if capture is None:
            return
        ring = self._rooms.get(voice.room) if capture is self._rooms_of else None
        if ring is None:  # first note in this room (or a new capture): one lookup kept
            if capture is not self._rooms_of:
                self._rooms.clear()
                self._rooms_of = capture
            ring = self._rooms[voice.room] = capture.ring(ROOM + voice.room)
        pitch = int(voice.pitch + 0.5)
        if 0 <= pitch < 128:
            ring.message(t, (0x90 if velocity else 0x80) | voice.channel[1], pitch, velocity)

    def _clock_in(self, batch: list[Message], start: int) -> list[Message]:
        """Feed the clock-in port's clock messages to the follower; return the others.

        A message's time is the poll's minus rtmidi's delta times of those after it.
        """
        times = [0.0] * len(batch)
        at = start * 1e-9
        for i in range(len(batch) - 1, -1, -1):
            times[i] = at
            at -= batch[i][1]
        rest: list[Message] = []
        for (data, delta), when in zip(batch, times, strict=True):
            if data and data[0] in CLOCK_MESSAGES:
                reading = self.follower.feed(data, when)
                if reading is not None and self._on_clock is not None:
                    self._on_clock(reading)
            else:
                rest.append((data, delta))
        return rest

    def _handle(self, name: str, batch: list[Message], start: int) -> None:
        """Run a batch of one port's messages through the engine and send (router lock held)."""
        engine, counts = self._engine, self._counts
        counts["received"] += len(batch)
        if len(batch) > 1:  # one message (the usual case between floods) needs neither
            batch = recover(batch)
            if engine.learn is None:
                thinned = coalesce(batch, engine.tables.get(name))
                counts["thinned"] += len(batch) - len(thinned)
                batch = thinned
        elif batch[0][0][:1] == [0xF0]:
            batch = recover(batch)
        handle, apply, now = engine.handle, self._sender.apply, start * 1e-9
        # The notes are kept once the batch's datagrams are out: the capture costs the
        # input thread time, but no message waits for it.
        capture = self.capture
        heard = capture.listeners.get(name) if capture is not None else None
        notes: list[list[int]] = []
        played: list[tuple[Voice, int]] | None = [] if capture is not None else None
        self._played = played
        sent = False
        try:
            for data, _delta in batch:
                if played is not None and len(data) == 3 and data[0] & 0xE0 == 0x80:
                    notes.append(data)
                    if heard is not None:  # a partner's answer: it notes the time, at most wakes
                        heard(now, data[0], data[1], data[2])
                actions = handle(name, data)
                if actions:
                    apply(actions, now)
                    sent = True
        finally:
            self._played = None
        counts["handled"] += len(batch)
        if sent:
            self._sender.time(start)
        if engine.touched and self._touched is not None:
            self._touched()
        if capture is not None and (notes or played):
            message = capture.ring(name).message
            for data in notes:
                message(now, data[0], data[1], data[2])
            for voice, velocity in played or ():
                self._keep(voice, velocity, now)
