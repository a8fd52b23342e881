"""A UDP OSC client for one scsynth: send, and wait for replies with timeouts."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from scorch.errors import OscError, OscFailure, OscTimeout, ServerGone
from scorch.primitives.osc import OscArg, OscMessage, decode_packet, encode_message
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.commands import Cmd, Reply
from scorch.primitives.scsynth.node_tree import LiveSynths, tree_synths
from scorch.primitives.scsynth.wire import UdpWire, Wire

log = logging.getLogger(__name__)

Match = Callable[[OscMessage], bool]

#: The whole node tree, without control values (what a crash lost is read from it).
TREE = encode_message(Cmd.G_QUERY_TREE, 0, 0)
#: Seconds between two node trees asked for because synths started.
TREE_GAP = 0.1
#: The node notifications :attr:`OscClient.on_notice` is told.
NOTICES = frozenset({"/n_go", "/n_end", "/n_off", "/n_move"})


@dataclass(frozen=True)
class ServerStatus:
    """The fields of a ``/status.reply``."""

    ugens: int
    synths: int
    groups: int
    synthdefs: int
    avg_cpu: float
    peak_cpu: float
    nominal_sample_rate: float
    actual_sample_rate: float

    @classmethod
    def from_reply(cls, msg: OscMessage) -> ServerStatus:
        """Read the reply's arguments (the first is an unused int)."""
        a = msg.args
        return cls(int(a[1] or 0), int(a[2] or 0), int(a[3] or 0), int(a[4] or 0),
                   float(a[5] or 0), float(a[6] or 0), float(a[7] or 0), float(a[8] or 0))


class _Waiter:
    def __init__(self, match: Match) -> None:
        self.match = match
        self.event = threading.Event()
        self.reply: OscMessage | None = None


class Expected:
    """A message someone waits for (see :meth:`OscClient.expect`)."""

    def __init__(self, client: OscClient, waiter: _Waiter) -> None:
        self._client = client
        self._waiter = waiter

    def wait(self, timeout: float) -> OscMessage | None:
        """The message once it came (within ``timeout`` seconds), else None; stays armed."""
        if self._waiter.event.wait(timeout):
            self._client._forget(self._waiter)
            return self._waiter.reply
        return None

    def cancel(self) -> None:
        """Stop waiting."""
        self._client._forget(self._waiter)


class OscClient:
    """Send OSC to one scsynth and route its replies to whoever waits for them.

    Its datagrams go over a :class:`~scorch.primitives.scsynth.wire.Wire`: a UDP socket
    to ``host``:``port`` unless another is given (a fake scsynth in tests).
    """

    def __init__(self, port: int, host: str = "127.0.0.1", name: str = "osc",
                 wire: Wire | None = None) -> None:
        self.address = (host, port)
        self._wire: Wire = wire if wire is not None else UdpWire(self.address)
        self._waiters: list[_Waiter] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._sync_ids = itertools.count(1)
        self._gone: str | None = None
        self.last_heard = 0.0
        """``time.monotonic()`` of the last packet from scsynth: any reply is a sign of life."""
        self.last_status: ServerStatus | None = None
        """The latest ``/status.reply`` anyone asked for (the watchdog asks often)."""
        self._live = LiveSynths()
        self._live_lock = threading.Lock()
        self._tree_seen = False
        self._track: Callable[[int], bool] | None = None
        self._tree_due = False
        self._tree_sent = 0.0
        self.on_node_end: Callable[[int], None] | None = None
        """Told each ended node's id, in the receive thread, once :meth:`notify` registered."""
        self.on_notice: Callable[[OscMessage], None] | None = None
        """Told each ``/n_go``, ``/n_end``, ``/n_off`` and ``/n_move``, in the receive thread,
        before anyone else (the keeper of the room's layout answers at once)."""
        self.listeners: dict[str, Callable[[OscMessage], None]] = {}
        """Told each message of their address, in the receive thread (meters' replies)."""
        self._thread = threading.Thread(target=self._receive, name=f"{name}-osc", daemon=True)
        self._thread.start()

    @property
    def last_synths(self) -> list[tuple[int, str]] | None:
        """(node id, SynthDef) of every synth scsynth runs, as far as it said (None before
        the first node tree): what a crash lost, once scsynth cannot say.

        From the last ``/g_queryTree.reply`` (the watchdog asks every few seconds) and,
        once :meth:`track_synths` is on, every node notification since.
        """
        with self._live_lock:
            return self._live.synths() if self._tree_seen else None

    @property
    def synth_starts(self) -> dict[int, float]:
        """The Unix time each of :attr:`last_synths` started, of those whose start was seen
        (what made a synth a crash lost is looked for by that time)."""
        with self._live_lock:
            return self._live.started()

    def track_synths(self, wanted: Callable[[int], bool]) -> None:
        """Keep :attr:`last_synths` current from node notifications (:meth:`notify` first):
        an ended synth leaves it at once, and a started one for which ``wanted(node_id)``
        holds has its SynthDef asked for with the next node tree (at most one every
        TREE_GAP seconds). Asks for a tree now."""
        self._track = wanted
        self._tree_sent = time.monotonic()
        self.send(TREE)

    def _notified(self, msg: OscMessage) -> None:
        with self._live_lock:
            started = self._live.notified(msg.address, msg.args, time.time())
        if started and self._track is not None and self._track(int(msg.args[0])):  # type: ignore[arg-type]
            self._tree_due = True

    def _ask_tree(self) -> None:
        """Ask for the tree a started synth made due, TREE_GAP after the last one."""
        now = time.monotonic()
        if self._tree_due and now - self._tree_sent >= TREE_GAP:
            self._tree_due = False
            self._tree_sent = now
            self.send(TREE)

    def send(self, packet: bytes) -> None:
        """Send an encoded packet (see ``scorch.primitives.scsynth.commands``); never blocks."""
        try:
            self._wire.send(packet)
        except OSError as err:
            log.debug("send to %s failed: %s", self.address, err)

    def request(
        self, address: str, *args: OscArg, reply: str, timeout: float, match: Match | None = None,
    ) -> OscMessage:
        """Send a message and wait for the reply named ``reply`` (or a /fail for it)."""
        return self.exchange(encode_message(address, *args), address, reply, timeout, match)

    def exchange(self, packet: bytes, command: str, reply: str, timeout: float,
                 match: Match | None = None) -> OscMessage:
        """Send an encoded ``command`` and wait for ``reply``; OscFailure on its /fail."""

        def matches(msg: OscMessage) -> bool:
            if msg.address == Reply.FAIL and msg.args and msg.args[0] == command:
                return True
            return msg.address == reply and (match is None or match(msg))

        waiter = _Waiter(matches)
        with self._lock:
            if self._gone is not None:
                raise ServerGone(f"no {reply}: {self._gone}")
            self._waiters.append(waiter)
        try:
            self.send(packet)
            if not waiter.event.wait(timeout):
                raise OscTimeout(f"no {reply} from scsynth at port {self.address[1]} "
                                 f"within {timeout:.2f} s")
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        if waiter.reply is None:
            raise ServerGone(f"no {reply}: {self._gone}")
        if waiter.reply.address == Reply.FAIL:
            raise OscFailure(f"{command}: {' '.join(str(a) for a in waiter.reply.args[1:])}")
        return waiter.reply

    def expect(self, reply: str, match: Match | None = None) -> Expected:
        """Start waiting for a message now, before sending what causes it (or without sending).

        Call :meth:`Expected.cancel` when it is no longer wanted, or it keeps its place.
        """
        waiter = _Waiter(lambda msg: msg.address == reply and (match is None or match(msg)))
        with self._lock:
            self._waiters.append(waiter)
        return Expected(self, waiter)

    def _forget(self, waiter: _Waiter) -> None:
        with self._lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def status(self, timeout: float = 1.0) -> ServerStatus:
        """Ask for ``/status`` and return the reply's fields."""
        return ServerStatus.from_reply(self.request(Cmd.STATUS, reply=Reply.STATUS,
                                                    timeout=timeout))

    def sync(self, timeout: float = 5.0) -> None:
        """Wait until scsynth has finished every asynchronous command sent before."""
        sync_id = next(self._sync_ids)
        self.request(Cmd.SYNC, sync_id, reply=Reply.SYNCED, timeout=timeout,
                     match=lambda m: bool(m.args) and m.args[0] == sync_id)

    def notify(self, client_id: int, timeout: float = 2.0) -> int:
        """Register for node notifications as ``client_id``; return the id scsynth gave."""
        reply = self.exchange(commands.notify(True, client_id), Cmd.NOTIFY, Reply.DONE, timeout,
                              match=lambda m: bool(m.args) and m.args[0] == Cmd.NOTIFY)
        return int(reply.args[1]) if len(reply.args) > 1 else client_id  # type: ignore[arg-type]

    def _receive(self) -> None:
        while not self._closed.is_set():
            # A node tree that a started synth made due is asked for TREE_GAP after the last
            # one even when no packet comes; otherwise the wait is for a packet alone.
            try:
                data = self._wire.receive(TREE_GAP if self._tree_due else None)
            except OSError:
                if self._closed.is_set():
                    return
                time.sleep(0.01)  # e.g. ICMP port unreachable while scsynth is down
                continue
            if data is None:  # only while a node tree is due: ask for it now
                self._ask_tree()
                continue
            if self._closed.is_set():
                return
            self.last_heard = time.monotonic()
            try:
                messages = decode_packet(data)
            except (OscError, ValueError) as err:
                log.warning("undecodable packet from scsynth: %s", err)
                continue
            for msg in messages:
                if self.on_notice is not None and msg.address in NOTICES:
                    try:
                        self.on_notice(msg)
                    except Exception:
                        log.exception("node notice handler failed")
                if self._track is not None and msg.address in (Reply.N_GO, Reply.N_END):
                    self._notified(msg)
                if msg.address == Reply.STATUS and len(msg.args) >= 9:
                    self.last_status = ServerStatus.from_reply(msg)
                elif msg.address == Reply.QUERY_TREE and len(msg.args) > 2 and msg.args[1] == 0:
                    try:
                        synths = tree_synths(msg.args)
                    except (IndexError, TypeError, ValueError):
                        log.warning("unreadable node tree from scsynth")
                    else:
                        with self._live_lock:
                            self._live.tree(synths)
                            self._tree_seen = True
                elif msg.address == Reply.N_END and self.on_node_end is not None:
                    try:
                        self.on_node_end(int(msg.args[0]))  # type: ignore[arg-type]
                    except Exception:
                        log.exception("node end handler failed")
                elif (listener := self.listeners.get(msg.address)) is not None:
                    try:
                        listener(msg)
                    except Exception:
                        log.exception("listener of %s failed", msg.address)
                with self._lock:
                    for waiter in self._waiters:
                        if not waiter.event.is_set() and waiter.match(msg):
                            waiter.reply = msg
                            waiter.event.set()
                            break
            self._ask_tree()

    def abandon(self, reason: str) -> None:
        """The scsynth behind this client is gone: end every wait now, and refuse new ones."""
        with self._lock:
            self._gone = reason
            for waiter in self._waiters:
                waiter.event.set()

    def close(self) -> None:
        """Stop the receive thread and close the socket."""
        self._closed.set()
        self._wire.wake()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=1)
        self._wire.close()
