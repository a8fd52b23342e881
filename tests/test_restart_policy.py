"""Restart intensity, backoff growth and reset after a stable period."""

from __future__ import annotations

from scorch.state.health import HealthPolicy
from scorch.state.restart_policy import RestartPolicy


def policy(**kw: float) -> RestartPolicy:
    args = {"max_restarts": 3, "period": 10.0, "backoff_min": 0.1, "backoff_max": 1.0,
            "stable_after": 5.0}
    args.update(kw)
    return RestartPolicy(**args)  # type: ignore[arg-type]


def test_more_than_max_restarts_within_the_period_gives_up_with_a_reason() -> None:
    p = policy()
    decisions = [p.crashed(t) for t in (0.0, 1.0, 2.0, 3.0)]
    assert [d.restart for d in decisions] == [True, True, True, False]
    assert "3 restarts within 10 s" in decisions[-1].reason
    assert p.budget_left(3.0) == 0


def test_restarts_leave_the_window_after_the_period() -> None:
    p = policy()
    for t in (0.0, 1.0, 2.0):
        p.crashed(t)
    assert p.crashed(12.5).restart
    assert p.restarts_in_window(12.5) == 1


def test_first_retry_is_quick_and_delays_grow_to_the_maximum() -> None:
    p = policy(max_restarts=20, period=100.0)
    delays = [p.crashed(float(t)).delay for t in range(8)]
    assert 0.1 <= delays[0] <= 0.2  # backoff_min plus at most backoff_min of jitter
    assert delays[3] > delays[0]
    assert max(delays) <= 1.0 + 1e-9


def test_backoff_resets_after_a_stable_period() -> None:
    p = policy(max_restarts=20, period=100.0)
    for t in range(5):
        p.crashed(float(t))
    assert p.crashed(5.0).attempt == 6
    p.ready(6.0)
    assert p.crashed(20.0).attempt == 1


def test_reset_forgets_history() -> None:
    p = policy()
    for t in (0.0, 1.0, 2.0, 3.0):
        p.crashed(t)
    p.reset()
    assert p.crashed(4.0).restart


def test_health_hung_only_after_the_limit_counting_from_when_watching_began() -> None:
    h = HealthPolicy(interval=0.25, missed=4)
    assert h.limit == 1.0
    assert not h.hung(now=10.5, last_heard=0.0, watched_since=10.0)
    assert h.hung(now=11.1, last_heard=0.0, watched_since=10.0)
    assert not h.hung(now=11.1, last_heard=10.9, watched_since=10.0)


def test_a_silent_process_still_using_cpu_is_busy_until_the_busy_limit() -> None:
    h = HealthPolicy(interval=0.1, missed=5, busy_limit=10.0)
    # Silent for 2 s but its CPU time grew just now: working, not hung.
    assert not h.hung(now=12.0, last_heard=10.0, watched_since=0.0, last_progress=11.9)
    # Silent and its CPU time stood still for longer than the limit: stopped or deadlocked.
    assert h.hung(now=12.0, last_heard=10.0, watched_since=0.0, last_progress=11.0)
    # Working, but silent past the busy limit: hung all the same (a runaway loop).
    assert h.hung(now=21.0, last_heard=10.0, watched_since=0.0, last_progress=20.9)
