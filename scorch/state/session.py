"""A session: the desired state of every room at one moment, and what loading one changes.

Pure data and logic, no files and no processes: the service layer reads and writes
session files (``scorch/app/sessions.py``) and applies the changes that
:func:`diff` computes, in the order it lists them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The shape of a session file; bump it when the shape changes (2: tempo; 3: the nodes'
#: places, target and add_action).
SESSION_VERSION = 3
#: Where a named node plays: the default group's head or tail, or before or after a node.
ADD_ACTIONS = ("head", "tail", "before", "after")


@dataclass(frozen=True)
class NodeSpec:
    """A named node: its SynthDef and the values it was given (the rest at their defaults)."""

    synthdef: str
    params: Mapping[str, float] = field(default_factory=dict)
    target: str | None = None
    """The named node it plays before or after (``add_action``); None: the default group."""
    add_action: str | None = "tail"
    """One of ADD_ACTIONS; None: where it is (a file of a version that kept no places)."""


@dataclass(frozen=True)
class BufferSpec:
    """A sound file in a buffer, under its bufnum."""

    path: str
    bufnum: int


@dataclass(frozen=True)
class PatternSpec:
    """A Pdef, Pbindef, Tdef or Ndef: the code that defines it, and whether it plays."""

    kind: str
    name: str
    playing: bool
    text: str
    mute: str = ""
    """"muted", "solo" (the others are muted for it) or "" (neither)."""


@dataclass(frozen=True)
class RoomSpec:
    """What one room plays: buffers, named nodes and patterns by name."""

    nodes: Mapping[str, NodeSpec] = field(default_factory=dict)
    buffers: Mapping[str, BufferSpec] = field(default_factory=dict)
    patterns: Mapping[str, PatternSpec] = field(default_factory=dict)
    """By key (``Pdef acc``), as ``playing`` lists them."""
    patterns_known: bool = False
    """False when they were not read (a session file without them): they are left alone."""
    gain_db: float | None = None
    """The master gain in the room's safety stage (None: not known, left alone)."""


@dataclass(frozen=True)
class Session:
    """Every room's state and the run-time MIDI routes (as JSON values, with their ids)."""

    rooms: Mapping[str, RoomSpec] = field(default_factory=dict)
    routes: tuple[Mapping[str, Any], ...] = ()
    """Each a route's fields plus ``id`` and ``type`` (control, key)."""
    routes_known: bool = True
    """False when the routes could not be read (MIDI off): they are then left alone."""
    tempos: Mapping[str, float] = field(default_factory=dict)
    """bpm by tempo scope ("" the installation's, else a group's own). A scope left out
    is left alone: one that follows a MIDI clock coming in, or a file saved without."""


@dataclass(frozen=True)
class Change:
    """One step of loading a session, with what it needs to be carried out."""

    action: str
    """free, load, release, play, set, move, tempo, unmap, map, pattern (define, play, stop),
    mute (mute, solo or unmute a pattern as ``pattern.mute`` says), clear, or gain (the
    master gain, ``params["db"]``)."""
    room: str | None
    """The room (None for a MIDI route)."""
    target: str
    """The buffer, node or route id, or the tempo's scope ("installation" or a group)."""
    detail: str
    """What changes, for a person."""
    synthdef: str | None = None
    params: Mapping[str, float] = field(default_factory=dict)
    path: str | None = None
    bufnum: int | None = None
    route: Mapping[str, Any] | None = None
    bpm: float | None = None
    scope: str | None = None
    pattern: PatternSpec | None = None
    """A pattern to define (and play or stop), or with action ``clear``, to clear."""
    placed: str | None = None
    """play and move: the named node it goes before or after (``add_action``)."""
    add_action: str = "tail"


Defaults = Callable[[str], Mapping[str, float]]
"""A SynthDef's params at their defaults, by name."""


def _same(a: float, b: float) -> bool:
    # Values pass through float32 on scsynth: compare at that precision.
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _values(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in values.items()) or "defaults"


def diff(current: Session, target: Session, defaults: Defaults) -> list[Change]:
    """What turns ``current`` into ``target``, in the order to apply it.

    Buffers are freed and loaded before nodes start (a node may play a buffer), a
    changed bufnum is freed before another buffer takes it, and a node whose
    SynthDef differs is played again under its name (which replaces it). Params a
    side leaves out are at their SynthDef's defaults.
    """
    changes: list[Change] = []
    rooms = list(dict.fromkeys([*current.rooms, *target.rooms]))
    empty = RoomSpec()
    for room in rooms:
        now, want = current.rooms.get(room, empty), target.rooms.get(room, empty)
        for name, buf in now.buffers.items():
            wanted = want.buffers.get(name)
            if wanted is None or wanted.bufnum != buf.bufnum:
                changes.append(Change("free", room, name, f"free buffer {name} "
                                      f"(bufnum {buf.bufnum}, {buf.path})", bufnum=buf.bufnum))
    for room in rooms:
        now, want = current.rooms.get(room, empty), target.rooms.get(room, empty)
        for name, buf in want.buffers.items():
            if now.buffers.get(name) != buf:
                changes.append(Change("load", room, name, f"load {buf.path} into buffer {name} "
                                      f"(bufnum {buf.bufnum})", path=buf.path, bufnum=buf.bufnum))
    for room in rooms:
        changes += _node_changes(room, current.rooms.get(room, empty).nodes,
                                 target.rooms.get(room, empty).nodes, defaults)
    for room in rooms:
        now, want = current.rooms.get(room, empty), target.rooms.get(room, empty)
        if now.patterns_known and want.patterns_known:
            changes += _pattern_changes(room, now.patterns, want.patterns)
        if now.gain_db is not None and want.gain_db is not None and not _same(
                now.gain_db, want.gain_db):
            changes.append(Change("gain", room, "gain", f"master gain of {room}: "
                                  f"{now.gain_db:g} -> {want.gain_db:g} dB",
                                  params={"db": want.gain_db}))
    for scope, bpm in target.tempos.items():
        now_bpm = current.tempos.get(scope)
        if now_bpm is not None and not _same(now_bpm, bpm):
            name = scope or "installation"
            changes.append(Change("tempo", None, name, f"tempo of {name}: {now_bpm:g} -> "
                                  f"{bpm:g} bpm", bpm=bpm, scope=scope))
    if current.routes_known and target.routes_known:
        changes += _route_changes(current.routes, target.routes)
    return changes


def _node_changes(room: str, now: Mapping[str, NodeSpec], want: Mapping[str, NodeSpec],
                  defaults: Defaults) -> list[Change]:
    """Releases, then each wanted node played, moved to its place or set, a node's target
    first. A node placed by a node played again or moved is moved back beside it."""
    changes = [Change("release", room, name, f"release node {name} ({node.synthdef})")
               for name, node in now.items() if name not in want]
    played: set[str] = set()
    for name in placement_order(want):
        node, old = want[name], now.get(name)
        action = node.add_action or "tail"
        where = f" {action} {node.target}" if node.target is not None else ""
        if old is None or old.synthdef != node.synthdef:
            was = f" (was {old.synthdef})" if old is not None else ""
            changes.append(Change("play", room, name, f"play node {name}: {node.synthdef}"
                                  f"{was}{where} with {_values(node.params)}",
                                  synthdef=node.synthdef, params=dict(node.params),
                                  placed=node.target, add_action=action))
            played.add(name)
            continue
        if node.add_action is not None and (
                (old.target, old.add_action) != (node.target, node.add_action)
                or node.target in played):
            changes.append(Change("move", room, name, f"move node {name} to "
                                  f"{where.strip() or f'the {action} of the default group'}",
                                  placed=node.target, add_action=action))
            played.add(name)
        base = defaults(node.synthdef)
        moved: dict[str, float] = {}
        for param in dict.fromkeys([*old.params, *node.params]):
            before = old.params.get(param, base.get(param))
            after = node.params.get(param, base.get(param))
            if after is not None and (before is None or not _same(before, after)):
                moved[param] = after
        if moved:
            before_text = {p: old.params.get(p, base.get(p, math.nan)) for p in moved}
            text = ", ".join(f"{p} {before_text[p]:g} -> {v:g}" for p, v in moved.items())
            changes.append(Change("set", room, name, f"set {name}: {text}", params=moved))
    return changes


def placement_order(nodes: Mapping[str, NodeSpec]) -> list[str]:
    """The names with each node's target before it (else in their own order)."""
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order or name in visiting:
            return
        visiting.add(name)
        target = nodes[name].target
        if target is not None and target in nodes:
            visit(target)
        order.append(name)

    for name in nodes:
        visit(name)
    return order


def placement_problems(nodes: Mapping[str, NodeSpec]) -> dict[str, str]:
    """What is wrong with the nodes' places, by node: a target that is no node of the room,
    itself, or part of a circle; before or after without a target; head or tail with one."""
    problems = {}
    for name, node in nodes.items():
        action = node.add_action
        if node.target is None:
            if action in ("before", "after"):
                problems[name] = f"add_action {action!r} needs a target (a named node)"
            continue
        if action in ("head", "tail"):
            problems[name] = (f"add_action {action!r} is in the default group: give before "
                              "or after with a target")
        elif node.target not in nodes:
            problems[name] = (f"target {node.target!r} is no node of this room; its nodes: "
                              f"{', '.join(nodes)}")
        else:
            seen, at = {name}, nodes[node.target]
            while at.target is not None and at.target in nodes and at.target not in seen:
                seen.add(at.target)
                at = nodes[at.target]
            if at.target == name or node.target == name:
                problems[name] = f"node {name!r} is placed relative to itself (via {node.target!r})"
    return problems


def _pattern_changes(room: str, now: Mapping[str, PatternSpec],
                     want: Mapping[str, PatternSpec]) -> list[Change]:
    changes = [Change("clear", room, key, f"clear {key}", pattern=spec)
               for key, spec in now.items() if key not in want]
    for key, spec in want.items():
        old = now.get(key)
        if old == spec:
            continue
        if old is not None and old.text == spec.text and old.playing == spec.playing:
            verb = {"muted": "mute", "solo": "solo"}.get(spec.mute, "unmute")
            changes.append(Change("mute", room, key, f"{verb} {key}", pattern=spec))
        elif old is not None and old.text == spec.text:
            verb = "play" if spec.playing else "stop"
            changes.append(Change("pattern", room, key, f"{verb} {key}", pattern=spec))
        else:
            verb = "define and play" if spec.playing else "define"
            changes.append(Change("pattern", room, key, f"{verb} {key}: {spec.text[:60]}",
                                  pattern=spec))
    return changes


def _route_changes(current: tuple[Mapping[str, Any], ...],
                   target: tuple[Mapping[str, Any], ...]) -> list[Change]:
    now = {str(r["id"]): r for r in current}
    want = {str(r["id"]): r for r in target}
    changes = [Change("unmap", None, rid, f"unmap MIDI route {rid}")
               for rid in now if rid not in want]
    for rid, route in want.items():
        if now.get(rid) != route:
            verb = "replace" if rid in now else "map"
            changes.append(Change("map", None, rid, f"{verb} MIDI route {rid}: {_route(route)}",
                                  route=route))
    return changes


def _route(route: Mapping[str, Any]) -> str:
    source = next((f"{k} {route[k]}" for k in ("cc", "nrpn") if route.get(k) is not None),
                  "keys" if route.get("type") == "key" else "control")
    where = f"{route.get('instance')}"
    what = route.get("synthdef") or f"{route.get('node')}.{route.get('param')}"
    return f"{source} on {route.get('port', '*')} -> {where} {what}"
