"""The one door to a room's scsynth: every call from outside the room's actor goes through it.

The room's actor owns the scsynth process and its
:class:`~scorch.primitives.scsynth.client.OscClient`; it :meth:`~ScsynthDoor.open`\\ s the
door on each new client and :meth:`~ScsynthDoor.shut`\\ s it when that scsynth goes. Anyone
else (the watchdog's pings, the meters, recordings, ``playing``, MIDI panic, a status)
holds the door, never a client: across a restart the door forwards to the scsynth of the
moment, or raises the room's own error (BOOTING, RESTARTING, FAILED...) while there is
none. Thread-safe: each call takes the client of the moment once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from scorch.errors import ScorchError
from scorch.primitives.osc import OscArg, OscMessage
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.client import Expected, Match, OscClient, ServerStatus
from scorch.primitives.scsynth.node_tree import TreeNode, tree_nodes

Listener = Callable[[OscMessage], None]


class ScsynthDoor:
    """A room's scsynth as everyone but its actor reaches it."""

    def __init__(self, room: str, closed: Callable[[], ScorchError]) -> None:
        self.room = room
        self._closed = closed
        """The error a call meets while no scsynth runs (the room's state says why)."""
        self._client: OscClient | None = None
        self._lock = threading.Lock()
        self._generation = 0
        self._listeners: dict[str, Listener] = {}

    # --- the owner's side (the room's actor) ----------------------------------------------

    def open(self, client: OscClient) -> None:
        """Forward to ``client`` from now on (a new scsynth is up)."""
        with self._lock:
            # Its owner's own (the stage's readings, set at boot) join the shared ones.
            self._listeners.update(client.listeners)
            client.listeners = self._listeners  # shared: a listener outlives its scsynth
            self._client = client
            self._generation += 1

    def shut(self) -> None:
        """The scsynth went: calls raise the room's error until the next :meth:`open`."""
        with self._lock:
            self._client = None

    # --- everyone's --------------------------------------------------------------------

    @property
    def generation(self) -> int:
        """Counts the scsynths opened: a new value is a new process (nothing of the last)."""
        return self._generation

    @property
    def is_open(self) -> bool:
        """True while a scsynth runs behind it."""
        return self._client is not None

    def _now(self) -> OscClient:
        client = self._client
        if client is None:
            raise self._closed()
        return client

    def send(self, packet: bytes) -> None:
        """Send an encoded packet (``scorch.primitives.scsynth.commands``); never blocks."""
        self._now().send(packet)

    def at(self, when: float, *packets: bytes) -> None:
        """Send ``packets`` in one bundle that scsynth performs at Unix time ``when``."""
        self._now().send(commands.at(when, *packets))

    def exchange(self, packet: bytes, command: str, reply: str, timeout: float,
                 match: Match | None = None) -> OscMessage:
        """Send an encoded ``command`` and wait for ``reply`` (OscFailure on its /fail)."""
        return self._now().exchange(packet, command, reply, timeout, match)

    def request(self, address: str, *args: OscArg, reply: str, timeout: float,
                match: Match | None = None) -> OscMessage:
        """Send a message and wait for the reply named ``reply`` (or a /fail for it)."""
        return self._now().request(address, *args, reply=reply, timeout=timeout, match=match)

    def expect(self, reply: str, match: Match | None = None) -> Expected:
        """Wait for a message from now on, of the scsynth of the moment (see OscClient.expect)."""
        return self._now().expect(reply, match)

    def status(self, timeout: float = 1.0) -> ServerStatus:
        """Ask ``/status`` and return its fields."""
        return self._now().status(timeout)

    def sync(self, timeout: float = 5.0) -> None:
        """Wait until scsynth performed every asynchronous command sent before."""
        self._now().sync(timeout)

    def query_tree(self, group: int = 0, timeout: float = 2.0) -> list[TreeNode]:
        """Every node of ``group``'s tree (the root's: all), depth first (``/g_queryTree``,
        no control values)."""
        reply = self.request(commands.Cmd.G_QUERY_TREE, group, 0,
                             reply=commands.Reply.QUERY_TREE, timeout=timeout)
        return tree_nodes(reply.args)

    def s_get(self, node_id: int, *controls: str, timeout: float = 2.0) -> dict[str, float]:
        """The values of ``controls`` of node ``node_id`` now (``/s_get``); OscFailure when
        the node is not there."""
        reply = self.request(commands.Cmd.S_GET, node_id, *controls, reply=commands.Reply.N_SET,
                             timeout=timeout, match=lambda m: m.args[:1] == (node_id,))
        args = reply.args[1:]
        return {str(args[i]): float(args[i + 1])  # type: ignore[arg-type]
                for i in range(0, len(args) - 1, 2)}

    @property
    def last_status(self) -> ServerStatus | None:
        """The latest ``/status.reply`` of the scsynth of the moment (None: none yet, or down)."""
        client = self._client
        return client.last_status if client is not None else None

    @property
    def last_heard(self) -> float:
        """``time.monotonic()`` of the last packet from the scsynth of the moment (0: none)."""
        client = self._client
        return client.last_heard if client is not None else 0.0

    @property
    def last_synths(self) -> list[tuple[int, str]] | None:
        """(node id, SynthDef) of every synth the scsynth of the moment runs, as far as it
        said (None before its first node tree, or while down): what a crash would lose."""
        client = self._client
        return client.last_synths if client is not None else None

    def listen(self, address: str, listener: Listener) -> None:
        """Tell ``listener`` each message of ``address`` (in the receive thread), from this
        scsynth and the next ones, until :meth:`unlisten`."""
        self._listeners[address] = listener

    def unlisten(self, address: str) -> None:
        """Stop telling the listener of ``address``."""
        self._listeners.pop(address, None)
