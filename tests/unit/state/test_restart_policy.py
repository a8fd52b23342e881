"""Restart intensity, the backoff tenacity computes from the config, and hang detection."""

from __future__ import annotations

import contextlib

import pytest
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

from scorch.state.health import HealthPolicy, Pings
from scorch.state.restart_policy import Backoff, RestartIntensity


def test_no_restart_is_left_after_max_restarts_within_the_period() -> None:
    intensity = RestartIntensity(max_restarts=3, period=10.0)
    for t in (0.0, 1.0, 2.0):
        assert not intensity.exhausted(t)
        intensity.record(t)
    assert intensity.exhausted(3.0)
    assert intensity.budget_left(3.0) == 0
    assert "3 restarts within 10 s (max_restarts = 3)" in intensity.reason(3.0)


def test_restarts_leave_the_window_after_the_period() -> None:
    intensity = RestartIntensity(max_restarts=3, period=10.0)
    for t in (0.0, 1.0, 2.0):
        intensity.record(t)
    assert not intensity.exhausted(12.5)
    intensity.record(12.5)
    assert intensity.restarts_in_window(12.5) == 1


def test_reset_forgets_history() -> None:
    intensity = RestartIntensity(max_restarts=2, period=10.0)
    intensity.record(0.0)
    intensity.record(1.0)
    intensity.reset()
    assert intensity.budget_left(1.0) == 2


def waits(backoff: Backoff, tries: int) -> list[float]:
    """The waits tenacity sleeps between ``tries`` failing attempts with this backoff."""
    slept: list[float] = []

    def fail() -> None:
        raise OSError("down")

    retrying = Retrying(wait=backoff.wait(), stop=stop_after_attempt(tries),
                        retry=retry_if_exception_type(OSError), sleep=slept.append,
                        reraise=True)
    with contextlib.suppress(OSError):
        retrying(fail)
    return slept


def test_first_wait_is_quick_and_waits_grow_to_the_maximum() -> None:
    slept = waits(Backoff(minimum=0.1, maximum=1.0, stable_after=5.0), 9)
    assert len(slept) == 8
    assert 0.1 <= slept[0] <= 0.2  # minimum plus at most minimum of jitter
    assert slept[3] > slept[0]
    assert max(slept) <= 1.0 + 1e-9


def _pinged(*times: float) -> Pings:
    pings = Pings()
    for t in times:
        pings.record(t)
    return pings


def test_hung_only_after_missed_pings_over_the_limit() -> None:
    h = HealthPolicy(interval=0.25, missed=4)
    assert h.limit == 1.0
    pings = _pinged(10.0, 10.25, 10.5, 10.75, 11.0)
    assert not h.hung(now=10.9, pings=pings)  # silent 0.9 s: within the limit
    assert h.hung(now=11.1, pings=pings)
    assert h.silent_for(11.1, pings) == pytest.approx(1.1)
    pings.heard(10.9)  # a reply came: only the ping after it is owed
    assert pings.unanswered == 1 and not h.hung(now=11.1, pings=pings)


def test_time_the_watchdog_could_not_look_is_not_silence() -> None:
    h = HealthPolicy(interval=0.1, missed=5)
    # Answered at 10.0, then the watchdog was blind (EMFILE, a delayed thread) for
    # 60 s: its first ping after is the only one owed, so nothing is hung.
    pings = _pinged(9.9, 10.0)
    pings.heard(10.0)
    pings.record(70.0)
    assert not h.hung(now=70.05, pings=pings)
    # Even long after one lone ping, too few pings went unanswered to tell.
    assert not h.hung(now=75.0, pings=pings)
    # Pings that really went out, unanswered, over the limit: hung.
    for t in (70.1, 70.2, 70.3, 70.4, 70.5):
        pings.record(t)
    assert h.hung(now=70.55, pings=pings)


def test_a_silent_process_still_using_cpu_is_busy_until_the_busy_limit() -> None:
    h = HealthPolicy(interval=0.1, missed=5, busy_limit=10.0)
    pings = _pinged(*(10.0 + i / 10 for i in range(111)))  # 10.0 .. 21.0, none answered
    # Silent for 2 s but its CPU time grew just now: working, not hung.
    assert not h.hung(now=12.0, pings=pings, last_progress=11.9)
    # Silent and its CPU time stood still for longer than the limit: stopped or deadlocked.
    assert h.hung(now=12.0, pings=pings, last_progress=11.0)
    # Working, but silent past the busy limit: hung all the same (a runaway loop).
    assert h.hung(now=21.0, pings=pings, last_progress=20.9)
