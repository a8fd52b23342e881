"""The one MIDI port contract: what every backend's inputs, outputs and listings offer.

A backend (:mod:`midi.io.backends`, chosen by name) opens ports by their full
name (``client:port``), never by number (numbers shift whenever a device is
plugged in). An input is a queue of ``(bytes, seconds since the one before)``
that its reader takes from (:meth:`InputPort.take`); no backend calls Python
from its own thread (a callback waits for the GIL in JACK's process thread, and
JACK drops that cycle's MIDI). A backend whose inputs can say "MIDI came" rings
the :class:`Wake` it was opened with, and its reader sleeps until then; the
others' inputs are polled. An output sends one message's bytes from any thread.
A backend may offer inputs only (:class:`Inputs`); a whole one
(:class:`Backend`) also lists ports and opens outputs.

Errors are scorch's own: :class:`~scorch.errors.MidiPortNotFound` for a port that
is not there (or went away), :class:`~scorch.errors.MidiBackendError` for a backend
that cannot open (or open a port), each naming the port or backend.
"""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable

from midi.batch import Message
from scorch.errors import MidiPortNotFound


class Wake:
    """An eventfd that every input adds to when it brought MIDI; one reader."""

    def __init__(self) -> None:
        self.fd = os.eventfd(0, os.EFD_CLOEXEC)

    def wait(self) -> None:
        """Block (without the GIL) until some input brought MIDI or :meth:`set` was called."""
        os.eventfd_read(self.fd)

    def set(self) -> None:
        """Wake the reader."""
        os.eventfd_write(self.fd, 1)

    def close(self) -> None:
        """Release the eventfd (after the reader stopped and every input closed)."""
        os.close(self.fd)


class InputPort(Protocol):
    """One open input: a queue of the messages that came in, taken by one reader thread."""

    name: str
    """The port it listens to (its own name, for a virtual input)."""
    port_name: str
    """Its own port's full name, as other software sees it (``client:port``)."""
    timing: bool
    """Clock, start, stop and song position are let through (the clock-in port)."""
    taken: int
    """Messages taken so far."""
    closed: bool

    def take(self) -> list[Message]:
        """Return every message queued so far, oldest first (one thread at a time)."""
        ...

    def stop(self) -> None:
        """Stop receiving (what is queued can still be taken)."""
        ...

    def close(self) -> None:
        """Release the port and its client; nothing can be taken after."""
        ...


class OutputPort(Protocol):
    """One open output; any thread may send (one at a time)."""

    name: str

    def send(self, data: list[int] | bytes) -> None:
        """Send one message's bytes (MidiPortNotFound once closed)."""
        ...

    def close(self) -> None:
        """Release the port and its client."""
        ...


class Scanner(Protocol):
    """What lists one side's ports (sources or destinations) of a backend."""

    def get_ports(self) -> list[str]:
        """Return the ports' full names."""
        ...

    def delete(self) -> None:
        """Release the backend's client."""
        ...


@runtime_checkable
class Patchbay(Protocol):
    """A listing that also sees and breaks connections between ports (JACK's)."""

    def connections(self, port: str) -> list[str]:
        """Return the ports connected to ``port``."""
        ...

    def disconnect(self, source: str, destination: str) -> bool:
        """Break one connection; True if it was there."""
        ...


class Inputs(Protocol):
    """A backend's input side, opened on one system (an API, a JACK server)."""

    name: str
    """The backend's name in :mod:`midi.io.backends`."""
    wakes: bool
    """Its inputs ring the :class:`Wake` the backend was opened with: no poll needed."""
    tells_ports: bool
    """Its virtual input rings the ``told`` Wake whenever a port comes or goes."""

    def open_input(self, name: str, client: str, timing: bool = False) -> InputPort:
        """Open a client called ``client`` listening to the port ``name`` (full name)."""
        ...

    def open_virtual(self, name: str, told: Wake | None = None) -> InputPort:
        """Open scorch's own input called ``name`` that other software can play."""
        ...

    def close(self) -> None:
        """Release what the backend holds besides its ports (those close on their own)."""
        ...


class Backend(Inputs, Protocol):
    """A whole backend: inputs, outputs, and the ports there are."""

    api: str
    """The system it opened on (``jack``, ``alsa``, ``coremidi``, ``winmm``)."""
    scan_in: Scanner
    """Lists the ports an input can listen to."""
    scan_out: Scanner
    """Lists the ports an output can send to."""

    def open_output(self, name: str, client: str) -> OutputPort:
        """Open a client called ``client`` sending to the port ``name`` (full name)."""
        ...


def own_port(name: str, client_prefix: str) -> bool:
    """Return True for ports of scorch's own clients (never open them: feedback).

    scorch's clients are called ``PREFIX`` or ``PREFIX-something``; a device
    whose name merely starts with the same letters ("scorcher") is not ours.
    """
    client = name.split(":", 1)[0].strip().lower()
    prefix = client_prefix.lower()
    return client == prefix or client.startswith(prefix + "-")


def find_port(names: list[str], pattern: str) -> str:
    """Return the first of ``names`` containing ``pattern`` (case-insensitive)."""
    for name in names:
        if pattern.lower() in name.lower():
            return name
    raise MidiPortNotFound(f"no MIDI port matches {pattern!r}; ports are: {names}",
                           name=pattern, known=names)
