"""A client of scsynth that registers for notifications (``/notify 1``) and keeps each one.

Tests read from it when synths started (``/n_go``) and ended (``/n_end``), as scsynth
itself tells them, with the time each notification arrived.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from scorch.primitives.osc import OscMessage, decode_packet, encode_message
from scorch.primitives.scsynth.node_tree import client_of


@dataclass(frozen=True)
class Heard:
    """One notification scsynth sent us, with when it arrived (Unix time)."""

    at: float
    message: OscMessage


class Listener:
    """A client of scsynth that registers for notifications and keeps every one."""

    def __init__(self, port: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(0.1)
        self.address = ("127.0.0.1", port)
        self.heard: list[Heard] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.sock.sendto(encode_message("/notify", 1), self.address)
        self._thread.start()
        # Registered only once scsynth says so: a note played before its /done would be
        # missed (under load the answer takes a while).
        deadline = time.monotonic() + 5.0
        while not self._registered() and time.monotonic() < deadline:
            time.sleep(0.01)

    def _registered(self) -> bool:
        return any(h.message.address == "/done" and tuple(h.message.args[:1]) == ("/notify",)
                   for h in list(self.heard))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except OSError:
                continue
            now = time.time()
            self.heard.extend(Heard(now, m) for m in decode_packet(data))

    def synth_starts(self, since: float) -> list[Heard]:
        """``/n_go`` of synths (not groups) in sclang's client range, after ``since``."""
        return [h for h in list(self.heard) if h.at > since and h.message.address == "/n_go"
                and int(h.message.args[4]) == 0 and client_of(int(h.message.args[0])) == 0]

    def ends(self, since: float, until: float) -> set[int]:
        """Node ids whose ``/n_end`` came between ``since`` and ``until``."""
        return {int(h.message.args[0]) for h in list(self.heard)
                if since < h.at <= until and h.message.address == "/n_end"}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.sendto(encode_message("/notify", 0), self.address)
        self.sock.close()
