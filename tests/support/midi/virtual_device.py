"""A controller as JACK shows it: one client named as the device, with its two ports.

Like a USB controller under PipeWire's JACK, the client is the device's name and its
ports are ``(capture_0) PORT`` (what the device sends: the router's input) and
``(playback_0) PORT`` (what the router sends it: its LEDs). The client runs in a
process of its own (JACK-Client's process callback is Python, and libjack cancels
that thread when a client closes: never in the test's own process). It records
every message it receives with the time it came, and can echo each one back as
input, as a device with a MIDI thru (or a loop through other software) would.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

#: Seconds to wait for the device's process to start or stop.
WAIT = 10.0

#: (JACK client, port) of each profile's device, as a USB device of that model shows.
DEVICES = {
    "korg-nanokontrol2": ("nanoKONTROL2", "nanoKONTROL2 nanoKONTROL2 _ CTR"),
    "novation-launch-control-xl": ("Launch Control XL", "Launch Control XL MIDI 1"),
    "akai-apc-mini-mk2": ("APC mini mk2", "APC mini mk2 APC mini mk2 Contr"),
    "behringer-x-touch-mini": ("X-TOUCH MINI", "X-TOUCH MINI MIDI 1"),
    "arturia-beatstep": ("Arturia BeatStep", "Arturia BeatStep MIDI 1"),
    "novation-launchpad-mini-mk3": ("Launchpad Mini MK3", "Launchpad Mini MK3 LPMiniMK3 MI"),
}


def _run(client_name: str, port: str, server: str | None, echo: bool,
         conn: Connection) -> None:
    """The device's process: a JACK client that sends what it is told and reports what
    it gets."""
    import jack

    client = jack.Client(client_name, servername=server, no_start_server=True)
    out = client.midi_outports.register(f"(capture_0) {port}")
    into = client.midi_inports.register(f"(playback_0) {port}")
    # deques, not a lock: the process callback must never wait for the other thread (a
    # client late for its cycle loses that cycle's MIDI).
    outgoing: collections.deque[bytes] = collections.deque()
    got: collections.deque[tuple[int, bytes]] = collections.deque()
    echoing = [echo]

    @client.set_process_callback
    def process(_frames: int) -> None:
        out.clear_buffer()
        now = time.monotonic_ns()
        for _offset, data in into.incoming_midi_events():
            message = bytes(data)
            got.append((now, message))
            if echoing[0]:
                out.write_midi_event(0, message)
        while outgoing:
            out.write_midi_event(0, outgoing.popleft())

    client.activate()
    conn.send(("ready", client.name))
    try:
        while True:
            if conn.poll(0.01):
                command = conn.recv()
                if command is None:
                    break
                if command[0] == "send":
                    outgoing.append(command[1])
                elif command[0] == "echo":
                    echoing[0] = command[1]
            while got:
                conn.send(("got", *got.popleft()))
    finally:
        client.deactivate()
        client.close()
        conn.send(("closed", ""))


class VirtualDevice:
    """A controller on JACK: ``send`` moves its controls, ``received`` is what it was sent."""

    def __init__(self, client: str, port: str, server: str | None, echo: bool = False) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_run, args=(client, port, server, echo, child),
                                        daemon=True, name=f"device-{client}")
        self._process.start()
        child.close()
        self._lock = threading.Lock()
        self._received: list[tuple[int, bytes]] = []
        if not self._conn.poll(WAIT):
            self.close()
            raise AssertionError(f"the virtual {client} did not start")
        kind, name = self._conn.recv()
        assert kind == "ready", kind
        self.client = name
        self.input = f"{name}:(capture_0) {port}"
        """The router's input: what the device sends."""
        self.output = f"{name}:(playback_0) {port}"
        """The router's output: what the device is sent."""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                item = self._conn.recv()
            except (EOFError, OSError):
                return
            if item[0] == "got":
                with self._lock:
                    self._received.append((item[1], item[2]))
            elif item[0] == "closed":
                return

    def send(self, *data: int) -> None:
        """The device sends one message (a control moved)."""
        self._conn.send(("send", bytes(data)))

    def echo(self, on: bool) -> None:
        """Send back every message the device gets, or stop."""
        self._conn.send(("echo", on))

    def received(self) -> list[tuple[int, bytes]]:
        """Every message the device got so far: (monotonic ns when it came, bytes)."""
        with self._lock:
            return list(self._received)

    def messages(self) -> list[bytes]:
        """The bytes of every message the device got so far."""
        return [data for _t, data in self.received()]

    def clear(self) -> None:
        """Forget what was received so far."""
        with self._lock:
            self._received.clear()

    def wait_for(self, wanted: Callable[[list[bytes]], Any], timeout: float = 5.0) -> Any:
        """Wait until ``wanted(messages)`` is true; return what it said."""
        deadline = time.monotonic() + timeout
        while True:
            found = wanted(self.messages())
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.client} got {[m.hex(' ') for m in self.messages()]}")
            time.sleep(0.005)

    def close(self) -> None:
        """Unplug the device: its client leaves JACK."""
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self._process.join(WAIT)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(WAIT)
        # The reader ends on the process's "closed" or its end of the pipe closing; closing
        # ours under a recv in progress fails inside multiprocessing instead.
        self._reader.join(WAIT)
        self._conn.close()
