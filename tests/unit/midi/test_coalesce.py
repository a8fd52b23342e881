"""Coalescing: idle keys go at once, a flood keeps only the newest per key."""

from __future__ import annotations

from midi.coalesce import Coalescer


def test_an_idle_key_is_sent_at_once_and_a_flood_waits_in_one_slot():
    c: Coalescer[int] = Coalescer(0.001)
    assert c.offer("a", 1, now=0.0) is True
    assert c.offer("b", 1, now=0.0) is True  # keys do not hold each other up
    assert [c.offer("a", v, now=0.0002) for v in (2, 3, 4)] == [False, False, False]
    assert c.due(0.0005) == ([], 0.001)
    assert c.due(0.001) == ([4], None)
    assert c.coalesced == 2
    assert c.offer("a", 5, now=0.0015) is False  # sent at 0.001: wait for 0.002
    assert c.due(0.002) == ([5], None)
    assert c.offer("a", 6, now=0.004) is True


def test_zero_interval_never_holds_anything():
    c: Coalescer[int] = Coalescer(0.0)
    assert all(c.offer("a", v, now=0.0) for v in range(10))
    assert len(c) == 0
