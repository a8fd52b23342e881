"""List a JACK server's MIDI ports from a client that is never activated.

rtmidi's JACK backend activates every client it opens, listing ones included:
JACK then runs that client's process thread every cycle (750 times a second at
64 frames and 48 kHz) for as long as it lives. A client that only lists ports
needs no cycle: this one is opened with libjack and never activated, so it wakes
for nothing but the server's notifications.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from pathlib import Path
from typing import Any

_NO_START_SERVER = 0x01
_PORT_IS_INPUT = 0x1
_PORT_IS_OUTPUT = 0x2
_MIDI_TYPE = b"8 bit raw midi"


def loaded_libjack() -> str | None:
    """The libjack this process has loaded already (python-rtmidi's wheel brings its own)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1]
        if "/libjack" in path and ".so" in path:
            return path
    return None


@functools.cache
def _libjack() -> Any:
    # The same libjack as rtmidi's clients: a second copy would map JACK's shared
    # segment a second time (40-100 MB of RSS).
    path = loaded_libjack() or ctypes.util.find_library("jack")
    if path is None:
        raise OSError("libjack is not installed")
    lib = ctypes.CDLL(path)
    lib.jack_client_open.restype = ctypes.c_void_p
    lib.jack_client_open.argtypes = [ctypes.c_char_p, ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_int)]
    lib.jack_get_ports.restype = ctypes.POINTER(ctypes.c_char_p)
    lib.jack_get_ports.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.c_ulong]
    lib.jack_free.argtypes = [ctypes.c_void_p]
    lib.jack_port_by_name.restype = ctypes.c_void_p
    lib.jack_port_by_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.jack_port_get_all_connections.restype = ctypes.POINTER(ctypes.c_char_p)
    lib.jack_port_get_all_connections.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.jack_disconnect.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.jack_client_close.argtypes = [ctypes.c_void_p]
    return lib


class JackPortLister:
    """Lists the MIDI ports of one JACK server, as rtmidi names them (``client:port``).

    The caller chooses the server (``scorch.primitives.system.jackd.client_environment``);
    the client is opened at once, and OSError says why it could not be. One client
    serves both sides (:meth:`side`): each client a process closes is a chance of
    jack2 issue #964 (libjack cancels the client's notification thread, and now and
    then that ends the process in ``std::terminate``), so scorch closes as few as it can.
    """

    def __init__(self, name: str) -> None:
        self._lib = _libjack()
        status = ctypes.c_int(0)
        self._client: int | None = self._lib.jack_client_open(
            name.encode(), _NO_START_SERVER, ctypes.byref(status))
        if not self._client:
            raise OSError(f"cannot open a JACK client (status 0x{status.value:x})")
        self._users = 0

    def side(self, sources: bool) -> PortSide:
        """A lister of the ports that send MIDI (``sources``: what an input opens), or of
        those that receive it (what an output opens); the client closes with the last."""
        self._users += 1
        return PortSide(self, _PORT_IS_OUTPUT if sources else _PORT_IS_INPUT)

    def get_ports(self, flags: int) -> list[str]:
        """The full names of the MIDI ports with JACK's port ``flags``, in the server's order
        (rtmidi's own)."""
        if self._client is None:
            return []
        return self._names(self._lib.jack_get_ports(self._client, None, _MIDI_TYPE, flags))

    def connections(self, port: str) -> list[str]:
        """The full names of the ports connected to ``port`` (none if it is not there)."""
        if self._client is None:
            return []
        handle = self._lib.jack_port_by_name(self._client, port.encode())
        if not handle:
            return []
        return self._names(self._lib.jack_port_get_all_connections(self._client, handle))

    def disconnect(self, source: str, destination: str) -> bool:
        """Break the connection from ``source`` to ``destination``; False if JACK would not
        (a client need not be active to do it)."""
        if self._client is None:
            return False
        return self._lib.jack_disconnect(self._client, source.encode(),
                                         destination.encode()) == 0

    def _names(self, found: Any) -> list[str]:
        """Read and free a NULL-terminated array of port names from libjack."""
        if not found:
            return []
        try:
            names = []
            for index in range(1 << 16):
                name = found[index]
                if name is None:
                    break
                names.append(name.decode("utf-8", errors="replace"))
            return names
        finally:
            self._lib.jack_free(ctypes.cast(found, ctypes.c_void_p))

    def release(self) -> None:
        """One side is done; the last closes the client (nothing is listed after)."""
        self._users -= 1
        client = self._client
        if self._users <= 0 and client is not None:
            self._client = None
            self._lib.jack_client_close(client)


class PortSide:
    """One side of a :class:`JackPortLister`: rtmidi's scanner face."""

    def __init__(self, lister: JackPortLister, flags: int) -> None:
        self._lister: JackPortLister | None = lister
        self._flags = flags

    def get_ports(self) -> list[str]:
        """Return the ports' full names (none once deleted)."""
        return [] if self._lister is None else self._lister.get_ports(self._flags)

    def connections(self, port: str) -> list[str]:
        """The ports connected to ``port`` (see :meth:`JackPortLister.connections`)."""
        return [] if self._lister is None else self._lister.connections(port)

    def disconnect(self, source: str, destination: str) -> bool:
        """Break one connection (see :meth:`JackPortLister.disconnect`)."""
        return self._lister is not None and self._lister.disconnect(source, destination)

    def delete(self) -> None:
        """Done with this side (twice is once)."""
        lister, self._lister = self._lister, None
        if lister is not None:
            lister.release()
