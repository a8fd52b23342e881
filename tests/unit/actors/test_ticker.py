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
