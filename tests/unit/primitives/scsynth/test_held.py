"""Releases held until scsynth confirms their synth's start: the bookkeeping alone."""

from __future__ import annotations

from scorch.primitives.scsynth.held import HeldReleases

ROOM = ("127.0.0.1", 57110)


def test_a_release_waits_only_for_an_unconfirmed_start_and_goes_once() -> None:
    held = HeldReleases(timeout=0.5)
    assert not held.hold(1, ROOM)  # no start known: it goes at once
    held.started(1, 10.0)
    assert held.waiting()
    assert held.hold(1, ROOM)
    assert held.next_due() == 10.5
    assert held.confirmed(1) == ROOM  # the answer sends it
    assert held.due(11.0) == []  # and the deadline sends nothing twice
    assert not held.waiting()
    held.started(2, 20.0)
    assert held.confirmed(2) is None  # confirmed before its key came up
    assert not held.hold(2, ROOM)
    assert (held.held, held.unconfirmed) == (1, 0)


def test_an_answer_that_never_comes_lets_the_release_go_at_the_deadline() -> None:
    held = HeldReleases(timeout=0.5)
    held.started(3, 10.0)
    held.started(4, 10.2)
    assert held.hold(3, ROOM)
    assert held.due(10.49) == []
    assert held.due(10.5) == [(3, ROOM)]
    assert held.unconfirmed == 1
    held.due(10.8)  # 4's start is now too old to hold its release back
    assert not held.hold(4, ROOM)
    assert not held.waiting()


def test_a_node_started_again_is_kept_as_new_while_older_starts_are_forgotten() -> None:
    held = HeldReleases(timeout=0.5)
    held.started(7, 10.0)
    held.started(8, 10.1)
    held.started(7, 10.4)  # its id used again: now the newest start
    held.due(10.7)  # 8's start is too old, 7's new one is not
    assert not held.hold(8, ROOM)
    assert held.hold(7, ROOM)


def test_a_freed_synth_releases_nothing_and_a_close_takes_what_is_held() -> None:
    held = HeldReleases(timeout=0.5)
    for node in (5, 6):
        held.started(node, 10.0)
        held.hold(node, ROOM)
    held.drop(5)
    assert held.take_all() == [(6, ROOM)]
    assert held.due(99.0) == []
    assert not held.waiting()
