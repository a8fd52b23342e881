"""The journal of changes: what undo and redo take, in which order, and its file form."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scorch.state.journal import Journal, entry_json, redone_line, undone_line
from scorch.state.session import (
    BufferSpec,
    NodeSpec,
    PatternSpec,
    RoomSpec,
    Session,
    diff,
)

ROOMS = ("a", "b")


def state(tag: float) -> Session:
    return Session(rooms={"a": RoomSpec(nodes={"n": NodeSpec("sine", {"freq": tag})})})


def test_undo_takes_the_latest_of_the_room_and_redo_the_latest_undone() -> None:
    journal = Journal()
    first = journal.record("set", "a1", ["a"], state(1), 0.0)
    journal.record("set", "b1", ["b"], state(2), 1.0)
    third = journal.record("tempo", "t", [], state(3), 2.0)
    assert journal.to_undo("a") == first
    assert journal.to_undo(None) == third
    journal.undone(first.seq, state(9))
    journal.undone(third.seq, state(8))
    assert journal.to_undo("a") is None
    latest, of_a = journal.to_redo(None), journal.to_redo("a")
    assert latest is not None and latest.seq == third.seq
    assert of_a is not None and of_a.seq == first.seq and of_a.after == state(9)


def test_a_new_change_to_a_room_drops_its_undone_changes_and_keeps_the_others() -> None:
    journal = Journal()
    a = journal.record("set", "a1", ["a"], state(1), 0.0)
    b = journal.record("set", "b1", ["b"], state(2), 1.0)
    journal.undone(a.seq, state(3))
    journal.undone(b.seq, state(4))
    journal.record("set", "a2", ["a"], state(5), 2.0)
    assert [e.summary for e in journal.entries] == ["b1", "a2"]
    latest = journal.to_redo(None)
    assert latest is not None and latest.summary == "b1"


@given(st.lists(st.tuples(st.sampled_from(["record", "undo", "redo"]),
                          st.sampled_from([*ROOMS, None])), max_size=60),
       st.integers(min_value=1, max_value=8))
# Found by hypothesis: b's change is undone, then the installation's, then b's redone; a
# compacted file read back dropped the installation's undone change (taken as superseded).
@example([("record", None), ("record", "b"), ("undo", "b"), ("undo", None), ("redo", "b")], 2)
@example([("record", "a"), ("record", "b"), ("undo", "a"), ("record", "c")], 8)
def test_any_sequence_keeps_the_bound_and_reads_back_from_its_lines_or_compacted(
    steps: list[tuple[str, str | None]], limit: int,
) -> None:
    journal = Journal(limit=limit)
    written: list[str] = []
    clock = 0.0
    for what, room in steps:
        clock += 1
        if what == "record":
            entry = journal.record("set", f"{room}{clock}", [room] if room else [],
                                   state(clock), clock)
            written.append(json.dumps({"entry": entry_json(entry)}))
        elif what == "undo" and (entry := journal.to_undo(room)) is not None:
            assert not entry.undone and entry.touches(room)
            written.append(json.dumps(undone_line(journal.undone(entry.seq, state(-clock)))))
        elif what == "redo" and (entry := journal.to_redo(room)) is not None:
            assert entry.undone and entry.after is not None
            written.append(json.dumps(redone_line(journal.redone(entry.seq))))
        assert len(journal.entries) <= limit
        seqs = [e.seq for e in journal.entries]
        assert seqs == sorted(set(seqs))
    for lines in (written, [json.dumps(x) for x in journal.lines()]):
        back = Journal(limit=limit)
        for line in lines:
            back.read_line(json.loads(line))
        assert back.entries == journal.entries
        assert back.to_redo(None) == journal.to_redo(None)
        assert back.to_undo("a") == journal.to_undo("a")


def test_a_line_that_is_not_one_is_a_value_error() -> None:
    journal = Journal()
    for line in ({}, {"entry": {"seq": "x"}}, {"undone": 1}, {"entry": None}):
        with pytest.raises(ValueError):
            journal.read_line(line)
    journal.read_line({"redone": 7})  # a mark for an entry the bound dropped: nothing to do


def test_patterns_are_left_alone_unless_both_sides_hold_them() -> None:
    beat = PatternSpec("Pdef", "beat", True, "Pdef('beat', Pbind())")
    held = Session(rooms={"a": RoomSpec(patterns={"Pdef beat": beat}, patterns_known=True)})
    none = Session(rooms={"a": RoomSpec(patterns={}, patterns_known=True)})
    unknown = Session(rooms={"a": RoomSpec()})
    assert diff(held, unknown, lambda _: {}) == []
    assert [c.action for c in diff(held, none, lambda _: {})] == ["clear"]
    (define,) = diff(none, held, lambda _: {})
    assert define.action == "pattern" and define.pattern == beat
    stopped = Session(rooms={"a": RoomSpec(
        patterns={"Pdef beat": PatternSpec("Pdef", "beat", False, beat.text)},
        patterns_known=True, buffers={"x": BufferSpec("/x.wav", 100)})})
    assert [c.detail for c in diff(stopped, held, lambda _: {})][-1] == "play Pdef beat"
