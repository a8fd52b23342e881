"""Stand-ins for what the MIDI router meets: a controller on a JACK port, and its targets."""

from __future__ import annotations

import threading

import rtmidi

from scorch.primitives.system.jackd import client_environment
from scorch.state.bus import Bus, Published
from scorch.state.changes import ParamsChanged
from tests.support.harness import Scsynth

#: The id of the node the router tests play on their own scsynths.
PAD_ID = 3 * 2**26


class Hardware:
    """A MIDI controller: a JACK virtual output port the router sees as a device.

    ``jack_server``: open it on that server (an orchestra's own); None: the one
    the environment names.
    """

    def __init__(self, port: str, client: str = "fakehw", jack_server: str | None = None) -> None:
        with client_environment(jack_server):
            self.midi = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name=client)
            self.midi.open_virtual_port(port)
        self.name = f"{client}:{port}"

    def send(self, *data: int) -> None:
        self.midi.send_message(list(data))

    def unplug(self) -> None:
        self.midi.close_port()
        self.midi.delete()


class FakeTargets:
    """Targets over scsynths this test started: groups, endpoints, desired state."""

    def __init__(self, servers: dict[str, Scsynth]) -> None:
        self.servers = servers
        self.down: set[str] = set()
        self.desired: dict[tuple[str, str, str], float] = {}
        """The values the router announced on :attr:`bus`, as a room would keep them."""
        self.reported = threading.Event()
        self.cues: list[tuple[str, str, str, float]] = []
        self.bus = Bus()
        """The router's change bus (``start_router`` gives it)."""
        self.bus.subscribe(self._kept, "fake-rooms", lambda c: type(c) is ParamsChanged)

    def resolve(self, selector: str) -> list[str]:
        if selector in ("*", "both"):
            return sorted(self.servers)
        if selector in self.servers:
            return [selector]
        raise KeyError(f"no room or group called {selector!r}")

    def endpoint(self, room: str) -> tuple[str, int] | None:
        return None if room in self.down else self.servers[room].address

    def node_id(self, room: str, node: str) -> int | None:
        return PAD_ID if node == "pad" and room not in self.down else None

    def _kept(self, published: Published) -> None:
        change = published.change
        assert isinstance(change, ParamsChanged)
        for param, value in change.params.items():
            self.desired[(change.room, change.node, param)] = value
        self.reported.set()

    def scene(self, kind: str, scene: str, room: str, value: float) -> None:
        self.cues.append((kind, scene, room, value))
