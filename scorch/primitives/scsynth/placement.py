"""Where everything sits in a room's node tree, so that the safety stage is always last.

scsynth's root group holds three nodes, which scorch makes as soon as scsynth is up,
before anything can sound, and keeps::

    0 root
    |- ROOM_GROUP      everything the room plays: sclang's root (0) means this group
    |   '- 1 ...       the default groups, the named nodes, MIDI voices, patterns
    |- STAGE_NODE      the safety stage (scorch.primitives.synthdefs.stage), when on
    '- READERS_GROUP   scorch's own readers of what leaves the room: meters, recorders

Nothing the room plays can come after the stage: sclang sends ``0`` as ROOM_GROUP and
never moves, frees or sets these nodes (``ScorchStage.sc``), scorch's own commands
target ROOM_GROUP or a group inside it, and a keeper (:func:`repairs`) puts back what
anything else disturbs. Their ids are the top of scorch's own client range (client 3
of scsynth's 4 logins), which nothing else allocates.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorch.primitives.osc import OscArg, OscMessage, encode_bundle, encode_message
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.commands import DEFAULT_GROUP, ROOT_NODE, AddAction, Cmd

#: The level meter scorch runs in a room while someone watches (``scorch.app.meters``).
METER_NODE = 2**28 - 1
#: The group everything the room plays lives in.
ROOM_GROUP = 2**28 - 2
#: The safety stage.
STAGE_NODE = 2**28 - 3
#: The group of scorch's readers, after the stage.
READERS_GROUP = 2**28 - 4
#: The first id of the synths scorch's recorders put among the readers (``app/studio``).
READER_NODE_BASE = 2**30 + 2**29 + 2**28
#: Nodes code may not move, free or set (the room group only as its root).
PROTECTED = frozenset({ROOM_GROUP, STAGE_NODE, READERS_GROUP, METER_NODE})


@dataclass(frozen=True)
class Stage:
    """The stage a room runs: its SynthDef and the values of its controls."""

    synthdef: str
    compiled: bytes
    controls: tuple[tuple[str, float], ...]

    def args(self) -> list[OscArg]:
        """Its controls as ``/s_new`` takes them."""
        return [arg for pair in self.controls for arg in pair]

    def start(self, fade: float = 0.0) -> bytes:
        """``/s_new`` of the stage after the room group, with its controls."""
        return commands.s_new(self.synthdef, STAGE_NODE, AddAction.AFTER, ROOM_GROUP,
                              [*self.args(), "fade", float(fade)])


def boot(stage: Stage | None) -> list[bytes]:
    """What a new scsynth gets first, in order (each waited for with ``/sync`` after it).

    The stage exists before the room group does, so nothing can sound before it: code
    that targets the room (sclang sends 0 as ROOM_GROUP) fails until then.
    """
    tree = [commands.g_new(ROOM_GROUP, AddAction.HEAD, ROOT_NODE),
            commands.g_new(DEFAULT_GROUP, AddAction.HEAD, ROOM_GROUP)]
    if stage is None:
        return [encode_bundle(1, [*tree, commands.g_new(READERS_GROUP, AddAction.TAIL,
                                                        ROOT_NODE)])]
    return [commands.d_recv(stage.compiled),
            encode_bundle(1, [commands.s_new(stage.synthdef, STAGE_NODE, AddAction.TAIL,
                                             ROOT_NODE, stage.args()),
                              *tree,
                              commands.g_new(READERS_GROUP, AddAction.AFTER, STAGE_NODE)])]


def repairs(msg: OscMessage, stage: Stage | None) -> list[bytes]:
    """What puts the tree back after scsynth told ``msg`` (a node notification).

    A node that went into the root group, or into the readers group, moves to the tail of
    the room group; the stage or the room group moved, paused or freed is put back (a
    freed stage starts again with its controls, its SynthDef sent with it).
    """
    args = msg.args
    if msg.address not in _NOTICES or len(args) < 4 or not all(
            isinstance(a, int) and not isinstance(a, bool) for a in args[:4]):
        return []
    node, parent, _, after = (int(a) for a in args[:4])  # type: ignore[arg-type]
    if node == STAGE_NODE and stage is not None:
        if msg.address == "/n_end":
            return [commands.d_recv(stage.compiled),
                    encode_bundle(1, [stage.start(), commands.move(
                        READERS_GROUP, AddAction.AFTER, STAGE_NODE)])]
        if msg.address == "/n_off":
            return [encode_message("/n_run", STAGE_NODE, 1)]
        if parent != ROOT_NODE or after not in (-1, READERS_GROUP):
            return [_order(stage)]
        return []
    if node == ROOM_GROUP:
        if msg.address == "/n_end":
            return [encode_bundle(1, [commands.g_new(ROOM_GROUP, AddAction.HEAD, ROOT_NODE),
                                      commands.g_new(DEFAULT_GROUP, AddAction.HEAD,
                                                     ROOM_GROUP)])]
        if msg.address == "/n_move" and parent != ROOT_NODE:
            return [_order(stage)]
        return []
    if node == READERS_GROUP:
        if msg.address == "/n_end":
            anchor = (AddAction.AFTER, STAGE_NODE) if stage else (AddAction.TAIL, ROOT_NODE)
            return [commands.g_new(READERS_GROUP, *anchor)]
        return []
    if msg.address in ("/n_go", "/n_move") and (
            parent == ROOT_NODE or (parent == READERS_GROUP and node != METER_NODE
                                    and not _reader(node))):
        return [commands.move(node, AddAction.TAIL, ROOM_GROUP)]
    return []


_NOTICES = ("/n_go", "/n_end", "/n_off", "/n_move")


def _reader(node: int) -> bool:
    return node >= READER_NODE_BASE


def _order(stage: Stage | None) -> bytes:
    """The room group at the head of the root, the stage and the readers after it."""
    moves = [commands.move(ROOM_GROUP, AddAction.HEAD, ROOT_NODE)]
    if stage is not None:
        moves.append(commands.move(STAGE_NODE, AddAction.AFTER, ROOM_GROUP))
        moves.append(commands.move(READERS_GROUP, AddAction.AFTER, STAGE_NODE))
    return encode_bundle(1, moves)


def silence() -> list[bytes]:
    """Free every synth the room and the readers run; the stage stays (``stop``)."""
    return [encode_message(Cmd.G_DEEP_FREE, ROOM_GROUP, READERS_GROUP)]
