"""Find free local UDP ports for scsynth and sclang."""

from __future__ import annotations

import socket


def free_udp_port(exclude: set[int] | None = None) -> int:
    """Return a UDP port on 127.0.0.1 that nothing is bound to right now."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if not exclude or port not in exclude:
            return port
    raise OSError("no free UDP port found")


def udp_port_free(port: int) -> bool:
    """True if 127.0.0.1:``port`` can be bound now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
