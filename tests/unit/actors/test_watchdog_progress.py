"""The watchdog reads a process's CPU time only while its pings go unanswered."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from actors.watchdog import Watchdog
from scorch.state.health import HealthPolicy, Pings


def spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_silence_s_first_read_counts_as_growth_at_its_start_then_growth_is_seen() -> None:
    dog = Watchdog({}, 0.5, 4)
    me = os.getpid()
    assert dog._progress("room", me, now=100.0, silent_since=99.5) == 99.5
    spin(0.05)  # this process works: its CPU time grows
    assert dog._progress("room", me, now=100.5, silent_since=99.5) == 100.5


def test_a_stopped_process_is_hung_as_soon_as_when_read_every_tick() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.3)
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(0.05)
        dog = Watchdog({}, 0.5, 4)
        policy = HealthPolicy(0.5, 4)
        pings = Pings()
        for at in (10.0, 10.5, 11.0, 11.5):
            pings.record(at)
        progress = [dog._progress("room", child.pid, now, 10.0) for now in (10.5, 11.0, 11.5)]
        assert progress == [10.0, 10.0, 10.0]  # no growth: the silence's start stays
        assert not policy.hung(12.0, pings, dog._progress("room", child.pid, 12.0, 10.0))
        assert policy.hung(12.5, pings, dog._progress("room", child.pid, 12.5, 10.0))
    finally:
        child.kill()
        child.wait()


def test_a_new_silence_starts_afresh_and_a_new_pid_too() -> None:
    dog = Watchdog({}, 0.5, 4)
    me = os.getpid()
    dog._progress("room", me, now=10.0, silent_since=9.5)
    # Answered meanwhile; a later silence is read from its own start.
    assert dog._progress("room", me, now=50.0, silent_since=49.5) == 49.5
    assert dog._progress("room", os.getppid(), now=50.5, silent_since=49.5) == 49.5
