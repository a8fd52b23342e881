"""scsynth's commands: addresses, add actions and node ids as names, and message builders.

Every OSC message scorch sends to scsynth is built here, so no command string or
magic number appears anywhere else (see Server-Command-Reference in
SuperCollider's help). Builders return encoded bytes, ready for a socket.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Mapping, Sequence

from scorch.primitives.osc import OscArg, encode_bundle, encode_message, timetag

ROOT_NODE = 0
"""The root group every scsynth has."""
DEFAULT_GROUP = 1
"""The group scorch creates right after boot; synths and MIDI voices go in it."""


class Cmd(enum.StrEnum):
    """The addresses of the commands scorch sends."""

    STATUS = "/status"
    SYNC = "/sync"
    QUIT = "/quit"
    NOTIFY = "/notify"
    CLEAR_SCHED = "/clearSched"
    D_RECV = "/d_recv"
    D_FREE = "/d_free"
    S_NEW = "/s_new"
    S_GET = "/s_get"
    N_SET = "/n_set"
    N_FREE = "/n_free"
    N_BEFORE = "/n_before"
    N_AFTER = "/n_after"
    G_HEAD = "/g_head"
    G_TAIL = "/g_tail"
    G_NEW = "/g_new"
    G_DEEP_FREE = "/g_deepFree"
    G_QUERY_TREE = "/g_queryTree"
    B_ALLOC = "/b_alloc"
    B_ALLOC_READ = "/b_allocRead"
    B_FREE = "/b_free"
    B_QUERY = "/b_query"
    B_WRITE = "/b_write"
    B_CLOSE = "/b_close"
    B_GEN = "/b_gen"


class Reply(enum.StrEnum):
    """The addresses of what scsynth sends back."""

    STATUS = "/status.reply"
    SYNCED = "/synced"
    DONE = "/done"
    FAIL = "/fail"
    N_GO = "/n_go"
    N_END = "/n_end"
    N_SET = "/n_set"
    B_INFO = "/b_info"
    QUERY_TREE = "/g_queryTree.reply"


class AddAction(enum.IntEnum):
    """Where a new node goes relative to its target."""

    HEAD = 0
    TAIL = 1
    BEFORE = 2
    AFTER = 3
    REPLACE = 4


def controls(params: Mapping[str, float]) -> list[OscArg]:
    """Controls as scsynth takes them: name, value, name, value... (values as float32)."""
    return [arg for key, value in params.items() for arg in (key, float(value))]


def at(when: float, *packets: bytes) -> bytes:
    """``packets`` in one bundle that scsynth runs at Unix time ``when`` (at once if past).

    scsynth maps the time tag to a sample of its own audio clock, so servers on
    hosts whose clocks agree (chrony) start such bundles within one audio block.
    """
    return encode_bundle(timetag(when), packets)


def status() -> bytes:
    """Ask for ``/status.reply``."""
    return encode_message(Cmd.STATUS)


def sync(sync_id: int) -> bytes:
    """Ask for ``/synced sync_id`` once every asynchronous command before it is done."""
    return encode_message(Cmd.SYNC, sync_id)


_INT32 = struct.Struct(">i")
#: An OSC bundle's head for "at once"; ``/sync`` as a bundle's element, without its id.
_BUNDLE_NOW = encode_bundle(1, ())
_SYNC_ELEMENT = _INT32.pack(len(sync(0))) + sync(0)[:-4]
_SYNCED = b"/synced\x00,i\x00\x00"


def confirmed(start: bytes, sync_id: int) -> bytes:
    """``start`` (an ``/s_new``) in one bundle with ``/sync sync_id``.

    scsynth performs a period's commands together before it runs the period, and
    answers ``/sync`` from its audio thread a period later at the earliest: once the
    answer is read, the synth has run. A gate closed before that (in the same period
    as the start) never starts the envelope, and the synth never ends.
    """
    return b"".join((_BUNDLE_NOW, _INT32.pack(len(start)), start, _SYNC_ELEMENT,
                     _INT32.pack(sync_id)))


def synced_id(data: bytes) -> int | None:
    """The id of a ``/synced`` reply; None for any other datagram."""
    if len(data) < 16 or data[:12] != _SYNCED:
        return None
    return int(_INT32.unpack_from(data, 12)[0])


def quit_server() -> bytes:
    """Ask scsynth to quit."""
    return encode_message(Cmd.QUIT)


def notify(on: bool, client_id: int | None = None) -> bytes:
    """Register (or unregister) the sender for node notifications, as client ``client_id``."""
    args: list[OscArg] = [1 if on else 0]
    if client_id is not None:
        args.append(client_id)
    return encode_message(Cmd.NOTIFY, *args)


def clear_sched() -> bytes:
    """Drop every bundle scheduled for the future."""
    return encode_message(Cmd.CLEAR_SCHED)


def d_recv(data: bytes) -> bytes:
    """Load a compiled SynthDef (``.scsyndef`` bytes)."""
    return encode_message(Cmd.D_RECV, data)


def s_new(synthdef: str, node_id: int, action: AddAction = AddAction.TAIL,
          target: int = DEFAULT_GROUP, args: Sequence[OscArg] = ()) -> bytes:
    """Start a synth; ``node_id`` -1 lets scsynth pick one. ``args`` as :func:`controls` gives."""
    return encode_message(Cmd.S_NEW, synthdef, node_id, int(action), target, *args)


def n_set(node_id: int, params: Mapping[str, float]) -> bytes:
    """Set controls of a node."""
    return encode_message(Cmd.N_SET, node_id, *controls(params))


def n_free(*node_ids: int) -> bytes:
    """Free nodes at once (no release)."""
    return encode_message(Cmd.N_FREE, *node_ids)


def move(node_id: int, action: AddAction, target: int = DEFAULT_GROUP) -> bytes:
    """Move a node: before or after node ``target``, or to the head or tail of group
    ``target`` (``/n_before``, ``/n_after``, ``/g_head``, ``/g_tail``)."""
    if action == AddAction.BEFORE:
        return encode_message(Cmd.N_BEFORE, node_id, target)
    if action == AddAction.AFTER:
        return encode_message(Cmd.N_AFTER, node_id, target)
    if action == AddAction.HEAD:
        return encode_message(Cmd.G_HEAD, target, node_id)
    if action == AddAction.TAIL:
        return encode_message(Cmd.G_TAIL, target, node_id)
    raise ValueError(f"a node cannot be moved with add action {action!r}")


def release(node_id: int) -> bytes:
    """Close a node's gate, so it fades out over its own release and frees itself."""
    return n_set(node_id, {"gate": 0.0})


def g_new(group_id: int, action: AddAction = AddAction.HEAD, target: int = ROOT_NODE) -> bytes:
    """Create a group."""
    return encode_message(Cmd.G_NEW, group_id, int(action), target)


def g_deep_free(group_id: int = ROOT_NODE) -> bytes:
    """Free every synth in a group and all its subgroups (the groups stay)."""
    return encode_message(Cmd.G_DEEP_FREE, group_id)


def b_alloc(bufnum: int, frames: int, channels: int = 1) -> bytes:
    """Allocate an empty buffer (answered with ``/done``)."""
    return encode_message(Cmd.B_ALLOC, bufnum, frames, channels)


def b_alloc_read(bufnum: int, path: str, start: int = 0, frames: int = -1) -> bytes:
    """Allocate a buffer and read a sound file into it (answered with ``/done``)."""
    return encode_message(Cmd.B_ALLOC_READ, bufnum, path, start, frames)


def b_free(bufnum: int) -> bytes:
    """Free a buffer (answered with ``/done``)."""
    return encode_message(Cmd.B_FREE, bufnum)


def b_query(*bufnums: int) -> bytes:
    """Ask for ``/b_info`` (frames, channels, sample rate) of buffers."""
    return encode_message(Cmd.B_QUERY, *bufnums)


def b_write(bufnum: int, path: str, header: str, sample: str, frames: int = -1,
            start: int = 0, leave_open: bool = False) -> bytes:
    """Write a buffer to a sound file; ``leave_open`` keeps it open for DiskOut."""
    return encode_message(Cmd.B_WRITE, bufnum, path, header, sample, frames, start,
                          1 if leave_open else 0)


def b_close(bufnum: int) -> bytes:
    """Close the sound file a buffer holds open (DiskOut's), writing its header."""
    return encode_message(Cmd.B_CLOSE, bufnum)
