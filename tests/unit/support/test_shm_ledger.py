"""The watcher's decisions: which segments made during the session are the suite's leaks."""

from __future__ import annotations

from tests.support.shm.ledger import Ledger, SegmentId

SUITE = {100, 101}
OLD = SegmentId("SuperColliderServer_57110", 1)
SEG = SegmentId("SuperColliderServer_40001", 2)
JACK = SegmentId("jack-0-7", 3)


def look(ledger: Ledger, now: float, mapped: dict[SegmentId, set[int]],
         present: tuple[SegmentId, ...] = (SEG,), ports: frozenset[int] = frozenset(),
         test: str = "t.py::test_a (call)") -> None:
    ledger.observe(now, 1_000_000 + now, dict.fromkeys(present, 8), mapped, SUITE,
                   set(ports), test)


def test_a_segment_of_the_suite_unmapped_past_the_bound_is_a_leak_named_with_its_test() -> None:
    ledger = Ledger([], leak_after=10)
    look(ledger, 0, {SEG: {101}})
    look(ledger, 1, {}, test="t.py::test_kill (teardown)")
    look(ledger, 10.5, {}, test="t.py::test_later (call)")
    assert ledger.finish({}) == []  # not yet: unmapped 9.5 s, then freed
    look(ledger, 11.5, {})
    (leak,) = ledger.finish({SEG: 8})
    assert (leak.name, leak.test, leak.since, leak.removed) == (
        SEG.name, "t.py::test_kill (teardown)", 1_000_001, False)


def test_a_leak_stays_one_after_a_sweep_removes_it() -> None:
    ledger = Ledger([], leak_after=2)
    look(ledger, 0, {JACK: {100}}, present=(JACK,))
    look(ledger, 1, {}, present=(JACK,))
    look(ledger, 3, {}, present=(JACK,))
    look(ledger, 4, {}, present=())  # scsynth's sweep, or the next jackd, freed it
    (leak,) = ledger.finish({})
    assert leak.name == JACK.name and leak.removed
    assert "removed later" in leak.describe() and "t.py::test_a" in leak.describe()


def test_a_segment_freed_or_mapped_again_within_the_bound_is_none() -> None:
    ledger = Ledger([], leak_after=5)
    look(ledger, 0, {SEG: {100}})
    look(ledger, 1, {})  # a restart: scsynth died, the next one maps the same file
    look(ledger, 4, {SEG: {101}})
    look(ledger, 8, {SEG: {101}})
    look(ledger, 9, {}, present=())
    assert ledger.finish({}) == []


def test_segments_of_other_programs_never_count() -> None:
    ledger = Ledger([OLD], leak_after=1)
    look(ledger, 0, {SEG: {555}, OLD: {101}}, present=(SEG, OLD))  # a foreign scsynth
    look(ledger, 1, {SEG: {101}}, present=(SEG, OLD))  # then one of ours maps it too
    look(ledger, 5, {}, present=(SEG, OLD))
    assert ledger.finish({SEG: 8, OLD: 8}) == []


def test_the_same_name_made_again_is_another_segment() -> None:
    ledger = Ledger([OLD], leak_after=1)
    again = SegmentId(OLD.name, 99)
    look(ledger, 0, {again: {100}}, present=(again,))
    look(ledger, 1, {}, present=(again,))
    look(ledger, 3, {}, present=(again,))
    assert [leak.name for leak in ledger.finish({again: 8})] == [OLD.name]


def test_a_never_mapped_scsynth_segment_is_the_suites_only_on_a_port_it_used() -> None:
    ledger = Ledger([], leak_after=1)
    other = SegmentId("SuperColliderServer_40002", 4)
    look(ledger, 0, {}, present=(SEG, other, JACK), ports=frozenset({40001}))
    look(ledger, 2, {}, present=(SEG, other, JACK), ports=frozenset({40001}))
    assert [leak.name for leak in ledger.finish({SEG: 8, other: 8, JACK: 8})] == [SEG.name]


def test_at_the_end_a_suite_segment_no_one_maps_is_a_leak_at_once() -> None:
    ledger = Ledger([], leak_after=10)
    look(ledger, 0, {SEG: {100}})
    look(ledger, 0.5, {}, test="")
    (leak,) = ledger.finish({SEG: 8})
    assert leak.test == "" and "between tests" in leak.describe()
    assert not Ledger([], leak_after=1).new({}) and Ledger([OLD], 1).new({SEG: 8})


def test_a_segment_seen_before_its_foreign_scsynth_mapped_it_is_still_foreign() -> None:
    ledger = Ledger([], leak_after=1)
    ports = frozenset({40001})  # a port the suite used earlier, now another program's
    look(ledger, 0, {}, ports=ports)  # made, not mapped yet
    assert ledger.undecided(SEG)
    look(ledger, 0.5, {SEG: {555}}, ports=ports)
    assert not ledger.undecided(SEG)
    look(ledger, 3, {}, ports=ports)
    assert ledger.finish({SEG: 8}) == []
