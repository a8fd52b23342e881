"""A UDP relay between one client and scsynth that drops the datagrams a test names.

It stands in for a loaded loopback that loses a datagram now and then: the
client (sclang) talks to the relay's port as if it were scsynth's; the relay
forwards both ways and drops what ``drop`` says, counting what it dropped.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

#: (direction, datagram) -> drop it? direction is "to-server" or "to-client".
DropRule = Callable[[str, bytes], bool]


def osc_address(datagram: bytes) -> bytes:
    """The OSC address of a message (a bundle's is ``#bundle``)."""
    return datagram.split(b"\0", 1)[0]


def first(count: int, direction: str, address: bytes, contains: bytes = b"") -> DropRule:
    """Drop the first ``count`` datagrams going ``direction`` to ``address`` (containing
    ``contains``), then let them all through."""
    left = [count]

    def rule(way: str, datagram: bytes) -> bool:
        if left[0] > 0 and way == direction and osc_address(datagram) == address \
                and contains in datagram:
            left[0] -= 1
            return True
        return False

    return rule


@dataclass
class LossyRelay:
    """Relay 127.0.0.1:``port`` <-> scsynth at ``server_port``, dropping by ``drop``."""

    server_port: int
    drop: DropRule
    dropped: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._front.bind(("127.0.0.1", 0))
        self.port = int(self._front.getsockname()[1])
        self._back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._back.bind(("127.0.0.1", 0))
        self._client: tuple[str, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lossy-relay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        server = ("127.0.0.1", self.server_port)
        while not self._stop.is_set():
            ready, _, _ = select.select([self._front, self._back], [], [], 0.05)
            for sock in ready:
                with contextlib.suppress(OSError):
                    datagram, source = sock.recvfrom(65536)
                    if sock is self._front:
                        self._client = source
                        self._pass("to-server", datagram, self._back, server)
                    elif self._client is not None:
                        self._pass("to-client", datagram, self._front, self._client)

    def _pass(self, way: str, datagram: bytes, out: socket.socket,
              to: tuple[str, int]) -> None:
        if self.drop(way, datagram):
            self.dropped.append(datagram)
        else:
            out.sendto(datagram, to)

    def close(self) -> None:
        """Stop relaying and close both sockets."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self._front.close()
        self._back.close()
