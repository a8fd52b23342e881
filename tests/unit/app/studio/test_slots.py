"""Capture slots: buffers and the taps captures of one node share."""

from __future__ import annotations

import pytest

from scorch.app.studio.capture import BUFFERS, TAP_BUSES, Slots, Tap
from scorch.errors import CaptureError


def test_captures_of_one_node_share_its_tap_and_the_last_puts_the_node_back() -> None:
    slots, put_back = Slots(), list[Tap]()
    key = ("hall", 1, 1000)
    first_buf, _, first = slots.take("hall", key)
    second_buf, _, second = slots.take("hall", key)
    assert first is second and first is not None and first.users == 2
    first.out = 0.0  # the first capture moved the node
    slots.give("hall", first_buf, key, put_back.append)
    assert put_back == []  # the second still hears it
    slots.give("hall", second_buf, key, put_back.append)
    assert put_back == [first]
    _, _, again = slots.take("hall", key)
    assert again is not first and again is not None and again.out is None


def test_a_tap_never_moved_is_not_put_back_and_a_gone_scsynths_taps_are_dropped() -> None:
    slots, put_back = Slots(), list[Tap]()
    buf, _, tap = slots.take("hall", ("hall", 1, 1000))
    slots.give("hall", buf, ("hall", 1, 1000), put_back.append)
    assert tap is not None and put_back == []
    buf, _, tap = slots.take("hall", ("hall", 1, 1000))
    assert tap is not None
    tap.out = 0.0
    slots.give("hall", buf, ("hall", 1, 1000), None)  # scsynth gone: nothing to move back
    assert put_back == []


def test_other_nodes_and_scsynths_get_their_own_buses_until_there_are_none() -> None:
    slots = Slots()
    taps = [slots.take("hall", ("hall", generation, 1000))[2] for generation in (1, 2)]
    taps += [slots.take("hall", ("hall", 2, node))[2] for node in (1001, 1002)]
    assert sorted(t.bus for t in taps if t is not None) == sorted(TAP_BUSES)
    assert slots.take("lobby", ("lobby", 1, 1000))[2] is not None  # another room's own
    with pytest.raises(CaptureError, match="already hears 4 nodes alone"):
        slots.take("hall", ("hall", 2, 1003))


def test_buffers_run_out_with_a_clear_error() -> None:
    slots = Slots()
    taken = {slots.take("hall")[0] for _ in BUFFERS}
    assert taken == set(BUFFERS)
    with pytest.raises(CaptureError, match=f"already runs {len(BUFFERS)} captures"):
        slots.take("hall")
