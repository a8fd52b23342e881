"""When the router looks at its ports: as JACK says a port came or went, not ten times a second.

scorch's own JACK input (the virtual port's client, already active) adds 1 to an
eventfd whenever a port is registered or unregistered on the server
(``midi/io/backends/jack_in.c``). This ticker waits on it and then tells the router's actor to
look (``watch``: inputs gone, their voices released) and to rescan (new devices
opened) at once. Without that eventfd (rtmidi's backend, no virtual port), or
while a key route has a ``max_hold`` (held voices must be looked at on time), it
looks every :data:`WATCH_INTERVAL` as before.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable

from actors.ticker import Ticker
from midi.io import Wake

#: Seconds between two looks when polled.
WATCH_INTERVAL = 0.1
#: Seconds between two looks when told of ports: a safety net only.
TOLD_INTERVAL = 5.0


class PortWatch(Ticker):
    """The ticker that tells the router's actor to look at its ports (``watch``)."""

    def __init__(self, ports: Wake | None, watch: Callable[[], object],
                 rescan: Callable[[], object], polled: Callable[[], bool]) -> None:
        super().__init__(WATCH_INTERVAL, watch, "midi-router-watch")
        self._ports = ports
        self._rescan = rescan
        """Tells the actor to open what was plugged in."""
        self._polled = polled
        """True while looks are needed every WATCH_INTERVAL anyway (a max_hold route)."""
        self.looks = 0
        """Times it woke to look."""
        self.told = 0
        """Times JACK said a port came or went."""

    def stop(self) -> None:
        """Stop, and wait for the thread: the eventfd is closed after this."""
        super().stop()
        if self._ports is not None:
            self._ports.set()
        self._thread.join(timeout=2.0)

    def _wait(self) -> None:
        if self._ports is None:
            super()._wait()
        else:
            wait = WATCH_INTERVAL if self._polled() else TOLD_INTERVAL
            ready, _, _ = select.select([self._ports.fd], [], [], wait)
            if ready:
                os.eventfd_read(self._ports.fd)  # every change since the last look: one look
                self.told += 1
                if not self._halted:
                    self._rescan()
        self.looks += 1
