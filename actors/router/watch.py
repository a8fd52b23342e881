"""When the router looks at its ports: as JACK says a port came or went, not ten times a second.

scorch's own JACK input (the virtual port's client, already active) adds 1 to an
eventfd whenever a port is registered or unregistered on the server
(``midi/jack_in.c``). This thread blocks on it and tells the router's actor to
look (``watch``: inputs gone, their voices released) and to rescan (new devices
opened) at once. Without that eventfd (rtmidi's backend, no virtual port), or
while a key route has a ``max_hold`` (held voices must be looked at on time), it
looks every :data:`WATCH_INTERVAL` as before.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable

import pykka

from midi.jack_in import Wake

#: Seconds between two looks when polled.
WATCH_INTERVAL = 0.1
#: Seconds between two looks when told of ports: a safety net only.
TOLD_INTERVAL = 5.0


class PortWatch:
    """The thread that tells the router's actor when to look at its ports."""

    def __init__(self, ports: Wake | None, watch: Callable[[], object],
                 rescan: Callable[[], object], polled: Callable[[], bool]) -> None:
        self._ports = ports
        self._watch = watch
        """Tells the actor to look for inputs gone and voices past max_hold (a tell)."""
        self._rescan = rescan
        """Tells the actor to open what was plugged in."""
        self._polled = polled
        """True while looks are needed every WATCH_INTERVAL anyway (a max_hold route)."""
        self._halted = False
        self._halt = threading.Event()
        self.looks = 0
        """Times it told the actor to look."""
        self.told = 0
        """Times JACK said a port came or went."""
        self._thread = threading.Thread(target=self._run, name="midi-router-watch",
                                        daemon=True)

    def start(self) -> PortWatch:
        """Start the thread; returns itself."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (a look already told still runs)."""
        self._halted = True
        self._halt.set()
        if self._ports is not None:
            self._ports.set()
        self._thread.join(timeout=2.0)

    def _run(self) -> None:
        fd = None if self._ports is None else self._ports.fd
        pending: object = None
        while not self._halted:
            if fd is None:
                self._halt.wait(WATCH_INTERVAL)
            else:
                wait = WATCH_INTERVAL if self._polled() else TOLD_INTERVAL
                ready, _, _ = select.select([fd], [], [], wait)
                if ready:
                    os.eventfd_read(fd)  # every change since the last look: one look
                    self.told += 1
                    if not self._halted:
                        self._rescan()
            if self._halted:
                return
            if isinstance(pending, pykka.Future):
                try:
                    pending.get(timeout=0)
                except pykka.Timeout:
                    continue  # the last look still runs: no pile of looks behind a slow one
                except Exception:  # the look failed; the actor's method logs what went wrong
                    pass
            self.looks += 1
            try:
                pending = self._watch()
            except pykka.ActorDeadError:
                return
