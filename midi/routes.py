"""Compile routes into per-port lookup tables the MIDI callback reads without locking.

A table is immutable: the router builds a new one whenever routes, ports or
rooms change and swaps it in with one assignment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from midi.controllers import Control, Profile
from midi.curves import Curve, make_curve
from midi.schema import ControlRoute, CueRoute, KeyRoute, PageRoute, SceneRoute

Route = ControlRoute | KeyRoute | SceneRoute | PageRoute | CueRoute
#: Each route model's type name, as listings, stores and sessions say it.
KIND: Mapping[type, str] = MappingProxyType({
    ControlRoute: "control", KeyRoute: "key", SceneRoute: "scene", PageRoute: "page",
    CueRoute: "cue"})


class RouteEntry(NamedTuple):
    """A route with its id and where it came from."""

    id: str
    route: Route
    origin: str
    """``config`` or ``runtime``."""


class Slot(NamedTuple):
    """One room a control target moves, with the lookup keys the hot path needs."""

    room: str
    value_key: tuple[str, str, str]
    """(room, node, param): the engine's last-value key."""
    takeover_key: tuple[str, str]
    """(route id, room): the engine's takeover-state key."""
    node_key: tuple[str, str]
    """(room, node): the snapshot's node-id key."""


@dataclass(frozen=True, slots=True)
class _Target:
    """A compiled route: its id and the rooms its selector resolved to."""

    route_id: str
    rooms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ControlTarget(_Target):
    """A compiled control route: its curve bound to its range, its rooms resolved."""

    route: ControlRoute
    curve: Curve
    slots: tuple[Slot, ...] = field(init=False)
    """Per room, keys built once here rather than per message."""

    def __post_init__(self) -> None:
        node, param = self.route.node, self.route.param
        slots = tuple(
            Slot(i, (i, node, param), (self.route_id, i), (i, node)) for i in self.rooms
        )
        object.__setattr__(self, "slots", slots)


@dataclass(frozen=True, slots=True)
class KeyTarget(_Target):
    """A compiled key route."""

    route: KeyRoute
    velocity: Curve
    channels: frozenset[int]
    """Channels 0..15 it listens to."""


#: (kind, channel 0..15, number): kind is cc, cc14, nrpn, pb, at or note.
ControlKey = tuple[str, int, int]
#: (kind, channel 0..15, number): kind is pc (program change) or cc.
SceneKey = tuple[str, int, int]
_NO_SCENES: Mapping[SceneKey, tuple[SceneRoute, ...]] = MappingProxyType({})


class Table(NamedTuple):
    """What one input port's messages do."""

    controls: Mapping[ControlKey, tuple[ControlTarget, ...]]
    keys: tuple[KeyTarget, ...]
    cc14: bool
    """Some route wants 14-bit CC assembly."""
    nrpn: bool
    """Some route wants NRPN assembly."""
    scenes: Mapping[SceneKey, tuple[SceneRoute, ...]] = _NO_SCENES
    """Scene routes by program change or CC."""
    notes: bool = False
    """Some control route is a button or pad that sends notes."""
    pages: Mapping[ControlKey, str] = MappingProxyType({})
    """Page buttons: the page each shows."""
    feedback: bool = False
    """The port's device is sent feedback: a message it echoes back is dropped."""
    cues: Mapping[ControlKey, tuple[CueRoute, ...]] = MappingProxyType({})
    """Cue list buttons by (note, cc or pc, channel, number)."""


EMPTY = Table({}, (), False, False)


def port_matches(pattern: str, port_name: str) -> bool:
    """Match a port by case-insensitive substring of its name; ``*`` matches any port."""
    return pattern == "*" or pattern.lower() in port_name.lower()


def _channels(channel: int | None) -> range | tuple[int]:
    return range(16) if channel is None else (channel - 1,)


def _control_key(route: ControlRoute) -> tuple[str, int]:
    if route.cc is not None:
        return ("cc14" if route.hires else "cc"), route.cc
    if route.nrpn is not None:
        return "nrpn", route.nrpn
    if route.note is not None:
        return "note", route.note
    return ("pb", 0) if route.pitchbend else ("at", 0)


_SOURCE = {"cc": "cc", "note": "note", "pb": "pitchbend", "at": "aftertouch"}


def bind(route: ControlRoute, profile: Profile | None) -> ControlRoute | None:
    """``route`` with its named control's numbers from ``profile`` (None: it has none).

    A route of numbers is returned as it is; a button or pad gets its default
    behaviour (toggle), an encoder its encoding, unless the route says otherwise.
    """
    if route.control is None:
        return route if route.note is None or route.button is not None else \
            route.model_copy(update={"button": "toggle"})
    control = profile.controls.get(route.control) if profile is not None else None
    if control is None:
        return None
    kind, channel, number = control.key
    update: dict[str, object] = {"control": None, _SOURCE[kind]: number if kind in (
        "cc", "note") else True}
    if route.channel is None:
        update["channel"] = channel + 1
    if control.kind == "relative" and route.relative is None:
        update["relative"] = control.encoding
    if control.kind in ("button", "pad") and route.button is None:
        update["button"] = "toggle" if control.button == "momentary" else "momentary"
    return route.model_copy(update=update)


def control_of(route: ControlRoute, profile: Profile | None) -> Control | None:
    """The profile's control a bound route's numbers are (its feedback's), or None."""
    if profile is None:
        return None
    kind, number = _control_key(route)
    if kind not in ("cc", "note", "pb", "at"):
        return None
    if route.channel is not None:
        return profile.by_key().get((kind, route.channel - 1, number))
    return next((c for c in profile.controls.values()
                 if c.key[0] == kind and c.key[2] == number), None)


def compile_table(
    port_name: str,
    entries: Iterable[RouteEntry],
    resolved: Mapping[str, tuple[str, ...]],
    profile: Profile | None = None,
    page: str | None = None,
    feedback: bool = False,
) -> Table:
    """Build the table of ``port_name`` from ``entries``, with selectors already resolved.

    ``profile``: the device's on that port, whose control names the routes may use;
    ``page``: the page it shows (routes of its other pages are left out).
    """
    controls: dict[ControlKey, list[ControlTarget]] = {}
    keys: list[KeyTarget] = []
    scenes: dict[SceneKey, list[SceneRoute]] = {}
    pages: dict[ControlKey, str] = {}
    cues: dict[ControlKey, list[CueRoute]] = {}
    for entry in entries:
        route = entry.route
        if not port_matches(route.port, port_name):
            continue
        if isinstance(route, CueRoute):
            key = page_key(route, profile)
            if key is not None:
                for channel in ((key[1],) if key[1] >= 0 else range(16)):
                    cues.setdefault((key[0], channel, key[2]), []).append(route)
            continue
        if isinstance(route, PageRoute):
            key = page_key(route, profile)
            if key is not None:
                for channel in ((key[1],) if key[1] >= 0 else range(16)):
                    pages[(key[0], channel, key[2])] = route.page
            continue
        rooms = resolved.get(route.instance, ())
        if isinstance(route, SceneRoute):
            kind, number = ("pc", route.program) if route.program is not None else (
                "cc", route.cc)
            assert number is not None, "checked by SceneRoute"
            for channel in _channels(route.channel):
                scenes.setdefault((kind, channel, number), []).append(route)
        elif isinstance(route, ControlRoute):
            if route.page is not None and route.page != page:
                continue
            bound = bind(route, profile)
            if bound is None:
                continue
            route = bound
            curve = make_curve(route.curve, *route.range)
            target = ControlTarget(entry.id, rooms, route, curve)
            kind, number = _control_key(route)
            for channel in _channels(route.channel):
                controls.setdefault((kind, channel, number), []).append(target)
        else:
            keys.append(
                KeyTarget(entry.id, rooms, route, make_curve(route.velocity_curve, *route.amp),
                          frozenset(_channels(route.channel)))
            )
    return Table(
        {key: tuple(targets) for key, targets in controls.items()},
        tuple(keys),
        any(key[0] == "cc14" for key in controls),
        any(key[0] == "nrpn" for key in controls),
        {key: tuple(routes) for key, routes in scenes.items()} if scenes else _NO_SCENES,
        any(key[0] == "note" for key in controls),
        MappingProxyType(pages),
        feedback,
        MappingProxyType({key: tuple(routes) for key, routes in cues.items()}),
    )


def page_key(route: PageRoute | CueRoute, profile: Profile | None) -> ControlKey | None:
    """The message that presses a page or cue button (channel -1: any), or None: no such
    control."""
    if route.control is not None:
        control = profile.controls.get(route.control) if profile is not None else None
        if control is None or control.key[0] not in ("cc", "note"):
            return None
        kind, channel, number = control.key
        return kind, (route.channel - 1) if route.channel else channel, number
    channel = (route.channel - 1) if route.channel else -1
    if isinstance(route, CueRoute) and route.program is not None:
        return "pc", channel, route.program
    if route.cc is not None:
        return "cc", channel, route.cc
    assert route.note is not None, "checked by PageRoute and CueRoute"
    return "note", channel, route.note


def pages_of(entries: Iterable[RouteEntry], port_name: str) -> list[str]:
    """The pages the page buttons of ``port_name`` show, in the order they were given."""
    found: list[str] = []
    for entry in entries:
        route = entry.route
        if isinstance(route, PageRoute) and port_matches(route.port, port_name) \
                and route.page not in found:
            found.append(route.page)
    return found


def resolve_all(
    entries: Iterable[RouteEntry], resolve: Callable[[str], list[str]]
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """Resolve every route's room selector; return (resolved, errors by selector)."""
    resolved: dict[str, tuple[str, ...]] = {}
    errors: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry.route, PageRoute | CueRoute):
            continue
        selector = entry.route.instance
        if selector in resolved or selector in errors:
            continue
        try:
            resolved[selector] = tuple(resolve(selector))
        except KeyError as err:
            errors[selector] = str(err.args[0]) if err.args else f"unknown: {selector}"
    return resolved, errors
