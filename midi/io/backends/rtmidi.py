"""The ``rtmidi`` backend: ports by name through python-rtmidi, on ALSA, JACK, CoreMIDI or WinMM.

Enumeration reuses one client per direction for the router's whole life: mido's
``get_input_names()`` creates a new client per call, which under a rescan timer
is a leak of a JACK client (or ALSA sequencer client) per tick. On Linux's JACK
the listing is scorch's own never-activated client
(:class:`~scorch.primitives.system.jack_ports.JackPortLister`), which also sees
and breaks connections (:class:`~midi.io.ports.Patchbay`). mido still encodes
outgoing messages.
"""

from __future__ import annotations

import logging
import sys
import threading
import time

import rtmidi

from midi.batch import Message
from midi.io.ports import Backend, Scanner, Wake
from scorch.errors import MidiBackendError, MidiPortNotFound
from scorch.primitives.system import JackPortLister, client_environment

log = logging.getLogger(__name__)

NAME = "rtmidi"
APIS = {
    "alsa": rtmidi.API_LINUX_ALSA,
    "jack": rtmidi.API_UNIX_JACK,
    "coremidi": rtmidi.API_MACOSX_CORE,
    "winmm": rtmidi.API_WINDOWS_MM,
}
_AUTO_ORDER = {
    "linux": ("alsa", "jack"),
    "darwin": ("coremidi", "jack"),
    "win32": ("winmm",),
}
#: rtmidi's queue per input, in messages: 0.8 s of a 20,000 messages/s flood.
QUEUE_SIZE = 16384
#: Seconds a new output's connection needs to take effect: JACK swaps in a new graph
#: at a cycle's start, and a message written in the cycle before is dropped.
CONNECT_SETTLE = 0.02
#: What python-rtmidi raises (its SystemError is an OSError: no /dev/snd/seq, no server).
_FAILED = (rtmidi.RtMidiError, OSError)


def _failed(what: str, err: Exception) -> Exception:
    """The scorch error for rtmidi's ``err`` while doing ``what``: a port gone, or the driver."""
    if isinstance(err, rtmidi.InvalidPortError):
        return MidiPortNotFound(f"{what}: the port went away ({err})")
    return MidiBackendError(f"{what}: {err}")


def _connect(midi: rtmidi.MidiIn | rtmidi.MidiOut, name: str, port: str) -> None:
    """Open ``midi``'s port called ``port`` (``in``, ``out``) on the port called ``name``."""
    ports = midi.get_ports()
    if name not in ports:
        what = "input" if port == "in" else "output"
        raise MidiPortNotFound(f"MIDI {what} {name!r} went away before it was opened")
    midi.open_port(ports.index(name), port)


def offered() -> list[str]:
    """python-rtmidi's APIs compiled in (``jack``, ``alsa``...)."""
    return [rtmidi.get_api_name(api) for api in rtmidi.get_compiled_api()]


def open(api: str | None, client: str, jack_server: str | None = None,
         wake: Wake | None = None) -> Backend:
    """Open the listing clients on ``api`` (None or ``auto``: the first of the platform's
    that opens), called ``client-scan``; ``jack_server`` is the JACK server joined."""
    del wake  # rtmidi's queues wake nothing: its inputs are polled
    wanted = api or "auto"
    if wanted != "auto" and wanted not in APIS:
        raise MidiBackendError(f"rtmidi has no MIDI API {wanted!r}; APIs are: auto, "
                               f"{', '.join(APIS)}")
    names = _AUTO_ORDER.get(sys.platform, ("alsa", "jack")) if wanted == "auto" else (wanted,)
    compiled = set(rtmidi.get_compiled_api())
    reasons = []
    for name in names:
        number = APIS[name]
        if number not in compiled:
            reasons.append(f"{name}: not compiled into python-rtmidi")
            continue
        try:
            with client_environment(jack_server):
                scan_in: Scanner
                scan_out: Scanner
                # Never activated: no process thread woken every cycle. Linux only: the
                # client's open is variadic, which ctypes calls right on x86-64 and not
                # on every ABI (Apple's arm64).
                if name == "jack" and sys.platform.startswith("linux"):
                    lister = JackPortLister(f"{client}-scan")
                    scan_in, scan_out = lister.side(sources=True), lister.side(sources=False)
                else:
                    scan_in = _Listing(rtmidi.MidiIn(number, name=f"{client}-scan"), "inputs")
                    scan_out = _Listing(rtmidi.MidiOut(number, name=f"{client}-scan"),
                                        "outputs")
                # Listing connects the backend's client now, to the server chosen above.
                scan_in.get_ports()
                scan_out.get_ports()
        except (*_FAILED, MidiBackendError) as err:  # e.g. no /dev/snd/seq, no JACK server
            reasons.append(f"{name}: {err}")
            continue
        log.info("MIDI backend: %s", name)
        return RtMidi(name, scan_in, scan_out, jack_server)
    raise MidiBackendError("no MIDI backend available (" + "; ".join(reasons) + ")")


class _Listing:
    """One side's rtmidi client as the contract's Scanner, whose errors are scorch's."""

    def __init__(self, midi: rtmidi.MidiIn | rtmidi.MidiOut, side: str) -> None:
        self._midi = midi
        self._side = side

    def get_ports(self) -> list[str]:
        """Return the ports' full names."""
        try:
            return self._midi.get_ports()
        except _FAILED as err:
            raise MidiBackendError(f"MIDI {self._side} could not be listed: {err}") from err

    def delete(self) -> None:
        """Release the rtmidi client."""
        self._midi.delete()


class RtMidi:
    """python-rtmidi on one API: the contract's whole :class:`~midi.io.ports.Backend`."""

    name = NAME
    wakes = False
    tells_ports = False

    def __init__(self, api: str, scan_in: Scanner, scan_out: Scanner,
                 jack_server: str | None) -> None:
        self.api = api
        self.scan_in = scan_in
        self.scan_out = scan_out
        self._number = APIS[api]
        self._jack_server = jack_server

    def open_input(self, name: str, client: str, timing: bool = False) -> RtMidiInput:
        """Open a client called ``client`` listening to the port ``name``."""
        return RtMidiInput(self._number, name, client, self._jack_server, timing)

    def open_virtual(self, name: str, told: Wake | None = None) -> RtMidiInput:
        """Open scorch's own input called ``name`` (rtmidi tells of no port: ``told`` stays)."""
        return RtMidiInput.virtual(self._number, name, self._jack_server)

    def open_output(self, name: str, client: str) -> RtMidiOutput:
        """Open a client called ``client`` sending to the port ``name``."""
        return RtMidiOutput(self._number, name, client, self._jack_server)

    def close(self) -> None:
        """Release the listing clients."""
        for scanner in (self.scan_in, self.scan_out):
            scanner.delete()


class RtMidiInput:
    """One open input whose messages rtmidi queues in C; the router takes them from Python.

    No callback: the backend's thread (JACK's realtime process thread, ALSA's or
    CoreMIDI's input thread) never runs Python. A callback needs the GIL, and while
    another thread holds it a JACK client misses its cycle and JACK drops that cycle's
    events, so under a flood a bare callback loses messages. Worse, libjack cancels its
    process thread asynchronously when a client closes: a callback caught waiting for
    the GIL dies holding the GIL's own mutex, and the whole process hangs. So rtmidi
    keeps what arrives in its lock-free queue of :data:`QUEUE_SIZE`, and the router's
    poll thread takes it (:meth:`take`).
    """

    def __init__(self, api: int, name: str, client: str, jack_server: str | None = None,
                 timing: bool = False) -> None:
        self.name = name
        self.port_name = f"{client}:in"
        self.timing = timing
        self.taken = 0
        self.closed = False
        self._midi: rtmidi.MidiIn | None = None
        try:
            with client_environment(jack_server):
                self._midi = rtmidi.MidiIn(api, name=client, queue_size_limit=QUEUE_SIZE)
                self._listen(timing)
                _connect(self._midi, name, "in")
        except BaseException as err:
            self.close()
            if isinstance(err, _FAILED):
                raise _failed(f"MIDI input {name!r}", err) from err
            raise

    def _listen(self, timing: bool) -> None:
        assert self._midi is not None
        # SysEx is let through: after one without its F7, rtmidi hands over what follows
        # as more SysEx (midi.batch.recover gets the messages back). Active sensing is not.
        self._midi.ignore_types(sysex=False, timing=not timing, active_sense=True)

    @classmethod
    def virtual(cls, api: int, name: str, jack_server: str | None = None) -> RtMidiInput:
        """Open scorch's own input that other software can play."""
        port = cls.__new__(cls)
        port.name, port.timing, port.taken, port.closed = name, False, 0, False
        port.port_name = f"{name}:{name}"  # rtmidi's client and port, on JACK
        try:
            with client_environment(jack_server):
                port._midi = rtmidi.MidiIn(api, name=name, queue_size_limit=QUEUE_SIZE)
                port._listen(False)
                port._midi.open_virtual_port(name)
        except _FAILED as err:
            raise _failed(f"virtual MIDI input {name!r}", err) from err
        return port

    def take(self) -> list[Message]:
        """Return every message queued so far, oldest first (one thread at a time)."""
        midi = self._midi
        if midi is None or self.closed:
            return []
        taken: list[Message] = []
        get = midi.get_message
        while (message := get()) is not None:
            taken.append(message)
        if taken:
            self.taken += len(taken)
        return taken

    def stop(self) -> None:
        """Stop receiving (what is queued can still be taken)."""
        if self._midi is not None:
            self._midi.close_port()

    def close(self) -> None:
        """Release the rtmidi client (and its JACK/ALSA client); nothing can be taken after."""
        self.closed = True
        midi, self._midi = self._midi, None
        if midi is not None:
            midi.close_port()
            midi.delete()


class RtMidiOutput:
    """One open output port, found by name; any thread may send (one at a time)."""

    def __init__(self, api: int, name: str, client: str, jack_server: str | None = None) -> None:
        self.name = name
        self._lock = threading.Lock()
        """rtmidi writes a message into one ring buffer per port: one writer at a time."""
        self._midi: rtmidi.MidiOut | None = None
        try:
            with client_environment(jack_server):
                self._midi = rtmidi.MidiOut(api, name=client)
                _connect(self._midi, name, "out")
        except BaseException as err:
            self.close()
            if isinstance(err, _FAILED):
                raise _failed(f"MIDI output {name!r}", err) from err
            raise
        self._settled_at = time.monotonic() + CONNECT_SETTLE

    def send(self, data: list[int] | bytes) -> None:
        """Send one message's bytes."""
        with self._lock:
            if self._midi is None:
                raise MidiPortNotFound(f"MIDI output {self.name!r} is closed")
            early = self._settled_at - time.monotonic()
            if early > 0:  # only in the port's first moments
                time.sleep(early)
            self._midi.send_message(data)

    def close(self) -> None:
        """Release the rtmidi client."""
        with self._lock:
            midi, self._midi = self._midi, None
        if midi is not None:
            midi.close_port()
            midi.delete()
