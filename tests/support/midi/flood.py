"""A MIDI controller in its own process, flooding a JACK MIDI port (tests and benchmarks).

The controller runs in a separate process, as hardware would: its sending loop
never competes with the receivers for this process's GIL. It opens a virtual
output port ``floodhw:keys`` on the JACK server given, then obeys commands:

- ``flood``: control changes at a rate over 16 controllers, with a note-on/note-off
  pair after every ``note_every`` of them (notes cycle over four octaves);
- ``raw``: a list of messages as they are, garbage included.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

CONTROLLERS = 16
PORT = "floodhw:keys"


@dataclass(frozen=True)
class Flood:
    """What one flood sent."""

    controls: int
    notes: int
    """Note-on/note-off pairs."""
    elapsed: float
    last: dict[int, int]
    """The last value sent per controller number."""

    @property
    def messages(self) -> int:
        """Every message sent."""
        return self.controls + 2 * self.notes


def _controller(conn: Any, jack: str) -> None:
    os.environ["JACK_DEFAULT_SERVER"] = jack
    os.environ["JACK_NO_START_SERVER"] = "1"
    import rtmidi

    out = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="floodhw")
    out.open_virtual_port("keys")
    conn.send("ready")
    while True:
        command = conn.recv()
        if command[0] == "flood":
            conn.send(_flood(out, *command[1:]))
        elif command[0] == "raw":
            for message in command[1]:
                out.send_message(message)
                if command[2]:
                    time.sleep(command[2])
            conn.send(len(command[1]))
        else:
            break
    out.close_port()
    out.delete()


def _flood(out: Any, rate: int, seconds: float, note_every: int, seed: int) -> Flood:
    rng = random.Random(seed)
    total = int(rate * seconds)
    batch = max(1, rate // 1000)  # one batch per millisecond, as a busy controller sends
    last: dict[int, int] = {}
    sent = notes = 0
    start = time.perf_counter()
    while sent < total:
        for _ in range(min(batch, total - sent)):
            cc = 1 + sent % CONTROLLERS
            value = rng.randrange(128)
            out.send_message([0xB0, cc, value])
            last[cc] = value
            sent += 1
            if sent % note_every == 0:
                note = 36 + notes % 48
                out.send_message([0x90, note, 100])
                out.send_message([0x80, note, 0])
                notes += 1
        ahead = start + sent / rate - time.perf_counter()
        if ahead > 0:
            time.sleep(ahead)
    return Flood(sent, notes, time.perf_counter() - start, last)


class FloodController:
    """The controller process; a context manager that stops it."""

    def __init__(self, jack: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_controller, args=(child, jack), daemon=True)
        self._process.start()
        if not self._conn.poll(30) or self._conn.recv() != "ready":
            self.close()
            raise RuntimeError("the flood controller did not open its port")

    def flood(self, rate: int, seconds: float, note_every: int = 40, seed: int = 7) -> Flood:
        """Send control changes at ``rate`` per second for ``seconds``, notes among them."""
        self._conn.send(("flood", rate, seconds, note_every, seed))
        result: Flood = self._conn.recv()
        return result

    def raw(self, messages: list[list[int]], spacing: float = 0.0) -> int:
        """Send ``messages`` as they are (``spacing`` seconds apart); return how many."""
        self._conn.send(("raw", messages, spacing))
        count: int = self._conn.recv()
        return count

    def close(self) -> None:
        """Stop the process (it closes its port first)."""
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(("quit",))
            self._process.join(10)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(5)

    def __enter__(self) -> FloodController:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
