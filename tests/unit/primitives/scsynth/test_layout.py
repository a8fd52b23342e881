"""The room's layout: what a new scsynth gets first, and what the keeper sends back."""

from __future__ import annotations

import pytest

from scorch.primitives.osc import OscMessage, decode_packet
from scorch.primitives.scsynth.placement import (
    METER_NODE,
    READER_NODE_BASE,
    READERS_GROUP,
    ROOM_GROUP,
    STAGE_NODE,
    Stage,
    boot,
    repairs,
    silence,
)

STAGE = Stage("scorch_stage_2", b"SCgf-bytes", (("ceiling", -1.0), ("gain", -6.0)))


def messages(packets: list[bytes]) -> list[tuple[object, ...]]:
    return [(m.address, *m.args) for p in packets for m in decode_packet(p)]


def test_the_stage_comes_first_its_def_then_it_before_the_groups_in_one_bundle() -> None:
    packets = boot(STAGE)
    assert messages(packets[:1]) == [("/d_recv", b"SCgf-bytes")]
    assert messages(packets[1:]) == [
        ("/s_new", "scorch_stage_2", STAGE_NODE, 1, 0, "ceiling", -1.0, "gain", -6.0),
        ("/g_new", ROOM_GROUP, 0, 0), ("/g_new", 1, 0, ROOM_GROUP),
        ("/g_new", READERS_GROUP, 3, STAGE_NODE)]


def test_without_a_stage_the_groups_are_made_alike() -> None:
    assert messages(boot(None)) == [("/g_new", ROOM_GROUP, 0, 0), ("/g_new", 1, 0, ROOM_GROUP),
                                    ("/g_new", READERS_GROUP, 1, 0)]


def notice(address: str, node: int, parent: int, before: int = -1, after: int = -1
           ) -> OscMessage:
    return OscMessage(address, (node, parent, before, after, 0))


@pytest.mark.parametrize("msg", [
    notice("/n_go", 1000, 0, STAGE_NODE, READERS_GROUP),
    notice("/n_move", 1000, 0, READERS_GROUP, -1),
    notice("/n_go", 1000, READERS_GROUP),
])
def test_a_node_in_the_root_or_among_the_readers_goes_to_the_rooms_tail(msg: OscMessage
                                                                        ) -> None:
    assert messages(repairs(msg, STAGE)) == [("/g_tail", ROOM_GROUP, 1000)]


@pytest.mark.parametrize("msg", [
    notice("/n_go", 1000, 1), notice("/n_go", METER_NODE, READERS_GROUP),
    notice("/n_go", READER_NODE_BASE + 5, READERS_GROUP), notice("/n_end", 1000, 0),
    notice("/n_go", STAGE_NODE, 0, ROOM_GROUP, READERS_GROUP),
    notice("/n_go", ROOM_GROUP, 0, -1, STAGE_NODE),
    OscMessage("/n_go", ("x", 0, 0, 0, 0)), OscMessage("/n_go", (1,)),
    OscMessage("/status.reply", (1, 2, 3, 4)),
])
def test_what_is_in_its_place_is_left_alone(msg: OscMessage) -> None:
    assert repairs(msg, STAGE) == []


def test_a_freed_stage_starts_again_with_its_controls_its_def_sent_first() -> None:
    sent = messages(repairs(notice("/n_end", STAGE_NODE, 0), STAGE))
    assert sent[0] == ("/d_recv", b"SCgf-bytes")
    assert sent[1] == ("/s_new", "scorch_stage_2", STAGE_NODE, 3, ROOM_GROUP, "ceiling", -1.0,
                       "gain", -6.0, "fade", 0.0)
    assert sent[2] == ("/n_after", READERS_GROUP, STAGE_NODE)
    assert repairs(notice("/n_end", STAGE_NODE, 0), None) == []  # switched off: gone


@pytest.mark.parametrize("msg", [notice("/n_move", STAGE_NODE, 1000),
                                 notice("/n_move", STAGE_NODE, 0, ROOM_GROUP, 1000),
                                 notice("/n_move", ROOM_GROUP, 1000)])
def test_the_stage_or_the_room_group_moved_are_put_back_in_order(msg: OscMessage) -> None:
    assert messages(repairs(msg, STAGE)) == [("/g_head", 0, ROOM_GROUP),
                                             ("/n_after", STAGE_NODE, ROOM_GROUP),
                                             ("/n_after", READERS_GROUP, STAGE_NODE)]


def test_a_paused_stage_runs_again_and_lost_groups_are_made_again() -> None:
    assert messages(repairs(notice("/n_off", STAGE_NODE, 0), STAGE)) == [
        ("/n_run", STAGE_NODE, 1)]
    assert messages(repairs(notice("/n_end", ROOM_GROUP, 0), STAGE)) == [
        ("/g_new", ROOM_GROUP, 0, 0), ("/g_new", 1, 0, ROOM_GROUP)]
    assert messages(repairs(notice("/n_end", READERS_GROUP, 0), STAGE)) == [
        ("/g_new", READERS_GROUP, 3, STAGE_NODE)]


def test_stop_frees_the_room_and_the_readers_not_the_stage() -> None:
    assert messages(silence()) == [("/g_deepFree", ROOM_GROUP, READERS_GROUP)]
