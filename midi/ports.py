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
from collections.abc import Callable

import rtmidi

from scorch.errors import MidiBackendError, MidiPortNotFound
from scorch.primitives.jackd import client_environment

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

#: Called from the backend's thread with (port name, message bytes).
MessageCallback = Callable[[str, list[int]], None]


def own_port(name: str, client_prefix: str) -> bool:
    """Return True for ports of scorch's own clients (never open them: feedback).

    scorch's clients are called ``PREFIX`` or ``PREFIX-something``; a device
    whose name merely starts with the same letters ("scorcher") is not ours.
    """
    client = name.split(":", 1)[0].strip().lower()
    prefix = client_prefix.lower()
    return client == prefix or client.startswith(prefix + "-")


def open_scanners(
    backend: str, client_prefix: str, jack_server: str | None = None
) -> tuple[str, int, rtmidi.MidiIn, rtmidi.MidiOut]:
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
                scan_in = rtmidi.MidiIn(api, name=f"{client_prefix}-scan")
                scan_out = rtmidi.MidiOut(api, name=f"{client_prefix}-scan")
                # Listing connects the backend's client now, to the server chosen above.
                scan_in.get_ports()
                scan_out.get_ports()
        except rtmidi.SystemError as err:  # e.g. no /dev/snd/seq, no JACK server
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
    raise MidiPortNotFound(f"no MIDI port matches {pattern!r}; ports are: {names}")


class InputPort:
    """One open input: an rtmidi client connected to the port called ``name``."""

    def __init__(self, api: int, name: str, client: str, callback: MessageCallback,
                 jack_server: str | None = None) -> None:
        self.name = name
        with client_environment(jack_server):
            self._midi: rtmidi.MidiIn | None = rtmidi.MidiIn(api, name=client)
            self._open(name, callback)

    def _open(self, name: str, callback: MessageCallback) -> None:
        assert self._midi is not None
        try:
            ports = self._midi.get_ports()
            if name not in ports:
                raise MidiPortNotFound(f"MIDI input {name!r} went away before it was opened")
            # Sysex, clock and active sensing are dropped in C++: a sysex flood costs nothing.
            self._midi.ignore_types(sysex=True, timing=True, active_sense=True)
            self._midi.set_callback(lambda event, _data: callback(name, event[0]))
            self._midi.open_port(ports.index(name), "in")
        except BaseException:
            self.close()
            raise

    @classmethod
    def virtual(cls, api: int, name: str, callback: MessageCallback,
                jack_server: str | None = None) -> InputPort:
        """Open scorch's own input that other software can play."""
        port = cls.__new__(cls)
        port.name = name
        with client_environment(jack_server):
            port._midi = rtmidi.MidiIn(api, name=name)
            port._midi.ignore_types(sysex=True, timing=True, active_sense=True)
            port._midi.set_callback(lambda event, _data: callback(name, event[0]))
            port._midi.open_virtual_port(name)
        return port

    def close(self) -> None:
        """Stop callbacks and release the rtmidi client (and its JACK/ALSA client)."""
        midi, self._midi = self._midi, None
        if midi is not None:
            # Port first: once it is gone the backend's thread stops calling back, so the
            # callback is never dropped while it runs.
            midi.close_port()
            midi.cancel_callback()
            midi.delete()


class OutputPort:
    """One open output port, found by name."""

    def __init__(self, api: int, name: str, client: str, jack_server: str | None = None) -> None:
        self.name = name
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

    def send(self, data: list[int] | bytes) -> None:
        """Send one message's bytes."""
        if self._midi is None:
            raise MidiPortNotFound(f"MIDI output {self.name!r} is closed")
        self._midi.send_message(data)

    def close(self) -> None:
        """Release the rtmidi client."""
        midi, self._midi = self._midi, None
        if midi is not None:
            midi.close_port()
            midi.delete()
