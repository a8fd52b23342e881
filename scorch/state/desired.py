"""What a room should be playing: replayed after every scsynth restart.

scsynth keeps nothing across a restart, so scorch restores from this record,
never from memory of the dead process. Pure data; the room actor owns it.
It is written to and read from JSON with a version number (:meth:`DesiredState.to_json`),
so sessions and other hosts can carry it.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from typing import Any

from scorch.errors import InvalidRequest
from scorch.primitives.sclang import PatternRecord
from scorch.primitives.scsynth import commands

#: scsynth runs with 4 logins; each client's ids (and its default group at
#: k * 2**26 + 1) lie below 2**28. scorch's own ids stay above: MIDI voices from
#: 2**29, persistent nodes from 2**30.
PERSISTENT_NODE_BASE = 2**30
#: Unnamed synths scorch starts get ids here, wrapping within UNNAMED_NODE_SPAN, so a
#: play can wait for its own node's /n_go.
UNNAMED_NODE_BASE = 2**30 + 2**29
UNNAMED_NODE_SPAN = 2**28
#: Buffers scorch loads samples into. scsynth has 1024 (its ``-b`` default) and sclang,
#: client 0 of 4 logins, allocates only in the first quarter; the last quarter belongs to
#: client 3, scorch's own. Samples take its lower 192; recordings take from the top down.
SAMPLE_BUFFER_BASE = 768
SAMPLE_BUFFER_COUNT = 192
#: The shape of :meth:`DesiredState.to_json`; bump it when the shape changes.
FORMAT_VERSION = 3
#: Versions :meth:`DesiredState.from_json` still reads (1 had no buffers, 2 no master gain).
READABLE_VERSIONS = (1, 2, 3)


@dataclass
class NodeState:
    """A named persistent synth and its last parameter values."""

    name: str
    synthdef: str
    node_id: int
    params: dict[str, float] = field(default_factory=dict)
    target: str | None = None
    """The named node it is placed before or after; None: the default group."""
    add_action: str = "tail"
    """head or tail of the default group, before or after ``target``."""


@dataclass
class BufferState:
    """A sound file loaded into a buffer: loaded again under the same bufnum after a restart.

    ``frames``, ``channels`` and ``sample_rate`` are what scsynth's ``/b_info`` said.
    """

    name: str
    bufnum: int
    path: str
    frames: int = 0
    channels: int = 0
    sample_rate: float = 0.0

    @property
    def seconds(self) -> float:
        """The sound's length at its own sample rate."""
        return self.frames / self.sample_rate if self.sample_rate > 0 else 0.0


@dataclass
class DesiredState:
    """SynthDefs, buffers, named nodes and startup code one room should have."""

    synthdefs: dict[str, bytes] = field(default_factory=dict)
    nodes: dict[str, NodeState] = field(default_factory=dict)
    buffers: dict[str, BufferState] = field(default_factory=dict)
    startup_code: str | None = None
    gain_db: float = 0.0
    """The room's master gain (dB), in its safety stage."""
    patterns: dict[str, PatternRecord] = field(default_factory=dict)
    """Pdef, Pbindef, Tdef and Ndef sclang reported, by ``Pdef acc``: defined again (and
    resumed on the next bar) after sclang restarts. Kept in memory only."""
    _next_id: int = PERSISTENT_NODE_BASE
    _next_unnamed: int = 0

    def add_synthdef(self, name: str, compiled: bytes) -> None:
        """Remember a SynthDef to load on every boot."""
        self.synthdefs[name] = compiled

    def new_node(self, name: str, synthdef: str, params: dict[str, float]) -> NodeState:
        """A named node to start, with a fresh id; nothing is recorded until :meth:`keep`."""
        node_id = self._next_id
        self._next_id += 1
        return NodeState(name, synthdef, node_id, dict(params))

    def keep(self, node: NodeState) -> NodeState | None:
        """Record a node the server accepted; return the node of that name it replaces."""
        old = self.nodes.get(node.name)
        self.nodes[node.name] = node
        return old

    def add_node(self, name: str, synthdef: str, params: dict[str, float]) -> NodeState:
        """Record a named node at once (from the config: it starts with the next restore)."""
        node = self.new_node(name, synthdef, params)
        self.keep(node)
        return node

    def unnamed_id(self) -> int:
        """An id for an unnamed synth, from a range no named node or MIDI voice uses."""
        node_id = UNNAMED_NODE_BASE + self._next_unnamed
        self._next_unnamed = (self._next_unnamed + 1) % UNNAMED_NODE_SPAN
        return node_id

    def by_id(self, node_id: int) -> NodeState | None:
        """The named node with scsynth id ``node_id``, if one is recorded."""
        return next((n for n in self.nodes.values() if n.node_id == node_id), None)

    def set_params(self, name: str, params: dict[str, float]) -> NodeState:
        """Update a node's last values; raise KeyError for an unknown node."""
        node = self.nodes[name]
        node.params.update(params)
        return node

    def remove_node(self, name: str) -> NodeState | None:
        """Forget a node (it was released)."""
        return self.nodes.pop(name, None)

    def clear_nodes(self) -> list[NodeState]:
        """Forget every node (everything was silenced)."""
        gone = list(self.nodes.values())
        self.nodes.clear()
        return gone

    def record_pattern(self, record: PatternRecord) -> PatternRecord:
        """Keep what sclang reported; an approximate text never replaces a better one."""
        old = self.patterns.get(record.key)
        if record.how == "approx" and old is not None and old.kind == record.kind:
            record = replace(record, how=old.how, text=old.text)
        self.patterns[record.key] = record
        return record

    def free_bufnums(self) -> list[int]:
        """scorch's sample buffers no recorded buffer uses, lowest first."""
        used = {b.bufnum for b in self.buffers.values()}
        return [n for n in range(SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_BASE + SAMPLE_BUFFER_COUNT)
                if n not in used]

    def by_bufnum(self, bufnum: int) -> BufferState | None:
        """The buffer recorded under ``bufnum``, if any."""
        return next((b for b in self.buffers.values() if b.bufnum == bufnum), None)

    def buffer_messages(self) -> list[bytes]:
        """``/b_allocRead`` for every buffer: send ``/sync`` after them, before the nodes."""
        return [commands.b_alloc_read(b.bufnum, b.path) for b in self.buffers.values()]

    def synthdef_messages(self) -> list[bytes]:
        """``/d_recv`` for every SynthDef: send ``/sync`` after them, before the nodes."""
        return [commands.d_recv(data) for data in self.synthdefs.values()]

    def node_messages(self) -> list[bytes]:
        """``/s_new`` for every named node with its last parameter values."""
        return [self.message_for(node) for node in self.nodes.values()]

    def message_for(self, node: NodeState) -> bytes:
        """``/s_new`` for ``node`` where it belongs: before or after its target (the tail of
        the default group when its target is gone), else at the default group's head or tail."""
        target = self.nodes.get(node.target) if node.target is not None else None
        return new_node_message(node, target_id=target.node_id if target is not None else None)

    def move_message(self, node: NodeState) -> bytes:
        """The move that puts a running ``node`` where it says (as :meth:`message_for`
        starts it there)."""
        target = self.nodes.get(node.target) if node.target is not None else None
        if target is not None and node.add_action in ("before", "after"):
            return commands.move(node.node_id, commands.AddAction.BEFORE if node.add_action
                                 == "before" else commands.AddAction.AFTER, target.node_id)
        return commands.move(node.node_id, commands.AddAction.HEAD if node.add_action == "head"
                             else commands.AddAction.TAIL)

    def to_json(self) -> dict[str, Any]:
        """The whole state as JSON values, with its format version."""
        return {
            "version": FORMAT_VERSION,
            "synthdefs": {name: base64.b64encode(data).decode("ascii")
                          for name, data in self.synthdefs.items()},
            "nodes": {node.name: {"synthdef": node.synthdef, "node_id": node.node_id,
                                  "params": dict(node.params), "target": node.target,
                                  "add_action": node.add_action}
                      for node in self.nodes.values()},
            "buffers": {b.name: {"bufnum": b.bufnum, "path": b.path, "frames": b.frames,
                                 "channels": b.channels, "sample_rate": b.sample_rate}
                        for b in self.buffers.values()},
            "startup_code": self.startup_code,
            "gain_db": self.gain_db,
            "next_node_id": self._next_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DesiredState:
        """Read what :meth:`to_json` wrote; InvalidRequest says what does not fit."""
        version = data.get("version") if isinstance(data, dict) else None
        if version not in READABLE_VERSIONS:
            raise InvalidRequest(f"desired state of format version {version!r}: this scorch "
                                 f"reads versions {', '.join(map(str, READABLE_VERSIONS))}")
        try:
            state = cls(startup_code=data.get("startup_code"),
                        gain_db=float(data.get("gain_db", 0.0)),
                        _next_id=int(data.get("next_node_id", PERSISTENT_NODE_BASE)))
            for name, encoded in data.get("synthdefs", {}).items():
                state.synthdefs[str(name)] = base64.b64decode(encoded, validate=True)
            for name, node in data.get("nodes", {}).items():
                params = {str(k): float(v) for k, v in node.get("params", {}).items()}
                target = node.get("target")
                state.nodes[str(name)] = NodeState(
                    str(name), str(node["synthdef"]), int(node["node_id"]), params,
                    str(target) if target is not None else None,
                    str(node.get("add_action", "tail")))
            for name, buf in data.get("buffers", {}).items():
                state.buffers[str(name)] = BufferState(
                    str(name), int(buf["bufnum"]), str(buf["path"]), int(buf.get("frames", 0)),
                    int(buf.get("channels", 0)), float(buf.get("sample_rate", 0.0)))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise InvalidRequest(f"desired state does not fit format version "
                                 f"{FORMAT_VERSION}: {type(err).__name__}: {err}") from err
        highest = max((n.node_id for n in state.nodes.values()), default=PERSISTENT_NODE_BASE - 1)
        state._next_id = max(state._next_id, highest + 1)
        return state


def new_node_message(node: NodeState, node_id: int | None = None,
                     target_id: int | None = None) -> bytes:
    """``/s_new`` before or after ``target_id`` as the node says, else at the head or tail
    of the default group (``node_id`` -1: scsynth picks one)."""
    new_id = node.node_id if node_id is None else node_id
    if target_id is not None and node.add_action in ("before", "after"):
        action = commands.AddAction.BEFORE if node.add_action == "before" else \
            commands.AddAction.AFTER
        return commands.s_new(node.synthdef, new_id, action, target_id,
                              commands.controls(node.params))
    action = commands.AddAction.HEAD if node.add_action == "head" else commands.AddAction.TAIL
    return commands.s_new(node.synthdef, new_id, action, commands.DEFAULT_GROUP,
                          commands.controls(node.params))
