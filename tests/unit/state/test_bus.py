"""The change bus: every subscriber gets what it wants once and in order; nobody waits on
a subscriber; a slow or failing one stalls only itself."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.state.bus import Bus, Published
from scorch.state.changes import Missed, NodeEnded, ParamsChanged, TempoChanged


def change(i: int, room: str = "lobby") -> ParamsChanged:
    return ParamsChanged(room, "pad", {"freq": float(i)})


def collect(bus: Bus, name: str, **options: object) -> list[Published]:
    got: list[Published] = []
    bus.subscribe(got.append, name, **options)  # type: ignore[arg-type]
    return got


def test_each_subscriber_gets_every_change_once_in_the_order_published() -> None:
    bus = Bus()
    a, b = collect(bus, "a", settle=True), collect(bus, "b", settle=True)
    seqs = [bus.publish(change(i)) for i in range(500)]
    assert bus.settle(5.0)
    assert seqs == list(range(1, 501))
    assert [p.seq for p in a] == [p.seq for p in b] == seqs
    assert [p.change for p in a] == [change(i) for i in range(500)]
    bus.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["lobby", "hall"])),
                max_size=60),
       st.integers(1, 4))
def test_from_several_publishers_each_subscriber_sees_one_total_order(
    plan: list[tuple[int, str]], readers: int
) -> None:
    bus = Bus()
    wanted = [collect(bus, f"r{i}", settle=True,
                      wants=(lambda c: c.room == "hall") if i % 2 else None)
              for i in range(readers)]
    cursor = bus.reader()
    threads = [threading.Thread(target=lambda k=k: [bus.publish(change(i, room))
                                                     for j, (i, room) in enumerate(plan)
                                                     if j % 4 == k]) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert bus.settle(5.0)
    everything = cursor.take()
    assert [p.seq for p in everything] == list(range(1, len(plan) + 1))
    for i, got in enumerate(wanted):
        expected = [p for p in everything if not i % 2 or p.change.room == "hall"]  # type: ignore[union-attr]
        assert got == expected
    bus.close()


def test_publish_never_waits_on_a_slow_subscriber_and_the_others_go_on() -> None:
    bus = Bus()
    release = threading.Event()
    bus.subscribe(lambda p: release.wait(5.0), "slow")
    fast = collect(bus, "fast", settle=True)
    started = time.monotonic()
    for i in range(1000):
        bus.publish(change(i))
    assert time.monotonic() - started < 0.5  # a thousand while the slow one sleeps
    assert bus.settle(2.0) and len(fast) == 1000
    release.set()
    bus.close()


def test_a_failing_subscriber_is_logged_and_keeps_getting_the_next_changes() -> None:
    bus = Bus()
    seen: list[int] = []

    def flaky(published: Published) -> None:
        seen.append(published.seq)
        if published.seq % 2:
            raise RuntimeError("a subscriber's bug")

    subscription = bus.subscribe(flaky, "flaky", settle=True)
    for i in range(10):
        bus.publish(change(i))
    assert bus.settle(2.0)
    assert seen == list(range(1, 11))
    assert subscription.stats()["failed"] == 5
    bus.close()


def test_a_filter_that_raises_takes_nothing_and_never_fails_the_publisher() -> None:
    bus = Bus()
    got = collect(bus, "picky", settle=True, wants=lambda c: c.node == "pad")
    bus.publish(TempoChanged("", 120.0, 4, True))  # no node: the filter raises
    bus.publish(NodeEnded("lobby", "pad", 1, "released"))
    assert bus.settle(2.0)
    assert [type(p.change) for p in got] == [NodeEnded]
    bus.close()


def test_a_subscriber_that_falls_too_far_behind_is_told_how_much_it_missed() -> None:
    bus = Bus()
    release = threading.Event()
    got: list[Published] = []

    def slow(published: Published) -> None:
        release.wait(5.0)
        got.append(published)

    bus.subscribe(slow, "slow", settle=True)
    from scorch.state import bus as module

    for i in range(2 * module.QUEUE):  # the first batch it took is at most QUEUE
        bus.publish(change(i))
    release.set()
    assert bus.settle(10.0)
    missed = [p.change for p in got if isinstance(p.change, Missed)]
    assert missed
    assert sum(m.count for m in missed) + len(got) - len(missed) == 2 * module.QUEUE
    seqs = [p.seq for p in got if not isinstance(p.change, Missed)]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    bus.close()


def test_a_reader_takes_what_came_since_its_last_take_and_waits_for_the_next() -> None:
    bus = Bus(keep=10)
    reader = bus.reader()
    assert reader.take(0.01) == []
    bus.publish(change(1))
    assert [p.change for p in reader.take()] == [change(1)]
    threading.Timer(0.05, lambda: bus.publish(change(2))).start()
    assert [p.change for p in reader.take(2.0)] == [change(2)]
    for i in range(25):
        bus.publish(change(i))
    taken = reader.take()
    assert isinstance(taken[0].change, Missed) and taken[0].change.count == 15
    assert [p.seq for p in taken[1:]] == list(range(18, 28))


def test_settle_waits_only_for_settling_subscribers() -> None:
    bus = Bus()
    release = threading.Event()
    bus.subscribe(lambda p: release.wait(5.0), "slow page")
    took = threading.Event()
    bus.subscribe(lambda p: took.set(), "router", settle=True)
    bus.publish(change(1))
    assert bus.settle(1.0) and took.is_set()
    release.set()
    bus.close()
