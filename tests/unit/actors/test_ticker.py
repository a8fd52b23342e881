"""The ticker: a slow tick skips the next ones instead of piling them up in the inbox."""

from __future__ import annotations

import threading
import time

import pykka

from actors.ticker import Ticker


class Slow(pykka.ThreadingActor):
    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.ticks = 0
        self.release = release

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks == 1:
            self.release.wait(2.0)  # the first tick takes long (a busy sclang asked)

    def count(self) -> int:
        return self.ticks


def test_ticks_told_while_one_runs_are_skipped_not_queued() -> None:
    release = threading.Event()
    ref = Slow.start(release)
    proxy = ref.proxy()
    ticker = Ticker(0.05, proxy.tick, "test-tick").start()
    try:
        time.sleep(1.0)  # 20 intervals while the first tick is held
        release.set()
        # Asked at once, the count comes after what was queued: no pile of 20 ticks.
        assert proxy.count().get(timeout=2) <= 3
        time.sleep(0.3)
        assert proxy.count().get(timeout=2) > 3  # and it goes on ticking
    finally:
        ticker.stop()
        ref.stop()


def test_hurry_ticks_at_once_and_a_shorter_interval_takes_effect_without_waiting_out_the_long_one(
) -> None:
    ticked = threading.Event()
    ticker = Ticker(60.0, ticked.set, "test-hurry").start()
    try:
        assert not ticked.wait(0.3)  # a minute between ticks: none yet
        ticker.interval = 0.05
        ticker.hurry()
        assert ticked.wait(5.0)
        ticked.clear()
        assert ticked.wait(5.0)  # and again at the new interval, not in a minute
    finally:
        ticker.stop()


def test_a_stopped_ticker_ticks_no_more() -> None:
    ticks: list[float] = []
    ticker = Ticker(0.02, lambda: ticks.append(time.monotonic()), "test-stop").start()
    time.sleep(0.2)
    ticker.stop()
    ticker._thread.join(2.0)
    assert ticks and not ticker._thread.is_alive()
