"""The changes the bus carries (:mod:`scorch.state.bus`): one immutable value per kind.

Each is published by the owner of what changed, after the change is made: a room's
actor for its named nodes, patterns and buffers and its state, the conductor for the
tempo, the MIDI router for its routes and for the values its knobs sent to scsynth.
``by`` says which way a change came: ``set``, ``play``, ``release``, ``scene``,
``session``, ``undo``, ``config``, ``fader`` for calls; ``midi`` for this host's MIDI
router, ``midi@HOST`` for another host's; ``scsynth`` for what happened on the server
by itself (a node that ended, a restore that dropped one).

:func:`encode` and :func:`decode` carry them as JSON objects (the page's stream, the
panel, another host's link).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from scorch.errors import InvalidRequest
from scorch.values import FLOAT32_MAX


@dataclass(frozen=True, slots=True)
class NodeStarted:
    """A named node started (played, or replaced by a new one of the same name)."""

    room: str
    """The room it plays in."""
    node: str
    """Its name."""
    synthdef: str
    """The SynthDef it plays."""
    node_id: int
    """Its id on the room's scsynth (a replaced node's new one)."""
    params: Mapping[str, float]
    """Its params as given (the SynthDef's defaults for the rest)."""
    by: str = "play"
    """Which way it came."""
    at: float | None = None
    """The Unix time scsynth starts it (None: now)."""


@dataclass(frozen=True, slots=True)
class ParamsChanged:
    """Params of a named node took new values (on scsynth, and for its restores)."""

    room: str
    """The room the node plays in."""
    node: str
    """The node's name."""
    params: Mapping[str, float]
    """The params that changed, with their new values."""
    by: str = "set"
    """Which way they came (``midi``: this host's router sent them already)."""
    at: float | None = None
    """The Unix time scsynth takes them (None: now)."""


@dataclass(frozen=True, slots=True)
class NodeMoved:
    """A named node was moved in the room's node order (kept through restores)."""

    room: str
    """The room."""
    node: str
    """The node's name."""
    target: str | None
    """The named node it plays before or after (None: the default group's head or tail)."""
    add_action: str
    """``before``, ``after``, ``head`` or ``tail``."""
    by: str = "place"
    """Which way it came."""


@dataclass(frozen=True, slots=True)
class NodeEnded:
    """A named node is no longer played nor restored."""

    room: str
    """The room."""
    node: str
    """Its name."""
    node_id: int
    """The id it had on scsynth."""
    why: str
    """``released``, ``silenced`` (stop, free_all), ``removed`` (by a reloaded config),
    ``ended`` (freed on scsynth outside scorch) or ``dropped`` (a value a restore cannot
    send)."""
    by: str = "release"
    """Which way it came."""


@dataclass(frozen=True, slots=True)
class PatternChanged:
    """A pattern or proxy (Pdef, Pbindef, Tdef, Ndef) was defined, changed, played or
    stopped, as the room's sclang reported it."""

    room: str
    """The room whose sclang runs it."""
    key: str
    """``KIND NAME`` (``Pdef drums``; a Pbindef's is ``Pdef NAME``)."""
    kind: str
    """Pdef, Pbindef, Tdef or Ndef."""
    name: str
    """Its name."""
    playing: bool
    """Whether it plays now."""
    mute: str
    """``""``, ``muted`` or ``solo``."""


@dataclass(frozen=True, slots=True)
class PatternGone:
    """A pattern or proxy was cleared (or went with its sclang and is not defined again)."""

    room: str
    """The room."""
    key: str
    """``KIND NAME``."""


@dataclass(frozen=True, slots=True)
class BufferLoaded:
    """A sample buffer was loaded into a room (and is restored with it)."""

    room: str
    """The room."""
    name: str
    """The buffer's name."""
    bufnum: int
    """Its number on scsynth."""
    path: str
    """The file it was read from."""


@dataclass(frozen=True, slots=True)
class BufferFreed:
    """A sample buffer was freed."""

    room: str
    """The room."""
    name: str
    """The buffer's name."""


@dataclass(frozen=True, slots=True)
class TempoChanged:
    """A beat grid's tempo, bar length or transport changed (not its phase alone)."""

    scope: str
    """``""``: the installation's grid; else the group with a grid of its own."""
    bpm: float
    """Beats per minute."""
    beats_per_bar: int
    """Beats in a bar."""
    playing: bool
    """Whether the transport runs."""


@dataclass(frozen=True, slots=True)
class RouteChanged:
    """A MIDI route was added, replaced or removed at run time."""

    route_id: str
    """The route's id."""
    route: Mapping[str, Any] | None
    """The route as its schema dumps it (None: removed)."""
    by: str = "midi"
    """Which way it came (``map``, ``unmap``)."""


@dataclass(frozen=True, slots=True)
class RoomChanged:
    """A room's state or its sclang's changed (READY, RESTARTING, FAILED...)."""

    room: str
    """The room."""
    state: str
    """The room's state."""
    sclang: str
    """Its sclang's state (``ready``, ``starting``, ``restarting``, ``down``, ``failed``)."""
    reason: str
    """Why, when it is not READY."""


@dataclass(frozen=True, slots=True)
class GainChanged:
    """A room's master gain (in its safety stage) was set: the fade's target."""

    room: str
    """The room."""
    db: float
    """The gain it fades to, dB."""
    fade: float
    """Seconds the fade takes (0: at once)."""
    by: str = "gain"
    """Which way it came (``gain``, ``schedule``, ``session``, ``undo``)."""


@dataclass(frozen=True, slots=True)
class Missed:
    """A reader fell behind and lost changes: what it keeps must be read again whole."""

    count: int
    """How many changes it lost."""


Change = (NodeStarted | ParamsChanged | NodeMoved | NodeEnded | PatternChanged | PatternGone
          | BufferLoaded | BufferFreed | TempoChanged | RouteChanged | RoomChanged | GainChanged
          | Missed)
"""Every kind of change."""

KINDS: dict[str, type[Any]] = {kind.__name__: kind for kind in (
    NodeStarted, ParamsChanged, NodeMoved, NodeEnded, PatternChanged, PatternGone,
    BufferLoaded, BufferFreed, TempoChanged, RouteChanged, RoomChanged, GainChanged, Missed)}
"""Each kind by its name, as :func:`encode` writes it."""


def encode(change: Change) -> dict[str, Any]:
    """``change`` as a JSON object: its kind's name (``change``) and its fields."""
    out: dict[str, Any] = {"change": type(change).__name__}
    for field in fields(change):
        value = getattr(change, field.name)
        out[field.name] = dict(value) if isinstance(value, Mapping) else value
    return out


def decode(data: object, kinds: tuple[type[Any], ...] = tuple(KINDS.values())) -> Change:
    """The change a JSON object (from :func:`encode`) describes, of one of ``kinds``;
    InvalidRequest says what is wrong with it."""
    if not isinstance(data, Mapping) or not isinstance(data.get("change"), str):
        raise InvalidRequest(f"a change is an object with a 'change' (its kind), not "
                             f"{str(data)[:80]!r}")
    kind = KINDS.get(data["change"])
    if kind is None or kind not in kinds:
        raise InvalidRequest(f"no change of kind {str(data['change'])[:40]!r} is taken here "
                             f"(taken: {', '.join(k.__name__ for k in kinds)})")
    names = {f.name for f in fields(kind)}
    given = {k: v for k, v in data.items() if k != "change"}
    if unknown := set(given) - names:
        raise InvalidRequest(f"{kind.__name__} has no field {', '.join(sorted(unknown))[:80]}")
    from pydantic import TypeAdapter, ValidationError  # not on the MIDI path

    try:
        change: Change = TypeAdapter(kind).validate_python(given)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise InvalidRequest(f"{kind.__name__}: {where}: {first['msg']}") from None
    for field in fields(change):
        value = getattr(change, field.name)
        numbers = value.values() if isinstance(value, Mapping) else (value,)
        if any(isinstance(x, float) and not (math.isfinite(x) and abs(x) <= FLOAT32_MAX)
               for x in numbers):
            raise InvalidRequest(f"{kind.__name__}: {field.name}: not a finite number that "
                                 "OSC carries (a 32-bit float)")
    return change
