"""The MIDI router's hot path: engine actions out of a UDP socket as OSC, at once.

:meth:`OscSender.apply` runs in the MIDI input thread, under the router's engine
lock: each action becomes one datagram to scsynth, with no thread hop. Values a
flood would repeat are held back by the coalescer and sent by the sender thread
when due; that thread also reports the values MIDI changed, in batches (one per
named node), so the input thread never waits on anyone.

Voices go through the :class:`~scorch.primitives.scsynth.voice_sender.VoiceSender`
(its socket carries the values too): a voice's ``/s_new`` is confirmed by scsynth,
and its release waits for that.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from midi import (
    Action,
    Address,
    BendVoice,
    Coalescer,
    PageCue,
    ReleaseVoice,
    SceneCue,
    SetParam,
    StartVoice,
    VoiceParam,
)
from scorch.primitives.scsynth import VoiceSender, commands

log = logging.getLogger(__name__)

#: Called with (room, node, {param: value}) for values MIDI changed, from the sender thread.
Report = Callable[[str, str, dict[str, float]], None]
#: Called with (kind, scene, room, value) for scene cues, on the callback thread: no waiting.
Cue = Callable[[str, str, str, float], None]
#: Called with (input port, page) for a page button pressed, on the callback thread.
Page = Callable[[str, str], None]

TIMINGS = 4096
REPORT_EVERY = 0.02

_FLOAT_INTO = struct.Struct(">f").pack_into


class OscSender:
    """Send the engine's actions to scsynth; hold back and flush what a flood repeats."""

    def __init__(self, lock: threading.Lock, coalesce_interval: float, report: Report,
                 cue: Cue = lambda kind, scene, room, value: None,
                 page: Page = lambda port, page: None) -> None:
        self.lock = lock
        """The router's engine lock: held by :meth:`apply`'s callers."""
        self._report = report
        self._cue = cue
        self._page = page
        self._coalescer: Coalescer[tuple[Address, bytearray]] = Coalescer(coalesce_interval)
        self._dirty: dict[tuple[str, str, str], float] = {}
        self._packets: dict[tuple[Address, int, str], tuple[Address, bytearray]] = {}
        self.voices = VoiceSender("midi-router", lock, send_buffer=1 << 20)
        """The socket every datagram leaves by, and the voices' held releases."""
        self.releases = self.voices.releases
        self._halt = threading.Event()
        self._wake = threading.Event()
        self._asleep = False
        """The sender thread waits without a timeout: nothing held back or to report
        (set and cleared under the engine lock; a value to report then wakes it)."""
        self._thread: threading.Thread | None = None
        self.timings = [0] * TIMINGS
        """Nanoseconds from callback to datagram sent, the last :data:`TIMINGS` messages."""
        self.timed = 0

    @property
    def sent(self) -> int:
        """Datagrams sent."""
        return self.voices.sent

    @property
    def send_errors(self) -> int:
        """Datagrams the network refused (a host unreachable): counted, logged, never fatal."""
        return self.voices.send_errors

    @property
    def coalesced(self) -> int:
        """Values the coalescer replaced with a newer one before sending."""
        return self._coalescer.coalesced

    def stats(self) -> dict[str, Any]:
        """Datagrams sent and refused, releases held, values coalesced, the hot path's time
        from callback to datagram sent (microseconds)."""
        count = min(self.timed, len(self.timings))
        timings = sorted(self.timings[:count])

        def pick(q: float) -> float | None:
            return timings[min(count - 1, int(q * count))] / 1000.0 if count else None

        return {"sent": self.sent, "send_errors": self.send_errors,
                "releases_held": self.releases.held,
                "releases_unconfirmed": self.releases.unconfirmed,
                "coalesced": self.coalesced,
                "hot_path_us": {"p50": pick(0.5), "p99": pick(0.99), "max": pick(1.0)}}

    def start(self) -> None:
        """Start the sender thread and the voices' confirmation reader."""
        self.voices.start()
        self._thread = threading.Thread(target=self._send_loop, name="midi-router-sender",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Flush what is held back (held releases too), stop the threads, close the socket."""
        self._halt.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self.voices.close()

    # -- hot path (MIDI callback threads, engine lock held) ---------------------------

    def apply(self, actions: list[Action], now: float) -> None:
        """Send ``actions``."""
        voices = self.voices
        send = voices.send
        for action in actions:
            if type(action) is SetParam:
                room, node, param, value, address, node_id = action
                self._dirty[(room, node, param)] = value
                if self._asleep:
                    self._asleep = False
                    self._wake.set()
                if address is None or node_id is None:
                    continue
                self._set(address, node_id, param, value, now, send)
            elif type(action) is BendVoice:
                self._set(action.address, action.node_id, "freq", action.freq, now, send)
            elif type(action) is StartVoice:
                voices.start_voice(commands.s_new(
                    action.synthdef, action.node_id, commands.AddAction.HEAD,
                    commands.DEFAULT_GROUP, action.args), action.node_id, action.address, now)
            elif type(action) is ReleaseVoice:
                voices.release(action.node_id, action.address)
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
        elif not self._wake.is_set():  # set() costs a lock; is_set() does not
            self._wake.set()

    def time(self, started_ns: int) -> None:
        """Record the hot path's time for one message (engine lock held)."""
        self.timings[self.timed % TIMINGS] = time.monotonic_ns() - started_ns
        self.timed += 1

    # -- sender thread ---------------------------------------------------------------

    def _send_loop(self) -> None:
        """Flush held-back values when due; report the values MIDI changed."""
        next_report = time.monotonic_ns() * 1e-9 + REPORT_EVERY
        while not self._halt.is_set():
            self._wake.clear()  # before looking, so a value held back from now on wakes us
            now = time.monotonic_ns() * 1e-9  # the callback's clock
            report = now >= next_report
            try:
                next_due = self._flush(now, report)
            except Exception:  # a report that failed: held-back values must still go out
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
            send = self.voices.send
            for address, packet in ready:
                send(packet, address)
            if report and self._dirty:
                dirty, self._dirty = self._dirty, {}
            # Idle: the next value held back (hot path, this lock) wakes us.
            self._asleep = report and next_due is None and not self._dirty
        if dirty:  # outside the lock: the callback never waits on the orchestra
            nodes: dict[tuple[str, str], dict[str, float]] = {}
            for (room, node, param), value in dirty.items():
                nodes.setdefault((room, node), {})[param] = value
            for (room, node), params in nodes.items():
                try:
                    self._report(room, node, params)
                except Exception:
                    log.exception("reporting %s.%s failed", room, node)
        return next_due
