"""What an instance should be playing: replayed after every scsynth restart.

scsynth keeps nothing across a restart, so scorch restores from this record,
never from memory of the dead process. Pure data; the instance actor owns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scorch.primitives.osc import OscArg, encode_message

#: scsynth runs with 4 logins; each client's ids (and its default group at
#: k * 2**26 + 1) lie below 2**28. scorch's own ids stay above: MIDI voices from
#: 2**29, persistent nodes from 2**30.
PERSISTENT_NODE_BASE = 2**30
DEFAULT_GROUP = 1


@dataclass
class NodeState:
    """A named persistent synth and its last parameter values."""

    name: str
    synthdef: str
    node_id: int
    params: dict[str, float] = field(default_factory=dict)


@dataclass
class DesiredState:
    """SynthDefs, named nodes and startup code one instance should have."""

    synthdefs: dict[str, bytes] = field(default_factory=dict)
    nodes: dict[str, NodeState] = field(default_factory=dict)
    startup_code: str | None = None
    _next_id: int = PERSISTENT_NODE_BASE

    def add_synthdef(self, name: str, compiled: bytes) -> None:
        """Remember a SynthDef to load on every boot."""
        self.synthdefs[name] = compiled

    def add_node(self, name: str, synthdef: str, params: dict[str, float]) -> NodeState:
        """Record a named node; a name already in use keeps its node id."""
        old = self.nodes.get(name)
        node_id = old.node_id if old else self._allocate()
        node = NodeState(name, synthdef, node_id, dict(params))
        self.nodes[name] = node
        return node

    def _allocate(self) -> int:
        node_id = self._next_id
        self._next_id += 1
        return node_id

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

    def synthdef_messages(self) -> list[bytes]:
        """``/d_recv`` for every SynthDef: send ``/sync`` after them, before the nodes."""
        return [encode_message("/d_recv", data) for data in self.synthdefs.values()]

    def node_messages(self) -> list[bytes]:
        """``/s_new`` for every named node with its last parameter values."""
        return [new_node_message(node) for node in self.nodes.values()]


def param_args(params: dict[str, float]) -> list[OscArg]:
    """Controls as scsynth takes them: name, value, name, value..."""
    return [arg for key, value in params.items() for arg in (key, float(value))]


def new_node_message(node: NodeState, node_id: int | None = None) -> bytes:
    """``/s_new`` at the tail of the default group (id -1: scsynth picks one)."""
    target = node.node_id if node_id is None else node_id
    return encode_message("/s_new", node.synthdef, target, 1, DEFAULT_GROUP,
                          *param_args(node.params))
