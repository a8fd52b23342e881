"""What the MIDI router targets: the rooms, as the router needs to see them.

:class:`Targets` is what the router asks (and from which thread); the
orchestra's :class:`OrchestraTargets` answers from the rooms' thread-safe
views, so the router never waits. The values the router sends are announced on
the change bus (``actors/router/bus_link.py``), where the rooms keep them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from midi import Address, ControlRoute, RouteEntry, TargetSnapshot
from scorch.config import Config
from scorch.primitives.scsynth import local_address
from scorch.state import RoomView, State

SceneCue = Callable[[str, str, str, float], None]
"""(kind, scene, room selector, value): ``recall`` with seconds, ``morph`` with a position."""


class Targets(Protocol):
    """Rooms as the router sees them; the orchestra facade implements this.

    The router never calls these from the MIDI callback. It calls ``resolve``,
    ``endpoint`` and ``node_id`` from its actor thread: at start, on every route
    change and on every rescan tick.
    """

    def resolve(self, selector: str) -> list[str]:
        """Return the room names of a room name, a group name or ``*``.

        Raise KeyError with a clear message if the selector names nothing.
        """
        ...

    def endpoint(self, room: str) -> tuple[str, int] | None:
        """Return scsynth's UDP address while ``room`` is READY, else None."""
        ...

    def node_id(self, room: str, node: str) -> int | None:
        """Return the scsynth node id of a named persistent node, None if unknown."""
        ...

    def scene(self, kind: str, scene: str, room: str, value: float) -> None:
        """Cue a scene from a MIDI route (MIDI callback thread): must not block."""
        ...


class RemoteRooms(Protocol):
    """Rooms other hosts run, as this host's router sees them (the service layer's).

    Answered from what was last learned of them, never waiting on the network: the
    router asks from its actor thread.
    """

    def endpoint(self, room: str) -> tuple[str, int] | None:
        """The room's scsynth on its host's address while it is READY, else None."""
        ...

    def node_id(self, room: str, node: str) -> int | None:
        """The id of a named node there, None if unknown."""
        ...


class OrchestraTargets:
    """Targets for the MIDI router: where each room and named node is right now.

    Rooms of other hosts (several hosts) are reached through ``remote``: the
    router sends them OSC over the LAN, straight to their scsynth.
    """

    def __init__(self, config: Config, views: dict[str, RoomView],
                 on_scene: SceneCue = lambda kind, scene, room, value: None,
                 remote: RemoteRooms | None = None) -> None:
        self._config = config
        self._views = views
        self._on_scene = on_scene
        self._remote = remote
        self._host = local_address(config.listen_address())

    def resolve(self, selector: str) -> list[str]:
        """Room, group or ``*`` to room names, of every host (KeyError when unknown)."""
        return self._config.resolve_everywhere(selector)

    def endpoint(self, room: str) -> tuple[str, int] | None:
        """scsynth's address while the room is READY."""
        if room not in self._views:
            return self._remote.endpoint(room) if self._remote is not None else None
        snap = self._views[room].snapshot
        if snap.state not in (State.READY, State.DEGRADED) or snap.port is None:
            return None
        return (self._host, snap.port)

    def node_id(self, room: str, node: str) -> int | None:
        """The scsynth id of a named persistent node."""
        if room not in self._views:
            return self._remote.node_id(room, node) if self._remote is not None else None
        found = self._views[room].nodes.get(node)
        return found.node_id if found is not None else None

    def scene(self, kind: str, scene: str, room: str, value: float) -> None:
        """Hand a scene cue to whoever conducts scenes (it queues it and returns)."""
        self._on_scene(kind, scene, room, value)


def where_targets_are(entries: list[RouteEntry], resolved: Mapping[str, tuple[str, ...]],
                      targets: Targets) -> TargetSnapshot:
    """The scsynth address of every READY room the routes play, and their nodes' ids."""
    endpoints: dict[str, Address] = {}
    nodes: dict[tuple[str, str], int] = {}
    for room in {i for names in resolved.values() for i in names}:
        address = targets.endpoint(room)
        if address is None:
            continue
        endpoints[room] = address
        for entry in entries:
            route = entry.route
            if isinstance(route, ControlRoute) and room in resolved.get(route.instance, ()):
                node_id = targets.node_id(room, route.node)
                if node_id is not None:
                    nodes[(room, route.node)] = node_id
    return TargetSnapshot(endpoints, nodes)
