"""Desired state: named nodes keep their ids and last values across restores."""

from __future__ import annotations

from scorch.primitives.osc import decode_message
from scorch.state.desired import PERSISTENT_NODE_BASE, DesiredState


def test_nodes_get_ids_above_every_sclang_login_range() -> None:
    state = DesiredState()
    a = state.add_node("a", "sine", {})
    b = state.add_node("b", "sine", {})
    assert a.node_id == PERSISTENT_NODE_BASE and b.node_id == a.node_id + 1
    assert a.node_id >= 4 * 2**26


def test_replacing_a_named_node_keeps_its_id() -> None:
    state = DesiredState()
    first = state.add_node("pad", "sine", {"freq": 1})
    again = state.add_node("pad", "saw", {"freq": 2})
    assert again.node_id == first.node_id and state.nodes["pad"].synthdef == "saw"


def test_node_messages_carry_the_last_parameter_values() -> None:
    state = DesiredState()
    state.add_node("pad", "sine", {"freq": 220})
    state.set_params("pad", {"freq": 330, "amp": 0.2})
    (packet,) = state.node_messages()
    msg = decode_message(packet)
    assert msg.address == "/s_new"
    assert msg.args[0] == "sine" and msg.args[1] == PERSISTENT_NODE_BASE
    assert dict(zip(msg.args[4::2], msg.args[5::2], strict=True)) == {
        "freq": 330.0, "amp": 0.20000000298023224}


def test_synthdefs_are_restored_before_nodes() -> None:
    state = DesiredState()
    state.add_synthdef("sine", b"SCgf")
    assert [decode_message(p).address for p in state.synthdef_messages()] == ["/d_recv"]


def test_clear_nodes_forgets_everything_and_returns_what_was_there() -> None:
    state = DesiredState()
    state.add_node("a", "sine", {})
    assert [n.name for n in state.clear_nodes()] == ["a"]
    assert state.nodes == {}
