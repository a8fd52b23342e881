"""The run's history behind ``scorch report``: events and periodic samples in sqlite.

One file in the state folder, two tables: ``events`` (a room's lifecycle and sound
events, by kind name, so kinds added later are kept without a change here) and
``samples`` (a named figure of a room at a time: loudness, peak, xruns...). Both are
pruned by age and by rows, so the file stays bounded however long the run lasts.
sqlite3 is thread-safe per connection here: every call takes the one lock.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The file's name in the state folder.
HISTORY_FILE = "history.sqlite3"
#: What is kept unless told otherwise: a month, and rows enough for it at one sample a minute.
KEEP_S = 31 * 86400.0
MAX_EVENTS = 100_000
MAX_SAMPLES = 500_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    time REAL NOT NULL, room TEXT NOT NULL, kind TEXT NOT NULL,
    message TEXT NOT NULL, details TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_time ON events (time);
CREATE TABLE IF NOT EXISTS samples (
    time REAL NOT NULL, room TEXT NOT NULL, name TEXT NOT NULL, value REAL NOT NULL);
CREATE INDEX IF NOT EXISTS samples_time ON samples (time);
"""


@dataclass(frozen=True)
class Recorded:
    """One event as the history keeps it."""

    time: float
    room: str
    kind: str
    message: str
    details: dict[str, Any]


@dataclass(frozen=True)
class Sample:
    """One figure of one room at one time."""

    time: float
    room: str
    name: str
    value: float


class History:
    """Append events and samples; read them back since a time; prune to the bounds."""

    def __init__(self, path: Path | str, keep_s: float = KEEP_S,
                 max_events: int = MAX_EVENTS, max_samples: int = MAX_SAMPLES) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._limits = {"events": max_events, "samples": max_samples}
        self.keep_s = keep_s

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def add_events(self, events: Iterable[Recorded]) -> None:
        """Keep these events (details as JSON; what JSON cannot hold is kept as text)."""
        rows = [(e.time, e.room, e.kind, e.message, json.dumps(e.details, default=str))
                for e in events]
        with self._lock:
            self._db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows)

    def add_samples(self, samples: Iterable[Sample]) -> None:
        """Keep these samples."""
        rows = [(s.time, s.room, s.name, float(s.value)) for s in samples]
        with self._lock:
            self._db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?)", rows)

    def events(self, since: float = 0.0) -> list[Recorded]:
        """Events at or after ``since``, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT time, room, kind, message, details FROM events "
                                    "WHERE time >= ? ORDER BY time, rowid", (since,)).fetchall()
        return [Recorded(t, room, kind, message, json.loads(details))
                for t, room, kind, message, details in rows]

    def samples(self, since: float = 0.0) -> list[Sample]:
        """Samples at or after ``since``, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT time, room, name, value FROM samples "
                                    "WHERE time >= ? ORDER BY time, rowid", (since,)).fetchall()
        return [Sample(*row) for row in rows]

    def prune(self, now: float) -> int:
        """Drop rows older than ``keep_s`` and the oldest beyond each table's limit."""
        dropped = 0
        with self._lock:
            for table, limit in self._limits.items():
                dropped += self._db.execute(f"DELETE FROM {table} WHERE time < ?",
                                            (now - self.keep_s,)).rowcount
                dropped += self._db.execute(
                    f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} "
                    "ORDER BY time DESC, rowid DESC LIMIT -1 OFFSET ?)", (limit,)).rowcount
        return dropped

    def counts(self) -> dict[str, int]:
        """Rows in each table."""
        with self._lock:
            return {table: int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                    for table in self._limits}
