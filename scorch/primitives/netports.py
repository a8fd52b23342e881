"""Find free local UDP ports for scsynth and sclang."""

from __future__ import annotations

import socket
import threading

# Ports this process handed out: instances booting in parallel never get the
# same one, even before the process that will bind it has started.
_claimed: set[int] = set()
_lock = threading.Lock()


def free_udp_port() -> int:
    """Return a UDP port on 127.0.0.1 that is free now and not handed out before."""
    with _lock:
        for _ in range(100):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            if port not in _claimed:
                _claimed.add(port)
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
