"""A room's scsynth as a bare UDP socket: what the MIDI senders send, read one datagram at a
time; ``/sync`` answered by hand, as scsynth would, or never (a lost datagram)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scorch.primitives.osc import decode_packet

Messages = list[tuple[str, list[object]]]


@contextmanager
def udp_room() -> Iterator[socket.socket]:
    """A loopback UDP socket that waits 2 s for each datagram.

    Its receive buffer is as large as the kernel allows (``net.core.rmem_max``): a burst
    from several threads while the reading test is off the CPU would otherwise overflow
    the default and lose datagrams the sender did send (a clean-clone run under load lost
    some of 400 and timed out waiting for them)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(2.0)
    try:
        yield listener
    finally:
        listener.close()


def datagram(room: socket.socket) -> tuple[Messages, tuple[str, int]]:
    """The messages of the next datagram, as (address, args), and who sent it."""
    data, sender = room.recvfrom(65536)
    return [(m.address, list(m.args)) for m in decode_packet(data)], sender


def nothing_comes(room: socket.socket, within: float = 0.2) -> bool:
    """True when no datagram arrives ``within`` seconds."""
    room.settimeout(within)
    try:
        room.recv(65536)
    except TimeoutError:
        return True
    finally:
        room.settimeout(2.0)
    return False


def voluntary_switches(thread: threading.Thread) -> int:
    """How often ``thread`` has waited so far (Linux counts each wait that slept)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])
