"""Voices played on scsynths from outside the rooms' actors: one UDP socket, starts confirmed.

The MIDI router's keyboard voices (``actors/router/sender.py``) and the partner's
answers (``actors/router/answer.py``) start synths on a room's scsynth with no actor
in between. Each start goes out bundled with ``/sync <node id>``
(:func:`~scorch.primitives.scsynth.commands.confirmed`), and its release waits for
scsynth's ``/synced`` (:mod:`scorch.primitives.scsynth.held`: a synth whose gate
closes in the audio period of its start never ends). One thread reads the answers:
it sends each held release once its start is confirmed, and those whose
confirmation is overdue. It blocks on the socket without a timeout while no release
is held, so an idle sender never wakes; a release held then nudges it.

A datagram the network refuses (another host's room unreachable, a full buffer)
loses that one message, counted and logged now and then, never the thread.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time

from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.held import CONFIRM_TIMEOUT, Address, HeldReleases

log = logging.getLogger(__name__)

#: Seconds between two warnings about datagrams one address refused.
ERROR_LOG_EVERY = 5.0
#: Seconds :meth:`VoiceSender.close` waits for its reader.
STOP_WAIT = 2.0

_INT32 = struct.Struct(">i").pack
#: ``/n_set <node> gate 0.0`` around the node id, for releases.
_RELEASE = commands.release(0)
_RELEASE_HEAD, _RELEASE_TAIL = _RELEASE[:16], _RELEASE[20:]


def release_packet(node_id: int) -> bytes:
    """``/n_set node_id gate 0`` (the prebuilt message with the id patched in)."""
    return _RELEASE_HEAD + _INT32(node_id) + _RELEASE_TAIL


class VoiceSender:
    """Datagrams to scsynths; voices' starts confirmed and their releases held till then.

    ``lock`` guards the held releases: the caller holds it around :meth:`start_voice`,
    :meth:`release` and :meth:`drop` (the MIDI router's engine lock, so its hot path
    takes no second lock), and the reader thread takes it for each answer.
    """

    def __init__(self, name: str, lock: threading.Lock | None = None,
                 timeout: float = CONFIRM_TIMEOUT, send_buffer: int | None = None) -> None:
        self.name = name
        self.lock = lock if lock is not None else threading.Lock()
        self.releases = HeldReleases(timeout)
        """Voices' starts not yet confirmed, and the releases waiting for them."""
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if send_buffer is not None:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        self._socket.bind(("", 0))  # scsynth's /synced comes back here
        self._own = ("127.0.0.1", self._socket.getsockname()[1])
        self._untimed = True
        """The reader waits with no timeout: a release held now must nudge it (under lock)."""
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read, name=f"{name}-confirm", daemon=True)
        self.sent = 0
        """Datagrams sent."""
        self.send_errors = 0
        """Datagrams the network refused: counted, logged, never fatal."""
        self._error_logged: dict[Address, float] = {}

    def start(self) -> VoiceSender:
        """Start reading scsynth's confirmations."""
        self._reader.start()
        return self

    def send(self, packet: bytes | bytearray, address: Address) -> None:
        """One datagram (any thread). A network that refuses it loses that one message."""
        try:
            self._socket.sendto(packet, address)
        except OSError as err:
            self.send_errors += 1
            now = time.monotonic()
            if now - self._error_logged.get(address, -ERROR_LOG_EVERY) >= ERROR_LOG_EVERY:
                self._error_logged[address] = now
                log.warning("%s to %s:%d: %s (%d datagrams lost so far)", self.name,
                            address[0], address[1], err, self.send_errors)
        else:
            self.sent += 1

    # --- under the lock ---------------------------------------------------------------

    def start_voice(self, start: bytes, node_id: int, address: Address, now: float) -> None:
        """Send ``start`` (an ``/s_new`` of ``node_id``) with its confirmation asked."""
        self.send(commands.confirmed(start, node_id), address)
        self.releases.started(node_id, now)

    def release(self, node_id: int, address: Address) -> bool:
        """Close the voice's gate now, or once its start is confirmed; True when sent now."""
        if self.releases.hold(node_id, address):
            if self._untimed:  # the reader must look at the clock from now on
                self._untimed = False
                self._nudge()
            return False
        self.send(release_packet(node_id), address)
        return True

    def drop(self, *node_ids: int) -> None:
        """These voices were freed: nothing to release."""
        for node_id in node_ids:
            self.releases.drop(node_id)

    # --- the reader ---------------------------------------------------------------------

    def _nudge(self) -> None:
        """An empty datagram to itself: the reader wakes and looks again."""
        with contextlib.suppress(OSError):
            self._socket.sendto(b"", self._own)

    def _read(self) -> None:
        sock, lock, releases = self._socket, self.lock, self.releases
        waits: float | None = None
        while not self._closed.is_set():
            with lock:
                due = releases.next_due()
                self._untimed = due is None
            wait = None if due is None else max(1e-4, due - time.monotonic())
            if wait is not None or waits is not None:
                waits = wait
                sock.settimeout(wait)
            try:
                node_id = commands.synced_id(sock.recv(512))
            except TimeoutError:
                node_id = None
            except OSError:
                if self._closed.is_set():
                    return
                continue
            with lock:
                out = releases.due(time.monotonic())
                if node_id is not None and (to := releases.confirmed(node_id)) is not None:
                    out.append((node_id, to))
                for node, address in out:
                    self.send(release_packet(node), address)

    def close(self) -> None:
        """Stop reading, send every release still held, close the socket."""
        self._closed.set()
        self._nudge()
        if self._reader.is_alive():
            self._reader.join(timeout=STOP_WAIT)
        with self.lock:
            held = self.releases.take_all()
        for node, address in held:
            self.send(release_packet(node), address)
        self._socket.close()
