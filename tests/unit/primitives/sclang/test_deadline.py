"""The start-up deadline a working sclang may stretch and a stuck one cannot."""

from __future__ import annotations

from collections.abc import Callable

from scorch.primitives.sclang.deadline import CAP, PROGRESS, ProgressDeadline


def cpu_at(value: float | None) -> Callable[[], float | None]:
    return lambda: value


def test_before_the_limit_the_cpu_is_not_even_read() -> None:
    deadline = ProgressDeadline(started=100.0, limit=20.0, cpu=1.0)

    def unread() -> float:
        raise AssertionError("read before the limit")

    assert deadline.remaining(110.0, unread) == 10.0


def test_a_process_that_used_no_cpu_since_the_start_is_given_up_at_the_limit() -> None:
    deadline = ProgressDeadline(started=0.0, limit=20.0, cpu=1.0)
    assert deadline.remaining(20.0, cpu_at(1.0 + PROGRESS / 2)) == 0.0
    assert deadline.stretched == 0


def test_a_working_process_gets_a_quarter_limit_more_each_look_until_the_cap() -> None:
    deadline = ProgressDeadline(started=0.0, limit=20.0, cpu=1.0)
    cpu, now, looks = 2.0, 20.0, 0
    while (left := deadline.remaining(now, cpu_at(cpu))) > 0:
        looks += 1
        assert left <= 5.0
        now += left
        cpu += 1.0  # compiling all the while
    assert now == CAP * 20.0
    assert deadline.stretched == looks == 8


def test_a_process_that_stops_working_after_a_stretch_is_given_up_at_the_next_look() -> None:
    deadline = ProgressDeadline(started=0.0, limit=20.0, cpu=1.0)
    assert deadline.remaining(20.0, cpu_at(3.0)) == 5.0
    assert deadline.remaining(25.0, cpu_at(3.0)) == 0.0


def test_an_unknown_cpu_time_never_stretches_the_limit() -> None:
    assert ProgressDeadline(0.0, 20.0, None).remaining(20.0, cpu_at(5.0)) == 0.0
    assert ProgressDeadline(0.0, 20.0, 1.0).remaining(20.0, cpu_at(None)) == 0.0
