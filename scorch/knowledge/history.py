"""Remember every evaluation (code, value, posts, error) so a sound from an hour ago can be found.

One SQLite file in WAL mode: a writer killed mid-write loses at most the row it
was writing, and readers (another process, the MCP server) never block the
writer. Code and output are searchable with FTS5 through
:mod:`scorch.knowledge.fts`, newest first. Old rows are pruned by age and by
count on write, every ``prune_every`` records, so a write stays cheap and the
table never holds more than ``max_rows + prune_every`` rows.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scorch.knowledge import fts

#: Longer code or output is cut, with a note saying how much: a runaway post loop
#: should not fill the disk.
MAX_TEXT = 64_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    instance TEXT NOT NULL,
    code TEXT NOT NULL,
    value TEXT NOT NULL,
    posted TEXT NOT NULL,
    error TEXT,
    duration_ms REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_time ON entries (time);
CREATE INDEX IF NOT EXISTS entries_instance ON entries (instance);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5 (
    code, value, posted, error, content = 'entries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS entries_added AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, code, value, posted, error)
    VALUES (new.id, new.code, new.value, new.posted, new.error);
END;
CREATE TRIGGER IF NOT EXISTS entries_removed AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, code, value, posted, error)
    VALUES ('delete', old.id, old.code, old.value, old.posted, old.error);
END;
"""


@dataclass(frozen=True)
class Entry:
    """One evaluation as it was recorded."""

    id: int
    time: float
    """Seconds since the epoch, as given to :meth:`History.record`."""
    room: str
    code: str
    value: str
    """What sclang printed after ``->``, or empty."""
    posted: str
    """Everything the code posted while it ran."""
    error: str | None
    """The error, if the evaluation failed."""
    duration_ms: float


class History:
    """The evaluation history in one SQLite file; safe to share between threads."""

    def __init__(self, db_path: Path | str, max_age_days: float = 30.0,
                 max_rows: int = 100_000, *, prune_every: int = 200) -> None:
        self.path = Path(db_path)
        self.max_age_days = max_age_days
        self.max_rows = max_rows
        self.prune_every = max(1, prune_every)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                   timeout=5.0)
        self._db.execute("PRAGMA journal_mode = WAL")
        # NORMAL in WAL mode: a killed process loses nothing committed; only a power
        # cut may lose the last commits, which is fine for a history.
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._writes = 0

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def record(self, time: float, room: str, code: str, value: str = "",
               posted: str = "", error: str | None = None, duration_ms: float = 0.0) -> int:
        """Store one evaluation and return its id; prune old rows every ``prune_every`` writes."""
        row = (time, room, _cut(code), _cut(value), _cut(posted),
               None if error is None else _cut(error), duration_ms)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._db.execute(
                    "INSERT INTO entries (time, instance, code, value, posted, error, "
                    "duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)", row)
                if self._writes % self.prune_every == 0:
                    self._prune(time)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._writes += 1
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def prune(self, now: float | None = None) -> int:
        """Delete rows older than ``max_age_days`` or beyond ``max_rows``; return how many."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                removed = self._prune(time.time() if now is None else now)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return removed

    def search(self, query: str | None = None, rooms: Sequence[str] | None = None,
               errors_only: bool = False, since: float | None = None,
               limit: int = 20) -> list[Entry]:
        """Return matching evaluations, newest (most recently recorded) first.

        ``query`` is any text: entries holding all its words, or if none do, any
        of them (in code, value, posts or error). ``rooms`` None means every
        room. The other filters combine with it.
        """
        limit = max(0, min(limit, 1000))
        words = fts.terms(query)
        if query is not None and query.strip() and not words:
            return []  # only punctuation: nothing could match
        if not words:
            return self._select(None, rooms, errors_only, since, limit)
        found = self._select(fts.match_all(words), rooms, errors_only, since, limit)
        if not found and len(words) > 1:
            found = self._select(fts.match_any(words), rooms, errors_only, since, limit)
        return found

    def entry(self, entry_id: int) -> Entry | None:
        """The entry with id ``entry_id``, if it is still kept."""
        with self._lock:
            row = self._db.execute(
                "SELECT id, time, instance, code, value, posted, error, duration_ms "
                "FROM entries WHERE id = ?", (entry_id,)).fetchone()
        return Entry(*row) if row is not None else None

    def count(self) -> int:
        """Return how many evaluations are stored."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def _select(self, expression: str | None, rooms: Sequence[str] | None,
                errors_only: bool, since: float | None, limit: int) -> list[Entry]:
        where: list[str] = []
        args: list[object] = []
        if expression is not None:
            where.append("entries_fts MATCH ?")
            args.append(expression)
        if rooms is not None:
            where.append(f"e.instance IN ({', '.join('?' * len(rooms))})")
            args.extend(rooms)
        if errors_only:
            where.append("e.error IS NOT NULL")
        if since is not None:
            where.append("e.time >= ?")
            args.append(since)
            if expression is not None:
                # Every row that recent has an id at least this, so FTS5 can stop there; the
                # time index finds it in as many steps as there are recent rows.
                where.append("entries_fts.rowid >= (SELECT IFNULL(MIN(id), 1 << 62) "
                             "FROM entries INDEXED BY entries_time WHERE time >= ?)")
                args.append(since)
        # Newest first means most recently recorded: ids only grow. With a query, FTS5
        # walks its rowids backwards and stops at the limit instead of sorting every match.
        source = ("entries_fts JOIN entries e ON e.id = entries_fts.rowid"
                  if expression is not None else "entries e")
        sql = ("SELECT e.id, e.time, e.instance, e.code, e.value, e.posted, e.error, "
               f"e.duration_ms FROM {source}"
               + (" WHERE " + " AND ".join(where) if where else "")
               + f" ORDER BY {'entries_fts.rowid' if expression is not None else 'e.id'} DESC"
               " LIMIT ?")
        with self._lock:
            rows = self._db.execute(sql, (*args, limit)).fetchall()
        return [Entry(*row) for row in rows]

    def _prune(self, now: float) -> int:
        """Delete old and surplus rows inside the caller's transaction."""
        old = self._db.execute("DELETE FROM entries WHERE time < ?",
                               (now - self.max_age_days * 86400.0,))
        # Ids only grow, so the newest max_rows rows are the ones with the highest ids.
        surplus = self._db.execute(
            "DELETE FROM entries WHERE id <= (SELECT MAX(id) FROM entries) - ?", (self.max_rows,))
        return old.rowcount + surplus.rowcount


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n[... {len(text) - MAX_TEXT} more characters not kept]"
