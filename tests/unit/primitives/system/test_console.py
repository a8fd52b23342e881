"""The console: bounded per process, readable by count, by mark and by waiting."""

from __future__ import annotations

import threading

from scorch.primitives.system.console import Console
from scorch.primitives.system.jackd import XRUN


def test_keeps_the_last_limit_lines_of_each_source() -> None:
    console = Console(limit=3)
    for i in range(5):
        console.append("scsynth", f"s{i}")
    console.append("sclang", "l0")
    assert [line.text for line in console.tail(10, source="scsynth")] == ["s2", "s3", "s4"]
    assert [line.text for line in console.tail(10)] == ["s2", "s3", "s4", "l0"]
    assert [line.text for line in console.tail(2)] == ["s4", "l0"]


def test_since_mark_returns_only_later_lines() -> None:
    console = Console()
    console.append("sclang", "old")
    mark = console.mark()
    console.append("sclang", "new")
    assert [line.text for line in console.since(mark)] == ["new"]


def test_wait_for_returns_a_matching_line_printed_later() -> None:
    console = Console()
    console.append("sclang", "ready already")  # before the wait: must not match
    timer = threading.Timer(0.05, console.append, ("sclang", "server ready now"))
    timer.start()
    line = console.wait_for(r"ready", timeout=2.0)
    timer.join()
    assert line is not None and line.text == "server ready now"


def test_wait_for_times_out_with_none() -> None:
    assert Console().wait_for("never", timeout=0.05) is None


def test_clear_forgets_lines_but_marks_stay_ordered() -> None:
    console = Console()
    console.append("a", "x")
    mark = console.mark()
    console.clear()
    assert console.tail(5) == []
    console.append("a", "y")
    assert [line.text for line in console.since(mark)] == ["y"]



def test_a_counted_source_keeps_its_total_past_the_lines_it_keeps() -> None:
    console = Console(limit=3, counting={"jackd": XRUN})
    lines = ["JackEngine::XRun: client = scsynth was not finished, state = Triggered",
             "Jack: xrun", "JackAudioDriver::ProcessGraphAsyncMaster: Process error",
             "JackEngine::XRun: client = sclang was not finished", "Jack main caught signal 15"]
    for line in lines * 4:
        console.append("jackd", line)
        console.append("scsynth", "Jack: xrun")  # not jackd's: not counted
    assert console.counted("jackd") == 12 and len(console.tail(100, "jackd")) == 3
    assert console.counted("scsynth") == 0 and Console().counted("jackd") == 0
