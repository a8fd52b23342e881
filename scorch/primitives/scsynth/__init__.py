"""scsynth: the server process, its commands, the door to it, node trees, NRT scores."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.scsynth.client import TREE, Expected, OscClient, ServerStatus
    from scorch.primitives.scsynth.commands import AddAction, Cmd, Reply
    from scorch.primitives.scsynth.door import ScsynthDoor
    from scorch.primitives.scsynth.failures import failures_since
    from scorch.primitives.scsynth.node_tree import (
        TreeNode,
        client_leftovers,
        client_of,
        is_default_group,
        tree_nodes,
    )
    from scorch.primitives.scsynth.placement import (
        METER_NODE,
        PROTECTED,
        READER_NODE_BASE,
        READERS_GROUP,
        ROOM_GROUP,
        STAGE_NODE,
    )
    from scorch.primitives.scsynth.server import Scsynth, ScsynthOptions, local_address, port_in_use
    from scorch.primitives.scsynth.voice_sender import VoiceSender

__all__ = [
    "METER_NODE",
    "PROTECTED",
    "READERS_GROUP",
    "READER_NODE_BASE",
    "ROOM_GROUP",
    "STAGE_NODE",
    "TREE",
    "AddAction",
    "Cmd",
    "Expected",
    "OscClient",
    "Reply",
    "Scsynth",
    "ScsynthDoor",
    "ScsynthOptions",
    "ServerStatus",
    "TreeNode",
    "VoiceSender",
    "client_leftovers",
    "client_of",
    "failures_since",
    "is_default_group",
    "local_address",
    "port_in_use",
    "tree_nodes",
]
__getattr__ = lazy_face(__name__, __file__)
