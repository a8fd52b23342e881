"""What plays, in one call: each room's patterns and proxies, named nodes and node tree."""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fields import Selector
from scorch.api.operation import READ, Args, Result, operation
from scorch.errors import ScorchError
from scorch.primitives.sclang.patterns import PatternRecord, short
from scorch.primitives.scsynth.node_tree import TreeNode
from scorch.state.door import Door
from scorch.state.playing import METER_OWNER, owner
from scorch.state.view import InstanceView
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


class PlayingArgs(Args):
    """Rooms to describe, and how much."""

    instance: Selector = "*"
    detail: Flag = Field(False, description="the detailed form: whole sources, node values "
                         "and every group and synth of the node tree with its owner")
    full: Annotated[Flag, Field(description="Every pattern, node (and, with detail, tree node "
                                "and whole source), however many (by default what fits the "
                                "answer's size budget)")] = False


class PatternOut(BaseModel):
    """A Pdef, Pbindef, Tdef or Ndef as sclang last reported it."""

    kind: str
    name: str
    playing: bool
    quant: str
    source: str = Field(description="its definition (cut to one short line unless detail)")
    source_from: str = Field(description="source: rebuilt from its compile string; code: the "
                             "request that defined it; approx: a compile string that does not "
                             "compile back")
    mute: str = Field("", description="muted, solo (the others are muted for it) or empty")
    last_event: float | None = Field(None, description="Unix time of the last event it "
                                     "played (a rest too; None: none seen since scorch started)")


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

    def text(self) -> str:
        blocks = []
        for room in self.rooms:
            lines = [f"{room.room} ({room.state})"]
            now = time.time()
            for p in room.patterns:
                last = ("" if p.last_event is None
                        else f", last event {max(0.0, now - p.last_event):.1f} s ago")
                state = "playing" if p.playing else "stopped"
                if p.mute:
                    state += f", {p.mute}"
                lines.append(f"  {p.kind} {p.name}: {state}, "
                             f"quant {p.quant}{last}: {short(p.source)}")
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


def owners(nodes: list[TreeNode], view: InstanceView, client_id: int) -> dict[int, str]:
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
    return PatternOut(kind=p.kind, name=p.name, playing=p.playing, quant=p.quant,
                      source=p.text if detail else short(p.text), source_from=p.how,
                      mute=p.mute, last_event=last)


def _room(view: InstanceView, door: Door, detail: bool) -> RoomPlaying:
    times = view.pattern_times
    patterns = [_pattern(p, detail, times.get(p.key)) for p in view.patterns.values()]
    nodes = [NamedNodeOut(name=n.name, synthdef=n.synthdef, node_id=n.node_id,
                          params=dict(n.params) if detail else None)
             for n in view.nodes.values()]
    synths: dict[str, int] | None = None
    tree: list[TreeNodeOut] | None = None
    if door.scsynth.is_open:
        try:
            parsed: list[TreeNode] | None = door.scsynth.query_tree()
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


@operation(access=READ, command="playing", positional=("instance",))
def playing(orch: Orchestra, args: PlayingArgs) -> PlayingOutput:
    """What plays in each room: every pattern and proxy (Pdef, Pbindef, Tdef, Ndef: playing
    or not, quant, source), every named node, and the synths on scsynth counted by who made
    them (a pattern, a proxy, a named node, MIDI, code); `detail` for whole sources, node
    values and the node tree."""
    rooms = [_room(orch.rooms.view(name), orch.doors[name], args.detail)
             for name in orch.rooms.resolve(args.instance)]
    if not args.full:
        share = budget.TEXT // max(1, len(rooms))
        rooms = [_within(room, share) for room in rooms]
    return PlayingOutput(rooms=rooms)


def _within(room: RoomPlaying, share: int) -> RoomPlaying:
    """A room's answer within ``share`` characters: the first patterns, named nodes and tree
    nodes that fit a part of it each (sources cut), and how many of each it left out."""
    parts = 3 if room.tree is not None else 2
    how = "playing(detail=true, full=true)"
    patterns = [p.model_copy(update={"source": budget.cut(p.source, share // 8, how)})
                for p in room.patterns]
    kept: dict[str, list[Any]] = {}
    more: dict[str, int] = {}
    for what, items in (("patterns", patterns), ("nodes", room.nodes),
                        ("tree", room.tree or [])):
        kept[what], left = budget.listing(items, budget.json_size, False,
                                          budget=share // parts)
        if left:
            more[what] = left
    return room.model_copy(update={
        "patterns": kept["patterns"], "nodes": kept["nodes"], "more": more,
        "tree": kept["tree"] if room.tree is not None else None})
