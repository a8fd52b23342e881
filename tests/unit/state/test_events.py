"""Lifecycle events: one sequence across instances, waitable."""

from __future__ import annotations

from scorch.state.events import EventLog, Kind


def test_event_sequence_is_shared_by_every_room() -> None:
    lobby, attic = EventLog("lobby"), EventLog("attic")
    first = lobby.add(Kind.BOOTING, "a")
    second = attic.add(Kind.BOOTING, "b")
    third = lobby.add(Kind.READY, "c")
    assert first.seq < second.seq < third.seq
    assert [e.message for e in lobby.since(second.seq)] == ["c"]
    assert attic.wait_for(Kind.BOOTING, since=0, timeout=0) == second
