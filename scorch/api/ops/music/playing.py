"""What plays, in one call: each room's patterns and proxies, named nodes and node tree."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fields import Selector
from scorch.api.operation import (
    READ,
    Args,
    CliForm,
    Result,
    operation,
)
from scorch.errors import ScorchError
from scorch.primitives.sclang import PatternRecord, short
from scorch.primitives.scsynth import ROOM_GROUP, TreeNode
from scorch.state import METER_OWNER, Door, RoomView, owner
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app import Orchestra


class PlayingArgs(Args):
    """Rooms to describe, and how much."""

    instance: Selector = "*"
    detail: Flag = Field(False, description="Whole sources, node values, and the node tree "
                         "with each node's owner")
    full: Annotated[Flag, Field(description="Every pattern, node (and, with detail, tree node "
                                "and whole source), however many (by default what fits the "
                                "answer's size budget)")] = False


class PatternOut(BaseModel):
    """A Pdef, Pbindef, Tdef or Ndef as sclang last reported it."""

    kind: str
    name: str
    playing: bool
    quant: str = Field(description="the grid its events keep to, in beats: the one it was "
                       "played on while it plays (4 for the bar in 4/4), else its own")
    source: str = Field(description="its definition (cut to one short line unless detail)")
    source_from: str = Field(description="source: rebuilt from its compile string; code: the "
                             "request that defined it; approx: a compile string that does not "
                             "compile back")
    mute: str = Field("", description="muted, solo (the others are muted for it) or empty")
    last_event: float | None = Field(None, description="Unix time of the last event it "
                                     "played (a rest too; None: none seen since scorch started)")
    finished: bool = Field(False, description="a Pdef or Tdef that played to the end of its "
                           "stream: no event is coming (a new source, or play, starts it again)")
    own_quant: str | None = Field(None, description="its own quant, where a new source given by "
                                  "code lands, when it is not the quant it plays on")


class NamedNodeOut(BaseModel):
    """A named node scorch keeps."""

    name: str
    synthdef: str
    node_id: int
    params: dict[str, float] | None = None


class TreeNodeOut(BaseModel):
    """A group or synth on scsynth, and who made it."""

    id: int
    parent: int
    synthdef: str | None = Field(description="None: a group")
    owner: str


class RoomPlaying(BaseModel):
    """What one room plays."""

    room: str
    state: str
    patterns: list[PatternOut]
    nodes: list[NamedNodeOut]
    synths: dict[str, int] | None = Field(
        description="synths on scsynth by owner (None: scsynth did not answer)")
    tree: list[TreeNodeOut] | None = Field(None, description="detail: every node, depth first")
    more: dict[str, int] = Field(default_factory=dict, description="patterns, nodes, tree: "
                                 "how many were left out (the size budget): full=true "
                                 "returns them")


class PlayingOutput(Result):
    """What each room plays."""

    rooms: list[RoomPlaying]
    detail: bool = Field(False, description="whole sources, node values and the node tree")

    def text(self) -> str:
        blocks = []
        for room in self.rooms:
            lines = [f"{room.room} ({room.state})"]
            now = time.time()
            for p in room.patterns:
                last = ("" if p.last_event is None
                        else f", last event {max(0.0, now - p.last_event):.1f} s ago")
                state = "playing" if p.playing else "finished" if p.finished else "stopped"
                if p.mute:
                    state += f", {p.mute}"
                quant = f"quant {p.quant}" + (f" (code changes land on {p.own_quant})"
                                              if p.own_quant else "")
                if not self.detail:
                    lines.append(f"  {p.kind} {p.name}: {state}, {quant}{last}: "
                                 f"{short(p.source)}")
                    continue
                lines.append(f"  {p.kind} {p.name}: {state}, {quant}{last}, source:")
                lines.extend(f"    {line}" for line in p.source.splitlines())
            for n in room.nodes:
                lines.append(f"  node {n.name}: {n.synthdef} #{n.node_id}")
            if room.synths is None:
                lines.append("  synths: scsynth did not answer")
            else:
                counts = ", ".join(f"{who} {count}" for who, count in room.synths.items())
                lines.append(f"  synths: {counts or 'none'}")
            for t in room.tree or ():
                what = t.synthdef if t.synthdef is not None else "group"
                lines.append(f"    {t.id} in {t.parent}: {what} ({t.owner})")
            detail = ", detail=true" if room.tree is not None else ""
            how = f"playing(instance='{room.room}'{detail}, full=true)"
            lines.extend(f"  [{budget.more(n, kind, how)}]" for kind, n in room.more.items())
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)


def owners(nodes: list[TreeNode], view: RoomView, client_id: int) -> dict[int, str]:
    """Each node's owner; a group whose synths all have one owner takes it."""
    named = {n.node_id: n.name for n in view.nodes.values()}
    patterns = list(view.patterns.values())
    found = {n.node_id: owner(n, named, patterns, client_id) for n in nodes}
    held: dict[int, set[str]] = {}
    for n in reversed(nodes):  # depth first: a group's children come after it
        mine = {found[n.node_id]} if n.synthdef is not None else held.get(n.node_id, set())
        held.setdefault(n.parent, set()).update(mine)
    for n in nodes:
        inside = held.get(n.node_id, set())
        if found[n.node_id] == "sclang (group)" and len(inside) == 1:
            found[n.node_id] = next(iter(inside))
    return found


def _pattern(p: PatternRecord, detail: bool, last: float | None) -> PatternOut:
    quant = p.quant_in_force
    return PatternOut(kind=p.kind, name=p.name, playing=p.playing, quant=quant,
                      source=p.text if detail else short(p.text), source_from=p.how,
                      mute=p.mute, last_event=last, finished=p.finished,
                      own_quant=None if _same(p.quant, quant) else p.quant)


def _same(quant: str, other: str) -> bool:
    """Whether two quants as sclang prints them are one grid (``1`` and ``1.0`` are)."""
    try:
        return float(quant) == float(other)
    except ValueError:
        return quant == other


def _room(view: RoomView, door: Door, detail: bool) -> RoomPlaying:
    times = view.pattern_times
    patterns = [_pattern(p, detail, times.get(p.key)) for p in view.patterns.values()]
    nodes = [NamedNodeOut(name=n.name, synthdef=n.synthdef, node_id=n.node_id,
                          params=dict(n.params) if detail else None)
             for n in view.nodes.values()]
    synths: dict[str, int] | None = None
    tree: list[TreeNodeOut] | None = None
    if door.scsynth.is_open:
        try:
            # What the room plays: its group's tree, its top as code sees it (the root).
            parsed: list[TreeNode] | None = [
                replace(n, parent=0) if n.parent == ROOM_GROUP else n
                for n in door.scsynth.query_tree(ROOM_GROUP)]
        except (ScorchError, ValueError):
            parsed = None  # synths stay None: scsynth did not answer as it should
        if parsed is not None:
            found = owners(parsed, view, door.sclang.client_id)
            # The meter that runs while someone watches the page is scorch's, not the room's.
            parsed = [n for n in parsed if found[n.node_id] != METER_OWNER]
            synths = dict(Counter(found[n.node_id] for n in parsed if n.synthdef is not None))
            if detail:
                tree = [TreeNodeOut(id=n.node_id, parent=n.parent, synthdef=n.synthdef,
                                    owner=found[n.node_id]) for n in parsed]
    return RoomPlaying(room=view.name, state=str(view.snapshot.state), patterns=patterns,
                       nodes=nodes, synths=synths, tree=tree)


@operation(access=READ, cli=CliForm("playing", ("instance",)))
def playing(orch: Orchestra, args: PlayingArgs) -> PlayingOutput:
    """What plays in each room: every pattern and proxy (Pdef, Pbindef, Tdef, Ndef: playing
    or not, quant, source), every named node, and the synths on scsynth counted by who made
    them."""
    rooms = [_room(orch.rooms.view(name), orch.doors[name], args.detail)
             for name in orch.rooms.resolve(args.instance)]
    if not args.full:
        share = budget.TEXT // max(1, len(rooms))
        rooms = [_within(room, share) for room in rooms]
    return PlayingOutput(rooms=rooms, detail=args.detail)


def _within(room: RoomPlaying, share: int) -> RoomPlaying:
    """A room's answer within ``share`` characters: the first patterns, named nodes and tree
    nodes that fit a part of it each, and how many of each it left out."""
    parts = 3 if room.tree is not None else 2
    how = f"playing(instance='{room.room}', detail=true, full=true)"
    kept: dict[str, list[Any]] = {}
    more: dict[str, int] = {}
    kept["patterns"], left = _whole_sources(room.patterns, share // parts, how)
    if left:
        more["patterns"] = left
    for what, items in (("nodes", room.nodes), ("tree", room.tree or [])):
        kept[what], left = budget.listing(items, budget.json_size, False,
                                          budget=share // parts)
        if left:
            more[what] = left
    return room.model_copy(update={
        "patterns": kept["patterns"], "nodes": kept["nodes"], "more": more,
        "tree": kept["tree"] if room.tree is not None else None})


#: The least of a source worth showing cut, rather than leaving its pattern out.
MIN_SOURCE = 400


def _whole_sources(patterns: list[PatternOut], part: int, how: str,
                   ) -> tuple[list[PatternOut], int]:
    """The first patterns that fit ``part`` characters with their sources whole; the first
    that does not is kept with its source cut to what is left (saying so and ``how`` to ask
    for it whole) when that is worth it; and how many were left out."""
    kept: list[PatternOut] = []
    for p in patterns:
        size = budget.json_size(p) + budget.OVERHEAD
        if size <= part:
            kept.append(p)
            part -= size
            continue
        room_for = part - (size - len(p.source))
        if room_for >= MIN_SOURCE or not kept:
            kept.append(p.model_copy(update={
                "source": budget.cut(p.source, max(room_for, MIN_SOURCE), how)}))
        break
    return kept, len(patterns) - len(kept)
