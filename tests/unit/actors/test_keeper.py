"""The keeper's loop with stand-ins for the supervised thing: no process, only threads."""

from __future__ import annotations

import threading
import time

import pytest

from actors.keeper import Keeper
from scorch.state.restart_policy import Backoff, RestartIntensity


class Thing:
    """A supervised stand-in: counts restarts, fails while told to, records what it hears."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.restarts = 0
        self.waits: list[tuple[float, int]] = []
        self.gave_up: list[str] = []
        self.restarted = threading.Event()
        self.ended = threading.Event()

    def restart(self) -> None:
        self.restarts += 1
        if self.failures > 0:
            self.failures -= 1
            raise OSError(f"still broken ({self.failures} more)")
        self.restarted.set()

    def retrying(self, delay: float, attempt: int, failure: str) -> None:
        self.waits.append((delay, attempt))

    def give_up(self, reason: str) -> None:
        self.gave_up.append(reason)
        self.ended.set()


def keeper(thing: Thing, *, max_restarts: int = 5, minimum: float = 0.01,
           stable_after: float = 0.2, can_start: object = None) -> Keeper:
    return Keeper("thing", Backoff(minimum, 1.0, stable_after),
                  RestartIntensity(max_restarts, 60.0), restart=thing.restart,
                  gave_up=thing.give_up, retrying=thing.retrying,
                  **({"can_start": can_start} if can_start else {}))


def test_a_fault_is_restarted_after_the_shortest_wait() -> None:
    thing = Thing()
    k = keeper(thing)
    k.start()
    k.fault("crashed")
    assert thing.restarted.wait(5)
    assert thing.restarts == 1
    assert thing.waits[0][1] == 1 and 0.01 <= thing.waits[0][0] <= 0.02
    k.halt()
    k.join(5)


def test_failed_restarts_back_off_and_give_up_when_the_budget_is_spent() -> None:
    thing = Thing(failures=100)
    k = keeper(thing, max_restarts=3)
    k.start()
    k.fault("crashed")
    assert thing.ended.wait(10)
    assert thing.restarts == 3
    assert [attempt for _, attempt in thing.waits] == [1, 2, 3]
    assert thing.waits[2][0] > thing.waits[0][0]
    assert "3 restarts within 60 s (max_restarts = 3)" in thing.gave_up[0]
    assert "still broken" in thing.gave_up[0]


def test_a_failed_first_start_is_retried_after_a_wait() -> None:
    thing = Thing()
    k = keeper(thing)
    k.start(fault="port in use")
    assert thing.restarted.wait(5)
    assert thing.waits and thing.waits[0][1] == 1
    k.halt()
    k.join(5)


def test_halt_ends_a_long_wait_at_once_and_nothing_more_is_restarted() -> None:
    thing = Thing()
    k = keeper(thing, minimum=60.0)
    k.start()
    k.fault("crashed")
    deadline = time.monotonic() + 5
    while not thing.waits:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    k.halt()
    k.join(5)
    assert time.monotonic() - started < 2
    assert thing.restarts == 0 and not thing.gave_up


def test_a_fault_during_the_stable_wait_escalates_and_stability_resets_it() -> None:
    thing = Thing()
    k = keeper(thing, stable_after=0.3)
    k.start()
    k.fault("crash 1")
    assert thing.restarted.wait(5)
    thing.restarted.clear()
    k.fault("crash 2")  # within stable_after: the same episode, a longer wait
    assert thing.restarted.wait(5)
    assert [attempt for _, attempt in thing.waits] == [1, 2]
    time.sleep(0.5)  # stable now
    thing.restarted.clear()
    k.fault("crash 3")
    assert thing.restarted.wait(5)
    assert thing.waits[-1][1] == 1  # started over from the shortest wait
    k.halt()
    k.join(5)


def test_nothing_restarts_while_it_cannot_start_and_a_wake_lets_it() -> None:
    thing = Thing()
    jack_up = threading.Event()
    k = keeper(thing, can_start=jack_up.is_set)
    k.start()
    k.fault("jack died")
    assert not thing.restarted.wait(0.3)
    assert thing.restarts == 0 and k.intensity.restarts_in_window(time.monotonic()) == 0
    jack_up.set()
    k.wake()
    assert thing.restarted.wait(5)
    k.halt()
    k.join(5)


@pytest.mark.parametrize("fault_first", [False, True])
def test_halt_before_any_fault_ends_the_thread(fault_first: bool) -> None:
    thing = Thing()
    k = keeper(thing, minimum=30.0)
    k.start(fault="boot failed" if fault_first else None)
    k.halt()
    k.join(5)
    assert not k.running
    assert not thing.gave_up


def test_a_fault_before_the_keepers_thread_first_looks_waits_the_shortest_backoff_too() -> None:
    # What a loaded machine does when the thread starts late: the fault is already there
    # when the thread first looks (made so here by setting it before the thread runs).
    thing = Thing()
    k = keeper(thing)
    k._fault = "crashed"
    runner = threading.Thread(target=k._run, daemon=True)
    runner.start()
    assert thing.restarted.wait(5)
    assert thing.restarts == 1 and [attempt for _, attempt in thing.waits] == [1]
    k.halt()
    runner.join(5)
