"""The MIDI router's hot path: engine actions out of a UDP socket as OSC, at once.

:meth:`OscSender.apply` runs in the MIDI backend's callback threads, under the
router's engine lock: each action becomes one datagram to scsynth, with no
thread hop. Values a flood would repeat are held back by the coalescer and sent
by the sender thread when due; that thread also reports applied values to the
desired state in batches, so a callback never waits on the orchestra.

A voice's ``/s_new`` goes out bundled with ``/sync <node id>``, and its release
waits for scsynth's ``/synced`` (:mod:`scorch.primitives.scsynth.held`: a synth
whose gate closes in the audio period of its start never ends); a thread blocked
on the socket reads the answers.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from midi.actions import (
    Action,
    Address,
    BendVoice,
    PageCue,
    ReleaseVoice,
    SceneCue,
    SetParam,
    StartVoice,
    VoiceParam,
)
from midi.coalesce import Coalescer
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.held import HeldReleases

log = logging.getLogger(__name__)

#: Called with (instance, node, param, value) for values MIDI changed, from the sender thread.
Report = Callable[[str, str, str, float], None]
#: Called with (kind, scene, instance, value) for scene cues, on the callback thread: no waiting.
Cue = Callable[[str, str, str, float], None]
#: Called with (input port, page) for a page button pressed, on the callback thread.
Page = Callable[[str, str], None]

TIMINGS = 4096
REPORT_EVERY = 0.02
#: Seconds between two warnings about datagrams one address refused.
ERROR_LOG_EVERY = 5.0

_FLOAT_INTO = struct.Struct(">f").pack_into
_INT32 = struct.Struct(">i").pack
#: ``/n_set <node> gate 0.0`` around the node id, for releases.
_RELEASE = commands.release(0)
_RELEASE_HEAD, _RELEASE_TAIL = _RELEASE[:16], _RELEASE[20:]


def _release(node_id: int) -> bytes:
    return _RELEASE_HEAD + _INT32(node_id) + _RELEASE_TAIL


class OscSender:
    """Send the engine's actions to scsynth; hold back and flush what a flood repeats."""

    def __init__(self, lock: threading.Lock, coalesce_interval: float, report: Report,
                 cue: Cue = lambda kind, scene, instance, value: None,
                 page: Page = lambda port, page: None) -> None:
        self.lock = lock
        """The router's engine lock: held by :meth:`apply`'s callers."""
        self._report = report
        self._cue = cue
        self._page = page
        self._coalescer: Coalescer[tuple[Address, bytearray]] = Coalescer(coalesce_interval)
        self._dirty: dict[tuple[str, str, str], float] = {}
        self._packets: dict[tuple[Address, int, str], tuple[Address, bytearray]] = {}
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        self._socket.bind(("", 0))  # scsynth's /synced comes back here
        self.releases = HeldReleases()
        """Voices' starts not yet confirmed, and the releases waiting for them."""
        self._halt = threading.Event()
        self._wake = threading.Event()
        self._asleep = False
        """The sender thread waits without a timeout: nothing held, started or to report
        (set and cleared under the engine lock; a value to report then wakes it)."""
        self._thread: threading.Thread | None = None
        self._receiver: threading.Thread | None = None
        self.timings = [0] * TIMINGS
        """Nanoseconds from callback to datagram sent, the last :data:`TIMINGS` messages."""
        self.timed = 0
        self.sent = 0
        self.send_errors = 0
        """Datagrams the network refused (a host unreachable): counted, logged, never fatal."""
        self._error_logged: dict[Address, float] = {}

    @property
    def coalesced(self) -> int:
        """Values the coalescer replaced with a newer one before sending."""
        return self._coalescer.coalesced

    def start(self) -> None:
        """Start the sender thread and the thread reading scsynth's confirmations."""
        self._thread = threading.Thread(target=self._send_loop, name="midi-router-sender",
                                        daemon=True)
        self._thread.start()
        self._receiver = threading.Thread(target=self._receive_loop,
                                          name="midi-router-confirm", daemon=True)
        self._receiver.start()

    def stop(self) -> None:
        """Flush what is held back (held releases too), stop the threads, close the socket."""
        self._halt.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._receiver is not None:
            with contextlib.suppress(OSError):  # wakes the receiver's blocking read
                self._socket.sendto(b"", ("127.0.0.1", self._socket.getsockname()[1]))
            self._receiver.join(timeout=2.0)
        self._socket.close()

    # -- hot path (MIDI callback threads, engine lock held) ---------------------------

    def apply(self, actions: list[Action], now: float) -> None:
        """Send ``actions``."""
        send = self._send
        for action in actions:
            if type(action) is SetParam:
                instance, node, param, value, address, node_id = action
                self._dirty[(instance, node, param)] = value
                if self._asleep:
                    self._asleep = False
                    self._wake.set()
                if address is None or node_id is None:
                    continue
                self._set(address, node_id, param, value, now, send)
            elif type(action) is BendVoice:
                self._set(action.address, action.node_id, "freq", action.freq, now, send)
            elif type(action) is StartVoice:
                node_id = action.node_id
                send(commands.confirmed(commands.s_new(
                    action.synthdef, node_id, commands.AddAction.HEAD, commands.DEFAULT_GROUP,
                    action.args), node_id), action.address)
                self.releases.started(node_id, now)
                self.sent += 1
                if self._asleep:  # an unconfirmed start is forgotten by a flush
                    self._asleep = False
                    self._wake.set()
            elif type(action) is ReleaseVoice:
                if self.releases.hold(action.node_id, action.address):  # start unconfirmed
                    if not self._wake.is_set():
                        self._wake.set()
                    continue
                send(_release(action.node_id), action.address)
                self.sent += 1
            elif type(action) is VoiceParam:
                self._set(action.address, action.node_id, action.param, action.value, now, send)
            elif type(action) is SceneCue:
                try:
                    self._cue(*action)
                except Exception:
                    log.exception("scene cue %s failed", action)
            elif type(action) is PageCue:
                try:
                    self._page(*action)
                except Exception:  # the router stopping: the press is lost, not the thread
                    log.exception("page %s failed", action)

    def _send(self, packet: bytes | bytearray, address: Address) -> None:
        """One datagram. A network that refuses it (a host unreachable, a full buffer) loses
        that one message, not the thread: the next note, and the other rooms, go on."""
        try:
            self._socket.sendto(packet, address)
        except OSError as err:
            self.send_errors += 1
            now = time.monotonic()
            if now - self._error_logged.get(address, -ERROR_LOG_EVERY) >= ERROR_LOG_EVERY:
                self._error_logged[address] = now
                log.warning("MIDI to %s:%d: %s (%d datagrams lost so far)", address[0],
                            address[1], err, self.send_errors)

    def _set(self, address: Address, node_id: int, param: str, value: float, now: float,
             send: Any) -> None:
        """Send ``/n_set node_id param value`` now, or leave it to the coalescer."""
        key = (address, node_id, param)
        item = self._packets.get(key)
        if item is None:
            if len(self._packets) > 4096:
                self._packets.clear()
            # One buffer per key, the value patched in place: the coalescer keeps at most
            # this key's newest value, which is exactly what the buffer holds.
            item = self._packets[key] = (address, bytearray(commands.n_set(node_id, {param: 0.0})))
        _FLOAT_INTO(item[1], -4, value)
        if self._coalescer.offer(key, item, now):
            send(item[1], address)
            self.sent += 1
        elif not self._wake.is_set():  # set() costs a lock; is_set() does not
            self._wake.set()

    def time(self, started_ns: int) -> None:
        """Record the hot path's time for one message (engine lock held)."""
        self.timings[self.timed % TIMINGS] = time.monotonic_ns() - started_ns
        self.timed += 1

    # -- confirmation thread -----------------------------------------------------------

    def _receive_loop(self) -> None:
        """Read scsynth's ``/synced <node>``: send the release its voice's start held back.

        Blocks on the socket: it wakes only for a datagram (no timer while idle).
        """
        recv = self._socket.recv
        while not self._halt.is_set():
            try:
                node_id = commands.synced_id(recv(512))
            except OSError:
                return
            if node_id is None:
                continue  # /fail of a node already gone, or stop's wake-up
            with self.lock:
                address = self.releases.confirmed(node_id)
                if address is not None:
                    self._send(_release(node_id), address)
                    self.sent += 1

    # -- sender thread ---------------------------------------------------------------

    def _send_loop(self) -> None:
        """Flush held-back values when due; report applied values to the desired state."""
        next_report = time.monotonic_ns() * 1e-9 + REPORT_EVERY
        while not self._halt.is_set():
            self._wake.clear()  # before looking, so a value held back from now on wakes us
            now = time.monotonic_ns() * 1e-9  # the callback's clock
            report = now >= next_report
            try:
                next_due = self._flush(now, report)
            except Exception:  # a report that failed: held-back releases must still go out
                log.exception("MIDI sender: flush failed; going on")
                next_due = now + REPORT_EVERY
            if report:
                next_report = now + REPORT_EVERY
            if self._asleep:  # nothing to flush or report until the hot path wakes us
                self._wake.wait()
                next_report = time.monotonic_ns() * 1e-9  # report what woke it at once
                continue
            wait = next_report - now if next_due is None else min(next_due, next_report) - now
            self._wake.wait(max(wait, 0.0))
        self._flush(float("inf"), report=True)

    def _flush(self, now: float, report: bool) -> float | None:
        """Send the values held back until ``now``; with ``report``, report applied values.

        Return when the next held-back value is due (None if none is).
        """
        dirty = None
        with self.lock:
            ready, next_due = self._coalescer.due(now)
            for address, packet in ready:
                self._send(packet, address)
            self.sent += len(ready)
            releases = self.releases
            for node_id, held_for in releases.due(now):
                self._send(_release(node_id), held_for)
                self.sent += 1
            deadline = releases.next_due()
            if deadline is not None and (next_due is None or deadline < next_due):
                next_due = deadline
            if report and self._dirty:
                dirty, self._dirty = self._dirty, {}
            # Idle: the next value, start or held-back release (hot path, this lock) wakes us.
            self._asleep = (report and next_due is None and not releases.waiting()
                            and not self._dirty)
        if dirty:  # outside the lock: the callback never waits on the orchestra
            for (instance, node, param), value in dirty.items():
                try:
                    self._report(instance, node, param, value)
                except Exception:
                    log.exception("reporting %s.%s.%s failed", instance, node, param)
        return next_due
