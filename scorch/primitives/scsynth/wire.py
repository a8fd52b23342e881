"""The seam between scorch and a scsynth: datagrams out, datagrams in.

An :class:`~scorch.primitives.scsynth.client.OscClient` does everything OSC asks of a
client (replies matched to their requests, ``/fail``, node notifications, the last
``/status``) over a :class:`Wire`, as httpx's client does over its transport. The
real wire is :class:`UdpWire`, a UDP socket; :class:`~scorch.primitives.scsynth.fake.
FakeScsynth` answers from a function, for tests that need no process.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Protocol


class Wire(Protocol):
    """Where a client's datagrams go and come from."""

    def send(self, packet: bytes) -> None:
        """Send one datagram (raise OSError when the network refuses it); never blocks."""
        ...

    def receive(self, timeout: float | None) -> bytes | None:
        """The next datagram; None when ``timeout`` seconds pass first (None: no timeout).
        Raise OSError on a network error (the caller looks again)."""
        ...

    def wake(self) -> None:
        """Have a :meth:`receive` blocked in another thread return (the client closes)."""
        ...

    def close(self) -> None:
        """Let go of the socket (once no thread receives)."""
        ...


class UdpWire:
    """A UDP socket bound to an ephemeral port, talking to one scsynth's address."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((address[0], 0))
        # Blocking, no timeout: the receive thread wakes only for a packet (or wake()'s
        # nudge), never to look at a flag (twelve rooms polling 5 times a second each
        # were a tenth of an idle scorch's wake-ups).
        self._timeout: float | None = None

    def send(self, packet: bytes) -> None:
        """One datagram to scsynth."""
        self._sock.sendto(packet, self.address)

    def receive(self, timeout: float | None) -> bytes | None:
        """The next datagram, or None after ``timeout``."""
        if timeout != self._timeout:
            self._timeout = timeout
            self._sock.settimeout(timeout)
        try:
            return self._sock.recv(65536)
        except TimeoutError:
            return None

    def wake(self) -> None:
        """shutdown() wakes a blocked recv on Linux (with ENOTCONN on UDP); an empty
        datagram to itself does everywhere."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.sendto(b"", self._sock.getsockname())

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()
