"""scsynth's node tree read with parents, what a dead sclang left in it, and the synths kept
current between trees from node notifications."""

from __future__ import annotations

from scorch.primitives.scsynth.node_tree import (
    CLIENT_SPAN,
    UNNAMED_YET,
    LiveSynths,
    TreeNode,
    client_leftovers,
    is_default_group,
    tree_nodes,
    tree_synths,
)

# root 0: default group 1 (a named node, an Ndef group with its synth and monitor group,
# a pattern's note), client 1's default group, a MIDI voice at the root
REPLY = [0, 0, 3,
         1, 4,
         2**30, -1, "sine",
         1000, 1, 1003, -1, "temp__0drone123_1",
         1001, 1, 1004, -1, "system_link_audio_2",
         1002, -1, "default",
         CLIENT_SPAN + 1, 0,
         2**29 + 5, -1, "sine"]


def test_tree_nodes_gives_each_node_its_parent_depth_first() -> None:
    assert tree_nodes(REPLY) == [
        TreeNode(1, 0, None), TreeNode(2**30, 1, "sine"), TreeNode(1000, 1, None),
        TreeNode(1003, 1000, "temp__0drone123_1"), TreeNode(1001, 1, None),
        TreeNode(1004, 1001, "system_link_audio_2"), TreeNode(1002, 1, "default"),
        TreeNode(CLIENT_SPAN + 1, 0, None), TreeNode(2**29 + 5, 0, "sine")]
    assert [s for s, _ in tree_synths(REPLY)] == [2**30, 1003, 1004, 1002, 2**29 + 5]


def test_tree_nodes_skips_controls_when_the_reply_carries_them() -> None:
    reply = [1, 0, 2, 1, 1, 1000, -1, "default", 2, "freq", 440.0, "amp", 0.1, 2**30, -1,
             "sine", 0]
    assert tree_nodes(reply) == [TreeNode(1, 0, None), TreeNode(1000, 1, "default"),
                                 TreeNode(2**30, 0, "sine")]
    assert tree_nodes([0, 0]) == []


def test_a_dead_sclangs_leftovers_are_its_outermost_nodes_never_a_default_group() -> None:
    nodes = tree_nodes(REPLY)
    assert client_leftovers(nodes, 0) == [1000, 1001, 1002]  # groups take their synths along
    assert client_leftovers(nodes, 1) == []
    assert is_default_group(1) and is_default_group(3 * CLIENT_SPAN + 1)
    assert not is_default_group(1001) and not is_default_group(2**30 + 1)


def test_live_synths_follow_the_notifications_between_two_trees() -> None:
    live = LiveSynths()
    live.tree(tree_synths(REPLY))
    assert len(live.synths()) == 5
    # a synth ends: gone at once; a group's end and a message too short change nothing
    assert not live.notified("/n_end", [1002, 1, -1, -1, 0])
    assert not live.notified("/n_end", [1001, 1, -1, -1, 1, -1, -1])
    assert not live.notified("/n_go", [7])
    assert 1002 not in dict(live.synths()) and len(live.synths()) == 4
    # a synth starts: there, its SynthDef unknown until a tree says it; a group is no synth
    assert live.notified("/n_go", [2000, 1, -1, -1, 0])
    assert not live.notified("/n_go", [2001, 1, -1, -1, 1, -1, -1])
    assert dict(live.synths())[2000] == UNNAMED_YET and 2001 not in dict(live.synths())
    live.tree([(2000, "fx"), (2**30, "sine")])  # a tree replaces what the notifications made
    assert live.synths() == [(2000, "fx"), (2**30, "sine")]


def test_live_synths_keep_when_each_seen_start_came_until_it_ends() -> None:
    live = LiveSynths()
    live.tree([(1000, "sine")])  # there before: no start seen
    assert live.notified("/n_go", [2000, 1, -1, -1, 0], at=50.0)
    assert live.notified("/n_go", [2001, 1, -1, -1, 0], at=51.0)
    assert live.started() == {2000: 50.0, 2001: 51.0}
    live.notified("/n_end", [2000, 1, -1, -1, 0])
    live.tree([(1000, "sine"), (2001, "fx")])
    assert live.started() == {2001: 51.0}
    live.tree([(1000, "sine")])  # a tree without it: gone, its start too
    assert live.started() == {}
