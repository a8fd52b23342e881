"""The MIDI ports the router holds open, found by name and followed through hotplug.

:class:`PortSet` belongs to the router actor and runs only in its thread: each
:meth:`PortSet.rescan` opens the inputs and outputs that match what the routes
and the config ask for, and closes those that went away. Devices plugged in
later, or plugged back, are picked up on the next rescan.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from midi import port_matches
from midi.io import (
    InputPort,
    OutputPort,
    Patchbay,
    Wake,
    find_port,
    open_backend,
    open_inputs,
    own_port,
)
from scorch.errors import MidiBackendError, MidiPortNotFound

log = logging.getLogger(__name__)

#: What opening a port can raise (the contract's errors): no such port, or one gone since
#: it was listed; the backend failing to open it.
OPEN_ERRORS = (MidiPortNotFound, MidiBackendError)
#: Seconds between two JACK clients the router closes (:meth:`PortSet.close`).
SETTLE = 0.05


class PortSet:
    """Open MIDI inputs and outputs of one backend (router actor thread only).

    ``backend`` is the config's (python-rtmidi's API, or ``auto``): the whole backend
    ``rtmidi/<backend>`` lists the ports and opens the outputs; the inputs open through
    the backend :func:`~midi.io.open_inputs` picks beside it.
    """

    def __init__(self, backend: str, client: str, jack_server: str | None,
                 clock_in: str | None = None, wake: Wake | None = None) -> None:
        self._client = client
        self._clock_in = clock_in
        """The input whose clock, start, stop and song position are let through."""
        self._io = open_backend(f"rtmidi/{backend}", client, jack_server, wake)
        try:
            self._inputs = open_inputs(self._io, client, jack_server, wake)
        except BaseException:
            self._io.close()
            raise
        self.backend = self._io.api
        self.native = self._inputs.wakes
        """Inputs wake ``wake`` when MIDI came (scorch's own JACK clients), else are polled."""
        self.told: Wake | None = None
        """Woken whenever a port comes or goes on the server (by the virtual input's own
        client, when it is scorch's), or None: the ports are looked at on a timer."""
        self.inputs: dict[str, InputPort] = {}
        self.outputs: dict[str, OutputPort] = {}
        self.missing: dict[str, list[str]] = {"inputs": [], "outputs": []}
        self.virtual: str | None = None
        self._virtual_port: str | None = None
        """The virtual input's full JACK name (``scorch:scorch``)."""
        self.one_path: list[str] = []
        """Sources the router reads directly that were also connected to its virtual input,
        whose connection there it broke (each played every note twice)."""

    def open_virtual(self, name: str) -> None:
        """Open scorch's own input port that other software can play."""
        told = Wake() if self._inputs.tells_ports else None
        try:
            own = self._inputs.open_virtual(name, told)
        except BaseException:
            if told is not None:
                told.close()
            raise
        self.inputs[name], self.told, self._virtual_port = own, told, own.port_name
        self.virtual = name

    def available(self) -> dict[str, list[str]]:
        """Every input and output the system offers now."""
        return {"inputs": self._io.scan_in.get_ports(), "outputs": self._io.scan_out.get_ports()}

    def gone(self) -> list[InputPort]:
        """Remove and return the open inputs that are no longer there (not yet closed).

        One listing of the ports: cheap enough to run several times a second, so a
        keyboard unplugged with keys held is noticed at once.
        """
        available = set(self._io.scan_in.get_ports())
        return [self.inputs.pop(name) for name in list(self.inputs)
                if name != self.virtual and name not in available]

    def rescan(self, wanted_inputs: list[str], wanted_outputs: list[str],
               more_outputs: Callable[[list[str], list[str]], list[str]] | None = None,
               ) -> list[InputPort]:
        """Open what matches ``wanted_*``; return the inputs that went away (not yet closed).

        ``more_outputs``: told the inputs and outputs there are (one listing), names more
        outputs to open (the devices' own, for feedback). The caller closes the inputs
        that went away once it has taken what they still hold.
        """
        available = [p for p in self._io.scan_in.get_ports() if not own_port(p, self._client)]
        gone = [self.inputs.pop(name) for name in list(self.inputs)
                if name != self.virtual and name not in available]
        for name in available:
            if name in self.inputs or not any(port_matches(p, name) for p in wanted_inputs):
                continue
            try:
                timing = self._clock_in is not None and port_matches(self._clock_in, name)
                self.inputs[name] = self._open_input(name, timing)
            except OPEN_ERRORS as err:
                log.warning("MIDI input %r not opened: %s", name, err)
                continue
            log.info("MIDI input %r opened%s", name, " (clock in)" if timing else "")
        self.missing["inputs"] = sorted(
            {p for p in wanted_inputs
             if p != "*" and not any(port_matches(p, n) for n in available)})
        self._one_path()
        try:
            self._rescan_outputs(wanted_outputs, available, more_outputs)
        except OPEN_ERRORS as err:  # the inputs that went away must still be retired
            log.warning("MIDI outputs not rescanned: %s", err)
        return gone

    def _one_path(self) -> None:
        """Let each source reach the router by one path, the one that carries its name.

        A device (or a program) that connects itself to scorch's virtual input while the
        router opens it too sends every message twice: each note captured twice, each key
        route's voice started twice. The connection to the virtual input is broken; JACK
        only (its listing client may disconnect without being active).
        """
        virtual, scanner = self._virtual_port, self._io.scan_in
        if virtual is None or not isinstance(scanner, Patchbay):
            return
        for source in scanner.connections(virtual):
            if source in self.inputs and scanner.disconnect(source, virtual):
                log.warning("MIDI input %r was also connected to scorch's own input %r: "
                            "that connection is broken, the router reads it directly",
                            source, virtual)
                if source not in self.one_path:
                    self.one_path.append(source)

    def _open_input(self, name: str, timing: bool) -> InputPort:
        return self._inputs.open_input(name, f"{self._client}-in", timing)

    def _rescan_outputs(self, wanted: list[str], inputs: list[str] | None = None,
                        more: Callable[[list[str], list[str]], list[str]] | None = None,
                        ) -> None:
        available = self._outputs_available()
        if more is not None:
            wanted = [*wanted, *more(inputs or [], available)]
        for name in list(self.outputs):
            if name not in available:
                log.warning("MIDI output %r disappeared", name)
                self.outputs.pop(name).close()
        missing = []
        for pattern in wanted:
            if any(port_matches(pattern, n) for n in self.outputs):
                continue
            try:
                self._open_output(find_port(available, pattern))
            except OPEN_ERRORS:
                missing.append(pattern)
        self.missing["outputs"] = missing

    def _outputs_available(self) -> list[str]:
        return [p for p in self._io.scan_out.get_ports() if not own_port(p, self._client)]

    def _open_output(self, name: str) -> OutputPort:
        port = self.outputs[name] = self._io.open_output(name, f"{self._client}-out")
        log.info("MIDI output %r opened", name)
        return port

    def output(self, pattern: str) -> OutputPort:
        """The open output matching ``pattern``, opened now if it is there but not open.

        MidiPortNotFound names every port that can be sent to, scorch's own input first.
        """
        for name, port in self.outputs.items():
            if port_matches(pattern, name):
                return port
        try:
            return self._open_output(find_port(self._outputs_available(), pattern))
        except MidiPortNotFound:
            targets = self.targets()
            raise MidiPortNotFound(f"no MIDI port matches {pattern!r}; ports that can be sent "
                                   f"to: {', '.join(targets) or 'none'}", name=pattern,
                                   known=targets) from None

    def own_input(self, pattern: str) -> str | None:
        """The virtual input's name when ``pattern`` names it (scorch's own input, which
        ``send`` plays as if its notes came in there), else None.

        Its name or full name (``scorch``, ``scorch:scorch``) always; a part of its name
        only when no output matches.
        """
        virtual, full = self.virtual, self._virtual_port
        if virtual is None or full is None:
            return None
        if pattern.lower() in (virtual.lower(), full.lower()):
            return virtual
        if not port_matches(pattern, full) or any(port_matches(pattern, n) for n in
                                                   [*self.outputs, *self._outputs_available()]):
            return None
        return virtual

    def targets(self) -> list[str]:
        """The ports ``send`` reaches: scorch's own input (full name) and every output."""
        own = [self._virtual_port] if self._virtual_port is not None else []
        return own + sorted({*self.outputs, *self._outputs_available()})

    def close(self) -> None:
        """Close the scanners and every port, one JACK client at a time.

        JACK tells every other client of each close, on its notification thread, and
        libjack closes a client by cancelling that thread wherever it is: one cancelled
        while it handles a notification can end the process (jack2 issue #964). So the
        scanners go first, while nothing else closes, and each port after a pause that
        lets the others take what the last close told them.
        """
        self._io.close()
        if self._inputs is not self._io:
            self._inputs.close()
        ports: list[InputPort | OutputPort] = [*self.inputs.values(), *self.outputs.values()]
        for port in ports:
            time.sleep(SETTLE)
            port.close()
        self.inputs.clear()
        self.outputs.clear()
        if self.told is not None:  # after the clients: none can write to it any more
            self.told.close()
            self.told = None

    def describe(self) -> dict[str, Any]:
        """Open inputs and outputs, the configured names that match nothing, and what exists."""
        return {"backend": self.backend, "inputs": sorted(self.inputs),
                "outputs": sorted(self.outputs), "send_to": self.targets(),
                **({"unlinked": list(self.one_path)} if self.one_path else {}),
                "missing": {k: list(v) for k, v in self.missing.items()},
                "available": self.available()}
