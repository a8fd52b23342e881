"""Operations called in this process, by name and outcome (``/metrics``); thread-safe."""

from __future__ import annotations

import threading
from collections import Counter


class CallCounts:
    """Count each operation's calls and failures; one lock, a dict increment per call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()

    def add(self, name: str, ok: bool) -> None:
        """Count one call of ``name``; ``ok``: it answered rather than raised."""
        with self._lock:
            self._calls[name] += 1
            if not ok:
                self._errors[name] += 1

    def read(self) -> tuple[dict[str, int], dict[str, int]]:
        """Calls and errors by operation name, as they are now."""
        with self._lock:
            return dict(self._calls), dict(self._errors)
