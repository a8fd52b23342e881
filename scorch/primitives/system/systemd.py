"""systemd's notify protocol, spoken without libsystemd: datagrams to ``$NOTIFY_SOCKET``.

``scorch run`` under a ``Type=notify`` unit says ``READY=1`` once every room is
READY or given up, ``STATUS=...`` as rooms change, ``WATCHDOG=1`` at half of
``WATCHDOG_USEC`` while its own loop is healthy, and ``STOPPING=1`` on its way
out. Outside systemd (no ``NOTIFY_SOCKET``) every call does nothing. Children
never see these variables (``process.child_env``): jackd would say READY=1 for
scorch otherwise.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Send notify messages to the service manager that started this process, if any."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        path = env.get("NOTIFY_SOCKET", "")
        # An abstract socket is written with a leading "@" and addressed with a NUL.
        self.address = "\0" + path[1:] if path.startswith("@") else path
        watchdog_pid = env.get("WATCHDOG_PID", "")
        usec = env.get("WATCHDOG_USEC", "")
        mine = not watchdog_pid or watchdog_pid == str(os.getpid())
        self.watchdog_usec = int(usec) if usec.isdigit() and int(usec) > 0 and mine else None
        self._sock: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        """True when a service manager listens."""
        return bool(self.address)

    @property
    def watchdog_every(self) -> float | None:
        """Seconds between two ``WATCHDOG=1`` (half the manager's limit), or None for none."""
        return self.watchdog_usec / 2e6 if self.watchdog_usec else None

    def send(self, *fields: str) -> bool:
        """Send ``KEY=value`` lines as one datagram; False if it could not be sent."""
        if not self.enabled:
            return False
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        message = "\n".join(field.replace("\n", " ") for field in fields).encode()
        try:
            self._sock.sendto(message, self.address)
        except OSError as err:
            log.warning("could not notify the service manager (%s): %s", self.address, err)
            return False
        return True

    def ready(self, status: str) -> bool:
        """Startup is over: every room READY or given up."""
        return self.send("READY=1", f"STATUS={status}", f"MAINPID={os.getpid()}")

    def status(self, status: str) -> bool:
        """A one-line status for ``systemctl status``."""
        return self.send(f"STATUS={status}")

    def watchdog(self) -> bool:
        """Still alive and well: the service manager's watchdog timer starts over."""
        return self.send("WATCHDOG=1")

    def reloading(self) -> bool:
        """A reload begins (``ready`` ends it)."""
        return self.send("RELOADING=1", f"MONOTONIC_USEC={time.monotonic_ns() // 1000}")

    def stopping(self) -> bool:
        """Shutdown begins."""
        return self.send("STOPPING=1", "STATUS=stopping")

    def close(self) -> None:
        """Close the socket."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
