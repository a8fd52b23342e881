"""Readings taken again and again in a thread while a test does something else."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Readings(Generic[T]):
    """Calls ``read`` every ``every`` seconds in a thread until the ``with`` block ends."""

    def __init__(self, read: Callable[[], T], every: float) -> None:
        self.seen: list[T] = []
        self._read = read
        self._every = every
        self._done = threading.Event()
        self._count = threading.Semaphore(0)
        self._thread = threading.Thread(target=self._watch, name="readings")

    def __enter__(self) -> Readings[T]:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=10)

    def _watch(self) -> None:
        while not self._done.wait(self._every):
            self.seen.append(self._read())
            self._count.release()

    def more(self, count: int, timeout: float = 10.0) -> None:
        """Wait for ``count`` more readings."""
        for _ in range(count):
            assert self._count.acquire(timeout=timeout), "the readings stopped"
