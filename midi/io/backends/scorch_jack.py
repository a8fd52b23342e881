"""The ``scorch_jack`` backend: scorch's own JACK MIDI input client (``jack_in.c``), inputs only.

python-rtmidi offers two ways to receive: a callback, which runs Python in JACK's
process thread (it waits for the GIL, JACK drops the MIDI of every cycle it
misses, and a client closed while its callback waits hangs the process), or a
queue in C that wakes nothing, so the reader must poll it (a first note waits
for the next look, and an idle router wakes hundreds of times a second). This
client does neither: its process callback, in C, copies each cycle's events into
a lock-free ring and adds 1 to an eventfd, which the router's input thread
blocks on (:class:`~midi.io.ports.Wake`). So the thread wakes the moment a cycle
brought MIDI, and not at all while none comes.

The C source is compiled by the system's C compiler on first use into the user's
cache (a few hundred milliseconds, once per version of the source); without a
compiler, or off Linux, or off JACK, :func:`open` raises MidiBackendError and the
router keeps the whole backend's inputs (rtmidi's queue and its poll:
:mod:`actors.router.input`). It joins the libjack python-rtmidi loaded, so it
opens after the ``rtmidi`` backend.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from midi.batch import Message
from midi.io.ports import Inputs, Wake
from scorch.errors import MidiBackendError, MidiPortNotFound
from scorch.primitives.disk import cache_folder
from scorch.primitives.system import client_environment, loaded_libjack

log = logging.getLogger(__name__)

NAME = "scorch_jack"
SOURCE = Path(__file__).with_name("jack_in.c")
#: Bytes taken from the ring per call (the ring holds 1 MiB).
ROOM = 1 << 18
#: What the C side leaves out: 1 SysEx (never), 2 clock and MTC, 4 active sensing.
IGNORE_TIMING, IGNORE_ACTIVE_SENSE = 2, 4
_RECORD = struct.Struct("<QI")
#: SCHED_FIFO priority of the client's process thread when the JACK server runs without
#: realtime scheduling (where allowed): above the input thread's (thread_timing), so
#: the memcpy that keeps a cycle's MIDI is never late for the cycle on a loaded machine.
PRIORITY = 20
_ERRORS = {1: "libjack not loaded", 2: "no JACK server", 3: "port not registered",
           4: "client not activated", 5: "not connected"}


class _Library(NamedTuple):
    """The C side's functions (``scorch_jack_in_*``)."""

    open: Any
    name: Any
    read: Any
    dropped: Any
    stop: Any
    close: Any


@functools.cache
def _library() -> _Library | None:
    """The compiled client (built now if need be), or None: not on this machine."""
    if not sys.platform.startswith("linux") or not hasattr(os, "eventfd"):
        return None
    source = SOURCE.read_bytes()
    key = hashlib.sha256(source + sys.platform.encode()).hexdigest()[:16]
    target = cache_folder("native") / f"jack_in-{key}.so"
    if not target.exists():
        compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        if compiler is None:
            log.info("no C compiler: MIDI inputs polled through rtmidi's queue")
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
            built = Path(work) / target.name
            done = subprocess.run(
                [compiler, "-O2", "-shared", "-fPIC", "-std=c11", "-o", str(built),
                 str(SOURCE), "-ldl"], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                log.warning("scorch's JACK MIDI input did not compile; MIDI inputs polled "
                            "through rtmidi's queue:\n%s", done.stderr[-2000:])
                return None
            os.replace(built, target)  # atomic: a parallel build leaves one whole file
    lib = ctypes.CDLL(str(target))  # opening and closing talk to the server: without the GIL
    # A read is a memcpy: it keeps the GIL. A CDLL call lets it go and must take it back,
    # and on a busy interpreter that wait (up to a switch interval) lands on the hot path.
    held = ctypes.PyDLL(str(target))
    lib.scorch_jack_in_open.restype = ctypes.c_void_p
    lib.scorch_jack_in_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                                        ctypes.c_int, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_int)]
    lib.scorch_jack_in_name.restype = ctypes.c_char_p
    lib.scorch_jack_in_name.argtypes = [ctypes.c_void_p]
    held.scorch_jack_in_read.restype = ctypes.c_size_t
    held.scorch_jack_in_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    held.scorch_jack_in_dropped.restype = ctypes.c_uint64
    held.scorch_jack_in_dropped.argtypes = [ctypes.c_void_p]
    for name in ("scorch_jack_in_stop", "scorch_jack_in_close"):
        getattr(lib, name).restype = None
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    return _Library(lib.scorch_jack_in_open, lib.scorch_jack_in_name,
                    held.scorch_jack_in_read, held.scorch_jack_in_dropped,
                    lib.scorch_jack_in_stop, lib.scorch_jack_in_close)


def offered() -> list[str]:
    """JACK on Linux, where the client can wake its reader (an eventfd)."""
    return ["jack"] if sys.platform.startswith("linux") and hasattr(os, "eventfd") else []


def open(api: str | None, client: str, jack_server: str | None = None,
         wake: Wake | None = None) -> Inputs:
    """Open the backend on JACK (``api`` None or ``jack``); its inputs ring ``wake``."""
    del client  # each input is a client of its own, named as it opens
    if api not in (None, "jack"):
        raise MidiBackendError(f"scorch's JACK MIDI input runs on JACK only, not {api!r}")
    if wake is None:
        raise MidiBackendError("scorch's JACK MIDI input needs an eventfd to wake its reader")
    try:
        here = _library() is not None and loaded_libjack() is not None
    except OSError as err:
        raise MidiBackendError(f"scorch's JACK MIDI input unavailable: {err}") from err
    if not here:
        raise MidiBackendError("scorch's JACK MIDI input is not available here (off Linux, "
                               "no C compiler, or no libjack loaded)")
    return JackInputs(wake, jack_server)


class JackInputs:
    """The contract's :class:`~midi.io.ports.Inputs` of scorch's own JACK clients."""

    name = NAME
    wakes = True
    tells_ports = True

    def __init__(self, wake: Wake, jack_server: str | None) -> None:
        self._wake = wake
        self._jack_server = jack_server

    def open_input(self, name: str, client: str, timing: bool = False) -> JackInput:
        """Open a client called ``client`` connected to the port ``name``."""
        return JackInput(name, client, self._wake, self._jack_server, timing, source=name)

    def open_virtual(self, name: str, told: Wake | None = None) -> JackInput:
        """Open scorch's own input called ``name``; ``told`` rings as ports come and go."""
        return JackInput.virtual(name, self._wake, self._jack_server, told)

    def close(self) -> None:
        """Nothing to release: each input is a client of its own."""


class JackInput:
    """One JACK MIDI input port of scorch's own client: the contract's InputPort.

    Opened on ``source`` (a port's full name) and connected to it, or, when
    ``source`` is None, a port others connect to (scorch's virtual input).
    """

    def __init__(self, name: str, client: str, wake: Wake, jack_server: str | None = None,
                 timing: bool = False, source: str | None = None, port: str = "in",
                 ports: Wake | None = None) -> None:
        lib = _library()
        libjack = loaded_libjack()
        if lib is None or libjack is None:
            raise MidiBackendError("scorch's JACK MIDI input is not available")
        self.name = name
        self.timing = timing
        """Clock, start, stop and song position reach the router (the clock-in port)."""
        self.taken = 0
        """Messages taken from the ring."""
        self.closed = False
        self._lib = lib
        self._buffer = bytearray(ROOM)
        self._address = ctypes.addressof((ctypes.c_char * ROOM).from_buffer(self._buffer))
        self._last = 0
        ignore = IGNORE_ACTIVE_SENSE | (0 if timing else IGNORE_TIMING)
        error = ctypes.c_int(0)
        with client_environment(jack_server):
            handle = lib.open(
                libjack.encode(), client.encode(), port.encode(),
                None if source is None else source.encode(), wake.fd, ignore, PRIORITY,
                -1 if ports is None else ports.fd, ctypes.byref(error))
        if not handle:
            what = _ERRORS.get(error.value, f"error {error.value}")
            if error.value == 5:
                raise MidiPortNotFound(f"MIDI input {name!r}: {what}")
            raise MidiBackendError(f"MIDI input {name!r}: {what}")
        self._handle: int | None = handle
        self.port_name = lib.name(handle).decode()
        """The port's own full name (``client:port``)."""

    @classmethod
    def virtual(cls, name: str, wake: Wake, jack_server: str | None = None,
                ports: Wake | None = None) -> JackInput:
        """Open scorch's own input that other software can play (named as rtmidi names it);
        ``ports`` is woken whenever a port comes or goes on the server."""
        return cls(name, name, wake, jack_server, port=name, ports=ports)

    def take(self) -> list[Message]:
        """Return every message the ring holds, oldest first (one thread at a time)."""
        handle = self._handle
        if handle is None or self.closed:
            return []
        read, buffer, unpack = self._lib.read, self._buffer, _RECORD.unpack_from
        taken: list[Message] = []
        last = self._last
        while used := read(handle, self._address, ROOM):
            at = 0
            while at < used:
                when, size = unpack(buffer, at)
                at += 12
                taken.append((list(buffer[at:at + size]), (when - last) * 1e-6 if last else 0.0))
                last = when
                at += size
            if used < ROOM // 2:
                break
        self._last = last
        self.taken += len(taken)
        return taken

    @property
    def dropped(self) -> int:
        """Messages that came while the ring was full (lost)."""
        return 0 if self._handle is None else int(self._lib.dropped(self._handle))

    def stop(self) -> None:
        """Stop receiving (what the ring holds can still be taken)."""
        if self._handle is not None:
            self._lib.stop(self._handle)

    def close(self) -> None:
        """Deactivate (JACK's thread is out of the callback) and close the client."""
        self.closed = True
        handle, self._handle = self._handle, None
        if handle is not None:
            self._lib.close(handle)
