"""Scenes: the params of named nodes at one moment, and the way from one state to another.

Pure: :func:`morph` computes the values ``position`` of the way from an origin to
a scene, each param along its spec's warp (a frequency exponentially: halfway
from 110 to 440 Hz is 220). The service layer captures origins, applies values
and keeps the scenes in a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from scorch.primitives.synthdefs import Warp

Values = Mapping[str, Mapping[str, Mapping[str, float]]]
"""Param values by room, then node, then param."""

Spec = Callable[[str, str, str], "tuple[Warp, float] | None"]
"""The warp and step of (room, node, param), None when unknown (then the way is straight)."""


@dataclass(frozen=True)
class Scene:
    """A named set of param values of named nodes, in one or more rooms."""

    name: str
    values: Values
    saved_at: float = 0.0
    rooms: tuple[str, ...] = field(default=())
    """The rooms it was saved from (a room whose nodes were all gone is still listed)."""


def restrict(values: Values, rooms: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Only ``rooms``' part of ``values`` (copied)."""
    return {room: {node: dict(params) for node, params in values[room].items()}
            for room in rooms if room in values}


def morph(origin: Values, target: Values, position: float, spec: Spec) -> dict[
        str, dict[str, dict[str, float]]]:
    """The values ``position`` (0..1) of the way from ``origin`` to ``target``.

    Only params both sides hold move. A param with a step (a switch, a buffer
    number) is not interpolated: it takes the target's value from halfway on.
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    for room, nodes in target.items():
        for node, params in nodes.items():
            start = origin.get(room, {}).get(node)
            if start is None:
                continue
            moved = {}
            for param, goal in params.items():
                begin = start.get(param)
                if begin is None:
                    continue
                found = spec(room, node, param)
                warp, step = found if found is not None else (Warp("lin", 0.0, 1.0), 0.0)
                if step > 0:
                    moved[param] = goal if position >= 0.5 else begin
                else:
                    moved[param] = warp.between(begin, goal, position)
            if moved:
                out.setdefault(room, {})[node] = moved
    return out


def missing(current: Values, target: Values) -> list[str]:
    """``room.node`` of every node ``target`` holds that ``current`` does not."""
    return [f"{room}.{node}" for room, nodes in target.items() for node in nodes
            if node not in current.get(room, {})]
