"""Open MIDI ports by name with python-rtmidi, and notice ports coming and going.

Ports are matched by case-insensitive substring of their name, never by number
(numbers shift whenever a device is plugged in). Enumeration reuses one rtmidi
client per direction for the router's whole life: mido's ``get_input_names()``
creates a new client per call, which under a rescan timer is a leak of a JACK
client (or ALSA sequencer client) per tick. mido still encodes outgoing messages.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Protocol

import rtmidi

from midi.batch import Message
from scorch.errors import MidiBackendError, MidiPortNotFound
from scorch.primitives.system.jack_ports import JackPortLister
from scorch.primitives.system.jackd import client_environment

log = logging.getLogger(__name__)

_APIS = {
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


def own_port(name: str, client_prefix: str) -> bool:
    """Return True for ports of scorch's own clients (never open them: feedback).

    scorch's clients are called ``PREFIX`` or ``PREFIX-something``; a device
    whose name merely starts with the same letters ("scorcher") is not ours.
    """
    client = name.split(":", 1)[0].strip().lower()
    prefix = client_prefix.lower()
    return client == prefix or client.startswith(prefix + "-")


class Scanner(Protocol):
    """What lists one side's ports: rtmidi's clients, or a JackPortLister."""

    def get_ports(self) -> list[str]:
        """Return the ports' names."""
        ...

    def delete(self) -> None:
        """Release the backend's client."""
        ...


def open_scanners(
    backend: str, client_prefix: str, jack_server: str | None = None
) -> tuple[str, int, Scanner, Scanner]:
    """Return (name, api, input scanner, output scanner); for auto, the first that opens.

    ``jack_server`` is the JACK server the JACK backend joins (None: the default one).
    """
    names = _AUTO_ORDER.get(sys.platform, ("alsa", "jack")) if backend == "auto" else (backend,)
    compiled = set(rtmidi.get_compiled_api())
    reasons = []
    for name in names:
        api = _APIS[name]
        if api not in compiled:
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
                    lister = JackPortLister(f"{client_prefix}-scan")
                    scan_in, scan_out = lister.side(sources=True), lister.side(sources=False)
                else:
                    scan_in = rtmidi.MidiIn(api, name=f"{client_prefix}-scan")
                    scan_out = rtmidi.MidiOut(api, name=f"{client_prefix}-scan")
                # Listing connects the backend's client now, to the server chosen above.
                scan_in.get_ports()
                scan_out.get_ports()
        except (rtmidi.SystemError, OSError) as err:  # e.g. no /dev/snd/seq, no JACK server
            reasons.append(f"{name}: {err}")
            continue
        log.info("MIDI backend: %s", name)
        return name, api, scan_in, scan_out
    raise MidiBackendError("no MIDI backend available (" + "; ".join(reasons) + ")")


def find_port(names: list[str], pattern: str) -> str:
    """Return the first of ``names`` containing ``pattern`` (case-insensitive)."""
    for name in names:
        if pattern.lower() in name.lower():
            return name
    raise MidiPortNotFound(f"no MIDI port matches {pattern!r}; ports are: {names}",
                           name=pattern, known=names)


#: rtmidi's queue per input, in messages: 0.8 s of a 20,000 messages/s flood.
QUEUE_SIZE = 16384
#: Seconds a new output's connection needs to take effect: JACK swaps in a new graph
#: at a cycle's start, and a message written in the cycle before is dropped.
CONNECT_SETTLE = 0.02

class InputPort:
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
        self.timing = timing
        """Clock, start, stop and song position reach the router (the clock-in port)."""
        self.taken = 0
        """Messages taken from the queue."""
        self.closed = False
        with client_environment(jack_server):
            self._midi: rtmidi.MidiIn | None = rtmidi.MidiIn(api, name=client,
                                                             queue_size_limit=QUEUE_SIZE)
            try:
                ports = self._midi.get_ports()
                if name not in ports:
                    raise MidiPortNotFound(f"MIDI input {name!r} went away before it was opened")
                self._listen(timing)
                self._midi.open_port(ports.index(name), "in")
            except BaseException:
                self.close()
                raise

    def _listen(self, timing: bool) -> None:
        assert self._midi is not None
        # SysEx is let through: after one without its F7, rtmidi hands over what follows
        # as more SysEx (midi.batch.recover gets the messages back). Active sensing is not.
        self._midi.ignore_types(sysex=False, timing=not timing, active_sense=True)

    @classmethod
    def virtual(cls, api: int, name: str, jack_server: str | None = None) -> InputPort:
        """Open scorch's own input that other software can play."""
        port = cls.__new__(cls)
        port.name, port.timing, port.taken, port.closed = name, False, 0, False
        with client_environment(jack_server):
            port._midi = rtmidi.MidiIn(api, name=name, queue_size_limit=QUEUE_SIZE)
            port._listen(False)
            port._midi.open_virtual_port(name)
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


class OutputPort:
    """One open output port, found by name; any thread may send (one at a time)."""

    def __init__(self, api: int, name: str, client: str, jack_server: str | None = None) -> None:
        self.name = name
        self._lock = threading.Lock()
        """rtmidi writes a message into one ring buffer per port: one writer at a time."""
        with client_environment(jack_server):
            self._midi: rtmidi.MidiOut | None = rtmidi.MidiOut(api, name=client)
            try:
                ports = self._midi.get_ports()
                if name not in ports:
                    raise MidiPortNotFound(f"MIDI output {name!r} went away before it was "
                                           "opened")
                self._midi.open_port(ports.index(name), "out")
            except BaseException:
                self.close()
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
