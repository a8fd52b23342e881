"""Read scsynth's ``/g_queryTree.reply``: which synths run, where, with which SynthDef."""

from __future__ import annotations

from collections.abc import Sequence

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
