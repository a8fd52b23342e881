"""Other hosts' rooms that this host's MIDI routes play: where they are, learned in the background.

A controller plugged into one host may drive a room on another. The router
sends that room's OSC over the LAN straight to its scsynth, at the address of
its host and the room's port; it needs to know, without waiting, whether the
room is READY, on which port, and the ids of its named nodes. :class:`HostRooms`
learns that from the room's host (its ``status``, through the same channels a
coordinator uses) in a thread of its own, a host at a time every second while
it answers, less often while it does not.

The values the router sent there are announced on this host's change bus like any
others; :class:`HostRooms` takes those of rooms of other hosts and hands them, in
batches, to each room's host (``publish``), where they are announced on its bus as
its own router's are: its room keeps them for its restores, its page, panel and
router see them. As values already sent, not as ``set`` calls: a ``set`` would send
them to scsynth a second time, be journaled (``undo`` would step through knob
moves, which this host's own MIDI never journals) and fill the history.

Only the hosts of rooms the router has asked about are polled.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from scorch.config import Config
from scorch.errors import ScorchError
from scorch.hosts.channel import Channel, open_channel
from scorch.hosts.link import HostLink
from scorch.state import Bus, ParamsChanged, Published, Subscription, encode
from scorch.wire import PUBLISH

log = logging.getLogger(__name__)

#: Seconds between two looks at a host that answers; the longest wait for one that does not.
POLL = 1.0
MAX_WAIT = 10.0
#: Seconds between two batches of values handed to their rooms' hosts.
REPORT = 0.25
#: Seconds a host may take to answer a poll.
TIMEOUT = 2.0


@dataclass
class _Room:
    """What is known of one remote room."""

    endpoint: tuple[str, int] | None = None
    nodes: dict[str, int] = field(default_factory=dict)


class HostRooms:
    """Rooms of other hosts for this host's MIDI router (thread-safe; its own thread)."""

    def __init__(self, config: Config, on_change: Callable[[], None],
                 opener: Callable[[str | None, Config], Channel] = open_channel,
                 poll: float = POLL, bus: Bus | None = None) -> None:
        self._config = config
        self._on_change = on_change
        self._opener = opener
        self._poll = poll
        self._rooms: dict[str, _Room] = {}
        self._wanted: set[str] = set()
        self._links: dict[str | None, HostLink] = {}
        self._next_try: dict[str | None, float] = {}
        self._waits: dict[str | None, float] = {}
        self._values: dict[tuple[str, str], dict[str, float]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._sent: Subscription | None = None
        if bus is not None:
            self._sent = bus.subscribe(self._sent_there, "other-hosts", self._theirs)
        self._thread = threading.Thread(target=self._run, name="remote-rooms", daemon=True)
        self._thread.start()

    # --- what the router asks (never waits) ---------------------------------------------

    def endpoint(self, room: str) -> tuple[str, int] | None:
        """The room's scsynth address while READY (None until learned, or not READY)."""
        with self._lock:
            if room not in self._wanted:
                self._wanted.add(room)
                self._wake.set()
            there = self._rooms.get(room)
            return there.endpoint if there is not None else None

    def node_id(self, room: str, node: str) -> int | None:
        """A named node's id there, as last learned."""
        with self._lock:
            there = self._rooms.get(room)
            return there.nodes.get(node) if there is not None else None

    def _theirs(self, change: object) -> bool:
        """Values this host's router sent to a room of another host (the bus's filter)."""
        return (type(change) is ParamsChanged and change.by == "midi"
                and change.room in self._config.remote)

    def _sent_there(self, published: Published) -> None:
        """Queue values the router sent there; handed to its host in the next batch."""
        change = published.change
        assert isinstance(change, ParamsChanged)
        with self._lock:
            self._values.setdefault((change.room, change.node), {}).update(change.params)

    def update(self, config: Config) -> None:
        """A reloaded config: hosts and rooms as it says (links are opened again)."""
        with self._lock:
            self._config = config
            links, self._links = self._links, {}
            self._wanted = {r for r in self._wanted if r in config.remote}
        for link in links.values():
            link.close()
        self._wake.set()

    def close(self) -> None:
        """Stop polling and close the links."""
        if self._sent is not None:
            self._sent.close()
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5.0)
        for link in self._links.values():
            link.close()

    # --- its thread ----------------------------------------------------------------------

    def _run(self) -> None:
        next_report = time.monotonic() + REPORT
        while not self._stop.is_set():
            now = time.monotonic()
            with self._lock:
                config = self._config
                hosts = {config.remote[r].host for r in self._wanted if r in config.remote}
            for host in sorted(hosts, key=lambda h: h or ""):
                if now >= self._next_try.get(host, 0.0):
                    self._look(config, host)
            if now >= next_report:
                self._report(config)
                next_report = now + REPORT
            due = min([*self._next_try.values(), next_report], default=next_report)
            self._wake.wait(max(0.01, min(due, next_report) - time.monotonic()))
            self._wake.clear()

    def _link(self, config: Config, host: str | None) -> HostLink:
        link = self._links.get(host)
        if link is None:
            found = config.hosts.get(host) if host is not None else None
            link = self._links[host] = HostLink(
                host, found.via if found else "local",
                found.address if found else "127.0.0.1",
                [n for n, r in config.remote.items() if r.host == host],
                partial(self._opener, host, config))
        return link

    def _look(self, config: Config, host: str | None) -> None:
        """Ask one host where its rooms are; back off while it does not answer."""
        link = self._link(config, host)
        try:
            status = link.call("status", {"instance": "*"}, TIMEOUT)
        except ScorchError as err:
            wait = min(MAX_WAIT, self._waits.get(host, self._poll / 2) * 2)
            self._waits[host] = wait
            self._next_try[host] = time.monotonic() + wait
            log.debug("remote rooms: host %s: %s; again in %.1f s", link.label, err, wait)
            self._forget(host, config)
            return
        self._waits.pop(host, None)
        self._next_try[host] = time.monotonic() + self._poll
        address = _address(config, host)
        learned = {}
        for row in status.get("instances") or []:
            ready = row.get("state") in ("READY", "DEGRADED") and row.get("port")
            learned[row["name"]] = _Room(
                endpoint=(address, int(row["port"])) if ready and address else None,
                nodes={name: int(node["node_id"]) for name, node in
                       (row.get("nodes") or {}).items()})
        self._learn(learned)

    def _forget(self, host: str | None, config: Config) -> None:
        gone = {name: _Room() for name, room in config.remote.items() if room.host == host}
        self._learn(gone)

    def _learn(self, learned: dict[str, _Room]) -> None:
        with self._lock:
            changed = any(self._rooms.get(name) != room for name, room in learned.items())
            self._rooms.update(learned)
        if changed:
            try:
                self._on_change()
            except Exception:
                log.exception("telling the MIDI router where remote rooms are failed")

    def _report(self, config: Config) -> None:
        with self._lock:
            values, self._values = self._values, {}
        by = f"midi@{config.host}" if config.host else "midi@"
        hosts: dict[str | None, list[dict[str, object]]] = {}
        for (room, node), params in values.items():
            there = config.remote.get(room)
            if there is not None:
                hosts.setdefault(there.host, []).append(
                    encode(ParamsChanged(room, node, params, by)))
        for host, changes in hosts.items():
            try:
                self._link(config, host).call(PUBLISH, {"changes": changes}, TIMEOUT)
            except ScorchError as err:
                log.debug("remote rooms: values not handed to host %s: %s", host, err)


def _address(config: Config, host: str | None) -> str | None:
    """The IP address the router sends a host's rooms OSC to (resolved here, once a look)."""
    if host is None:
        return None  # rooms without a host have no address in the config
    try:
        return socket.gethostbyname(config.hosts[host].address)
    except OSError as err:
        log.warning("host %s: cannot resolve %s: %s", host, config.hosts[host].address, err)
        return None
