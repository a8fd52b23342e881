"""Find free local UDP ports for scsynth and sclang."""

from __future__ import annotations

import socket
import threading

import psutil

# Ports this process handed out: rooms booting in parallel never get the
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


def udp_port_holder(port: int) -> str | None:
    """Who holds UDP ``port`` on this machine: "pid 123 (scsynth)", or None if nobody we see."""
    try:
        connections = psutil.net_connections(kind="udp")
    except (psutil.AccessDenied, OSError):
        return None
    for conn in connections:
        if conn.laddr and conn.laddr.port == port and conn.pid is not None:
            try:
                name = psutil.Process(conn.pid).name()
            except (psutil.Error, OSError):  # it just ended, or we are out of descriptors
                name = "a process that just ended, or that cannot be asked now"
            return f"pid {conn.pid} ({name})"
    return None


def udp_port_free(port: int) -> bool:
    """True if 127.0.0.1:``port`` can be bound now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
