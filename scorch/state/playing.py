"""Who made each synth on a room's scsynth: a pattern, a proxy, a named node, MIDI, code.

scsynth knows no owners, only node ids and SynthDef names; scorch knows the id
ranges it allocates from, its named nodes, and the patterns sclang reported. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scorch.primitives.sclang import PatternRecord
from scorch.primitives.scsynth import (
    METER_NODE,
    PROTECTED,
    READERS_GROUP,
    ROOM_GROUP,
    STAGE_NODE,
    TreeNode,
    client_of,
    is_default_group,
)
from scorch.state.desired import PERSISTENT_NODE_BASE, UNNAMED_NODE_BASE

#: MIDI voices' ids (``actors/router``): from 2**29 up to the named nodes.
MIDI_NODE_BASE = 2**29
#: The level meter scorch runs in a room while someone watches (``scorch.app.meters``):
#: the last id of scorch's own client (3 of scsynth's 4 logins), which nothing else takes.
METER_NODE_ID = METER_NODE
#: What :func:`owner` calls the layout's own nodes (``scorch.primitives.scsynth.placement``).
LAYOUT_OWNERS = {ROOM_GROUP: "room", STAGE_NODE: "scorch (safety stage)",
                 READERS_GROUP: "scorch (readers)"}
#: What :func:`owner` calls it; ``playing`` leaves it out of the room's synths.
METER_OWNER = "scorch (meter)"
_INSTRUMENT = re.compile(r"""['\\]instrument['"]?\s*,\s*['\\]([A-Za-z0-9_]+)'?""")


@dataclass(frozen=True)
class Stopped:
    """What silencing one room stopped."""

    nodes: tuple[str, ...]
    """The named nodes it freed and forgot."""
    patterns: tuple[str, ...] = ()
    """The patterns and proxies that played (``Pdef kick``)."""
    routines: int | None = None
    """Routines and tasks code started that stopped (None: sclang did not say)."""
    synths: int | None = None
    """The synths scsynth ran just before, all freed (None: it did not answer)."""


def synth_count(nodes: Iterable[TreeNode]) -> int:
    """The synths of a node tree that are the room's (not scorch's own: the level meter,
    the safety stage)."""
    return sum(1 for n in nodes if n.synthdef is not None and n.node_id not in PROTECTED)


def instrument(text: str) -> str:
    """The SynthDef a pattern's events play: its ``\\instrument``, else ``default``."""
    found = _INSTRUMENT.search(text)
    return found.group(1) if found else "default"


def ndef_of(synthdef: str, client_id: int, names: Sequence[str]) -> str | None:
    """The Ndef whose source SynthDef this is (``temp__<client><key><hash>_<n>``)."""
    prefix = f"temp__{client_id}"
    for name in sorted(names, key=len, reverse=True):
        rest = synthdef.removeprefix(prefix + name)
        if rest != synthdef and re.fullmatch(r"-?\d+_\d+", rest):
            return name
    return None


def owner(node: TreeNode, named: Mapping[int, str], patterns: Sequence[PatternRecord],
          client_id: int = 0) -> str:
    """Who made ``node``, in a few words (``node lead``, ``Ndef drone``, ``Pdef acc``)."""
    node_id = node.node_id
    if node_id == 0:
        return "root"
    if is_default_group(node_id):
        return f"default group of client {client_of(node_id)}"
    if node_id == METER_NODE_ID:
        return METER_OWNER
    if node_id in LAYOUT_OWNERS:
        return LAYOUT_OWNERS[node_id]
    if node_id in named:
        return f"node {named[node_id]}"
    if MIDI_NODE_BASE <= node_id < PERSISTENT_NODE_BASE:
        return "midi"
    if node_id >= UNNAMED_NODE_BASE:
        return "scorch (play, capture)"
    if client_of(node_id) != client_id:
        return f"client {client_of(node_id)}" if client_of(node_id) < 4 else "scorch"
    if node.synthdef is None:
        return "sclang (group)"
    ndefs = [p.name for p in patterns if p.kind == "Ndef"]
    ndef = ndef_of(node.synthdef, client_id, ndefs)
    if ndef is not None:
        return f"Ndef {ndef}"
    if node.synthdef.startswith("system_link_"):
        return "Ndef monitor"
    players = [p.key for p in patterns if p.playing and p.kind in ("Pdef", "Pbindef")
               and instrument(p.text) == node.synthdef]
    if players:
        return " or ".join(players)
    return "sclang (code)"
