"""Read scsynth's ``/g_queryTree.reply``: which synths run, where, with which SynthDef."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scorch.primitives.osc import OscArg


def tree_synths(args: Sequence[OscArg]) -> list[tuple[int, str]]:
    """(node id, SynthDef) of every synth in a ``/g_queryTree.reply``, nested groups too.

    The reply is ``flag, group id, child count`` then each child depth first:
    ``id, child count`` (-1 for a synth, followed by its SynthDef name and, when
    ``flag`` is 1, its control count and control name/value pairs).
    """
    if len(args) < 3:
        return []
    with_controls = args[0] == 1
    synths: list[tuple[int, str]] = []
    position = 3
    pending = [int(args[2])]  # type: ignore[arg-type]  # children left, per open group
    while pending and position < len(args):
        if pending[-1] == 0:
            pending.pop()
            continue
        pending[-1] -= 1
        node_id, children = int(args[position]), int(args[position + 1])  # type: ignore[arg-type]
        position += 2
        if children == -1:
            synths.append((node_id, str(args[position])))
            position += 1
            if with_controls:
                count = int(args[position])  # type: ignore[arg-type]
                position += 1 + 2 * count
        else:
            pending.append(children)
    return synths


#: Node ids of one client of scsynth (``-l 4`` logins): client k allocates in
#: [k * CLIENT_SPAN, (k + 1) * CLIENT_SPAN), its default group at k * CLIENT_SPAN + 1.
CLIENT_SPAN = 2**26


@dataclass(frozen=True)
class TreeNode:
    """One node of a ``/g_queryTree.reply``: a group (``synthdef`` None) or a synth."""

    node_id: int
    parent: int
    synthdef: str | None


def tree_nodes(args: Sequence[OscArg]) -> list[TreeNode]:
    """Every node below the queried group, depth first, each with its parent."""
    if len(args) < 3:
        return []
    with_controls = args[0] == 1
    nodes: list[TreeNode] = []
    position = 3
    pending = [(_int(args[1]), _int(args[2]))]  # (group, children left)
    while pending and position < len(args):
        group, left = pending[-1]
        if left == 0:
            pending.pop()
            continue
        pending[-1] = (group, left - 1)
        node_id, children = _int(args[position]), _int(args[position + 1])
        position += 2
        if children == -1:
            nodes.append(TreeNode(node_id, group, str(args[position])))
            position += 1
            if with_controls:
                count = _int(args[position])
                position += 1 + 2 * count
        else:
            nodes.append(TreeNode(node_id, group, None))
            pending.append((node_id, children))
    return nodes


def _int(arg: OscArg) -> int:
    """A count or an id of the reply (ValueError: the reply is not a node tree)."""
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        raise ValueError(f"not a node tree: {arg!r} where a number belongs")
    return int(arg)


def client_of(node_id: int) -> int:
    """The login slot whose range holds ``node_id`` (4 and above: none, scorch's own ids)."""
    return node_id // CLIENT_SPAN


def is_default_group(node_id: int) -> bool:
    """A client's default group (1, 2**26 + 1, ...): made by sclang's attach, kept."""
    return node_id % CLIENT_SPAN == 1 and client_of(node_id) < 4


def client_leftovers(nodes: Sequence[TreeNode], client_id: int) -> list[int]:
    """The nodes ``client_id`` made, outermost only (freeing a group frees what it holds).

    Its default group stays (scorch's named nodes play in group 1), as does the root.
    """
    mine = {n.node_id for n in nodes
            if client_of(n.node_id) == client_id and n.node_id != 0
            and not is_default_group(n.node_id)}
    return [n.node_id for n in nodes if n.node_id in mine and n.parent not in mine]


#: The SynthDef of a synth whose ``/n_go`` came in after the last node tree.
UNNAMED_YET = "(unknown)"


class LiveSynths:
    """The synths scsynth runs now, kept from its node notifications and node trees.

    A tree gives each synth's SynthDef; between two trees ``/n_end`` removes a synth at
    once and ``/n_go`` adds one (its SynthDef unknown until the next tree). Pure: the
    OSC client feeds it from its receive thread. A synth whose ``/n_go`` came keeps the
    time it came (what made it is looked for by that time).
    """

    def __init__(self) -> None:
        self._synths: dict[int, str] = {}
        self._started: dict[int, float] = {}

    def tree(self, synths: Sequence[tuple[int, str]]) -> None:
        """A whole tree: what scsynth ran when it answered (the notifications before it
        are in it; those after it come after)."""
        self._synths = dict(synths)
        self._started = {n: t for n, t in self._started.items() if n in self._synths}

    def notified(self, address: str, args: Sequence[OscArg], at: float | None = None) -> bool:
        """Take a ``/n_go`` or ``/n_end`` (that came at Unix time ``at``); True when it
        started a synth (not a group)."""
        if len(args) < 5 or isinstance(args[0], bool) or not isinstance(args[0], int):
            return False
        node_id = args[0]
        if address == "/n_end":
            self._synths.pop(node_id, None)
            self._started.pop(node_id, None)
            return False
        if address != "/n_go" or args[4] != 0:
            return False
        self._synths.setdefault(node_id, UNNAMED_YET)
        if at is not None:
            self._started[node_id] = at
        return True

    def started(self) -> dict[int, float]:
        """The Unix time each synth's ``/n_go`` came, of those whose start was seen."""
        return dict(self._started)

    def synths(self) -> list[tuple[int, str]]:
        """(node id, SynthDef) of every synth running now, as far as scsynth said."""
        return list(self._synths.items())
