"""Desired state: named nodes, their ids and last values, and its JSON form."""

from __future__ import annotations

import json

import pytest

from scorch.errors import InvalidRequest
from scorch.primitives.osc import decode_message
from scorch.primitives.sclang.patterns import PatternRecord
from scorch.state.desired import (
    PERSISTENT_NODE_BASE,
    SAMPLE_BUFFER_BASE,
    BufferState,
    DesiredState,
)


def test_nodes_get_ids_above_every_sclang_login_range() -> None:
    state = DesiredState()
    a = state.add_node("a", "sine", {})
    b = state.add_node("b", "sine", {})
    assert a.node_id == PERSISTENT_NODE_BASE and b.node_id == a.node_id + 1
    assert a.node_id >= 4 * 2**26


def test_a_node_is_recorded_only_once_kept_and_replacing_gives_a_new_id() -> None:
    state = DesiredState()
    first = state.add_node("pad", "sine", {"freq": 1})
    again = state.new_node("pad", "saw", {"freq": 2})
    assert state.nodes["pad"] is first  # not kept yet: the server has not accepted it
    assert again.node_id != first.node_id
    assert state.keep(again) is first
    assert state.nodes["pad"].synthdef == "saw" and state.by_id(again.node_id) is again
    assert state.by_id(first.node_id) is None


def test_unnamed_ids_stay_clear_of_named_ones_and_wrap() -> None:
    state = DesiredState()
    first = state.unnamed_id()
    assert first >= PERSISTENT_NODE_BASE + 2**29 > state.add_node("a", "sine", {}).node_id


def test_desired_state_round_trips_through_versioned_json() -> None:
    state = DesiredState(startup_code="s.boot", gain_db=-6.5)
    state.add_synthdef("sine", b"SCgf\x00\x01")
    state.add_node("pad", "sine", {"freq": 220.0})
    state.buffers["kick"] = BufferState("kick", SAMPLE_BUFFER_BASE, "/s/kick.wav", 4800, 1, 48000)
    data = state.to_json()
    assert data["version"] == 3
    again = DesiredState.from_json(json.loads(json.dumps(data)))
    assert again.synthdefs == state.synthdefs and again.startup_code == "s.boot"
    assert again.gain_db == -6.5
    assert again.nodes["pad"] == state.nodes["pad"]
    assert again.buffers == state.buffers and again.buffers["kick"].seconds == 0.1
    assert again.new_node("b", "sine", {}).node_id > state.nodes["pad"].node_id


@pytest.mark.parametrize(("data", "problem"), [
    ({"version": 4}, "version 4"),
    ({"version": 2, "buffers": {"kick": {"path": "/k.wav"}}}, "KeyError"),
    ({"version": 1, "nodes": {"pad": {"node_id": 1}}}, "KeyError"),
    ({"version": 1, "synthdefs": {"x": "not base64!"}}, "does not fit"),
])
def test_a_bad_desired_state_document_says_what_does_not_fit(
        data: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidRequest, match=problem):
        DesiredState.from_json(data)


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


def test_a_version_1_document_reads_as_a_state_without_buffers() -> None:
    state = DesiredState.from_json({"version": 1, "nodes": {
        "pad": {"synthdef": "sine", "node_id": PERSISTENT_NODE_BASE, "params": {}}}})
    assert list(state.nodes) == ["pad"] and state.buffers == {}


def test_free_bufnums_start_at_scorchs_quarter_and_skip_those_in_use() -> None:
    state = DesiredState()
    assert state.free_bufnums()[:2] == [SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_BASE + 1]
    state.buffers["a"] = BufferState("a", SAMPLE_BUFFER_BASE, "/a.wav")
    assert state.free_bufnums()[0] == SAMPLE_BUFFER_BASE + 1
    assert state.by_bufnum(SAMPLE_BUFFER_BASE) is state.buffers["a"]
    (packet,) = state.buffer_messages()
    assert decode_message(packet).args == (SAMPLE_BUFFER_BASE, "/a.wav", 0, -1)


def test_synthdefs_are_restored_before_nodes() -> None:
    state = DesiredState()
    state.add_synthdef("sine", b"SCgf")
    assert [decode_message(p).address for p in state.synthdef_messages()] == ["/d_recv"]


def test_clear_nodes_forgets_everything_and_returns_what_was_there() -> None:
    state = DesiredState()
    state.add_node("a", "sine", {})
    assert [n.name for n in state.clear_nodes()] == ["a"]
    assert state.nodes == {}


def test_an_approximate_pattern_text_never_replaces_the_code_that_defined_it() -> None:
    state = DesiredState()
    code = PatternRecord("Pdef", "a", False, "1.0", "code", "var n = 3; Pdef(\\a, Pfunc { n })")
    state.record_pattern(code)
    later = state.record_pattern(PatternRecord("Pdef", "a", True, "4", "approx",
                                               "Pdef('a', Pfunc({ \"open Function\" }))"))
    assert later == PatternRecord("Pdef", "a", True, "4", "code", code.text)
    assert state.patterns == {"Pdef a": later}
    exact = PatternRecord("Pdef", "a", True, "4", "source", "Pdef('a', Pbind('degree', 2))")
    assert state.record_pattern(exact) == exact
