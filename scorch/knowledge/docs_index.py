"""Search and look up SuperCollider docs: help files and the running library in one SQLite file.

Each name gets one row holding its merged :class:`ClassDoc` as JSON (for
``lookup``) and one FTS5 row (for ``search``) whose columns are weighted so a
class's name and summary outrank a passing mention in another page's text.
Queries go through :mod:`scorch.knowledge.fts`: user text is never FTS5 syntax.

A build replaces everything in one transaction, and the file is in WAL mode,
so a reader keeps seeing the old index until the new one is committed. The
meta table remembers the SuperCollider version and a fingerprint of the help
files and the class library, which :meth:`DocsIndex.needs_rebuild` compares.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from scorch.knowledge import fts
from scorch.knowledge.class_doc import ClassDoc, merge
from scorch.knowledge.introspect import ClassRecord, classes_fingerprint
from scorch.knowledge.schelp import HelpDoc, iter_help_files, read_schelp

#: Bump when the tables or the stored JSON change shape: the next check rebuilds.
INDEX_SCHEMA = "2"

# bm25 weights of docs_fts's columns, in order: name, summary, keywords, body, code.
_WEIGHTS = (10.0, 4.0, 3.0, 1.0, 0.5)

_SCHEMA = """
CREATE TABLE docs (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    lname TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    has_help INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX docs_lname ON docs (lname);
CREATE VIRTUAL TABLE docs_fts USING fts5 (
    name, summary, keywords, body, code, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

_TABLES = ("docs", "docs_fts")


@dataclass(frozen=True)
class Hit:
    """One search result."""

    name: str
    kind: str
    key: str
    summary: str
    """The summary's first line, at most 160 characters."""
    score: float
    """bm25 relevance, higher is better; comparable within one search only."""


@dataclass(frozen=True)
class BuildStats:
    """What one build indexed and how long it took."""

    help_dir: str | None
    help_files: int
    help_problems: int
    """Help files the parser had something to say about (they are indexed anyway)."""
    library_classes: int
    documents: int
    classes_without_help: int
    help_without_class: int
    """Class help files whose class is not in the library given (a missing quark?)."""
    seconds: float
    note: str
    """Why the index is partial ("no help directory: runtime classes only"), or empty."""


def docs_fingerprint(help_dir: Path | None, classes: Sequence[ClassRecord]) -> str:
    """Return a hash of the help files (paths, sizes, mtimes) and the class library."""
    digest = hashlib.sha256(f"scorch-docs-v{INDEX_SCHEMA}\0".encode())
    digest.update(classes_fingerprint(list(classes)).encode())
    if help_dir is not None and help_dir.is_dir():
        for path in iter_help_files(help_dir):
            try:
                stat = path.stat()
            except OSError:
                continue
            digest.update(f"\0{path.relative_to(help_dir)}\0{stat.st_size}\0{stat.st_mtime_ns}"
                          .encode())
    return digest.hexdigest()[:32]


def needs_rebuild(meta: Mapping[str, str], version: str, fingerprint: str) -> bool:
    """Say whether an index with ``meta`` is missing, of another schema, version or fingerprint."""
    return (meta.get("schema") != INDEX_SCHEMA or meta.get("version") != version
            or meta.get("fingerprint") != fingerprint)


class DocsIndex:
    """The docs index in one SQLite file; safe to share between threads."""

    def __init__(self, path: Path | str, *, published: bool = False) -> None:
        """Open (or create) the index at ``path``.

        ``published``: the file is never written again, only replaced by a rename
        (:mod:`scorch.knowledge.shared`); it is opened read-only, without locks, and
        this connection keeps reading the file it opened.
        """
        self.path = Path(path)
        if published:
            uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False,
                                       isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA busy_timeout = 5000")
        self._lock = threading.Lock()
        self._names: list[str] | None = None

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def needs_rebuild(self, version: str, fingerprint: str) -> bool:
        """Say whether the index is missing, of another schema, version or fingerprint."""
        return needs_rebuild(self.meta(), version, fingerprint)

    def meta(self) -> dict[str, str]:
        """Return what the last build recorded (schema, version, fingerprint, stats)."""
        with self._lock:
            try:
                rows = self._db.execute("SELECT key, value FROM meta").fetchall()
            except sqlite3.OperationalError:  # never built
                return {}
        return dict(rows)

    def set_meta(self, items: Mapping[str, str]) -> None:
        """Record ``items`` beside what the last build recorded (a key's old value goes)."""
        with self._lock:
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(items.items()))

    def build(
        self, help_dir: Path | None, classes: Sequence[ClassRecord], *, version: str = "",
        meta: Mapping[str, str] | None = None,
    ) -> BuildStats:
        """Replace the index with the help files under ``help_dir`` merged with ``classes``.

        ``help_dir`` None or missing indexes the runtime classes only, and says so.
        ``meta`` is recorded with the build, in the same transaction.
        """
        started = time.monotonic()
        note = ""
        helps: list[HelpDoc] = []
        if help_dir is None:
            note = "no help directory given: runtime classes only"
        elif not help_dir.is_dir():
            note = f"help directory {help_dir} not found: runtime classes only"
        else:
            helps = [read_schelp(path, help_dir) for path in iter_help_files(help_dir)]
        docs, counts = _merge_all(helps, classes)
        fingerprint = docs_fingerprint(help_dir, classes)
        with self._lock:
            self._write(docs, version, fingerprint, meta or {})
            self._names = None
        stats = BuildStats(
            help_dir=str(help_dir) if help_dir is not None else None, help_files=len(helps),
            help_problems=sum(1 for h in helps if h.problems), library_classes=len(classes),
            documents=len(docs), classes_without_help=counts[0], help_without_class=counts[1],
            seconds=time.monotonic() - started, note=note,
        )
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('stats', ?)",
                             (json.dumps(asdict(stats)),))
        return stats

    def lookup(self, name: str) -> ClassDoc | None:
        """Return the doc for a class or page name (``SinOsc``, ``sinosc``, ``Classes/SinOsc``).

        ``SinOsc.ar`` gives SinOsc's doc. A class wins over a guide of the same name.
        """
        wanted = name.strip()
        candidates = [wanted]
        if "." in wanted and not wanted.startswith("."):
            candidates.append(wanted.split(".", 1)[0])
        for candidate in candidates:
            row = self._one(
                "SELECT data FROM docs WHERE key = ? OR name = ? OR lname = ? "
                "ORDER BY key = ? DESC, name = ? DESC, kind = 'class' DESC LIMIT 1",
                (candidate, candidate, candidate.lower(), candidate, candidate))
            if row is not None:
                return ClassDoc.from_dict(json.loads(row[0]))
        return None

    def suggest(self, name: str, limit: int = 5) -> list[str]:
        """Return the names closest to ``name``, best first, for a typo such as ``SinOssc``."""
        names = self._all_names()
        lowered: dict[str, str] = {}
        for known in names:
            lowered.setdefault(known.lower(), known)
        wanted = name.strip().lower()[: fts.MAX_TERM_LENGTH]
        if not wanted:
            return []
        close = difflib.get_close_matches(wanted, list(lowered), n=limit, cutoff=0.6)
        return [lowered[c] for c in close]

    def search(self, query: str, limit: int = 10) -> list[Hit]:
        """Return the best matches for ``query``, any text at all: never an sqlite error.

        Pages are ranked by bm25 over any of the query's words (so "how do I make
        a reverb" still finds FreeVerb), names and summaries weighing most; a
        class without a help file counts 0.8. A page named exactly like a
        one-word query comes first.
        """
        words = fts.terms(query)
        limit = max(0, min(limit, 100))
        expression = fts.match_any(words)
        if expression is None or limit == 0:
            return []
        hits = self._match(expression, limit)
        if len(words) == 1:
            exact = [h for h in hits if h.name.lower() == words[0]]
            if not exact:
                exact = self._match(expression, 1, name=words[0])
            hits = exact[:1] + [h for h in hits if h.key not in {e.key for e in exact[:1]}]
        return hits[:limit]

    def _match(self, expression: str, limit: int, name: str | None = None) -> list[Hit]:
        weights = ", ".join(str(w) for w in _WEIGHTS)
        # bm25 is negative, lower is better: a class with no help file counts 0.8 of its score.
        sql = (f"SELECT d.name, d.kind, d.key, d.summary, "
               f"bm25(docs_fts, {weights}) * (CASE WHEN d.has_help THEN 1.0 ELSE 0.8 END) "
               "AS rank FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
               "WHERE docs_fts MATCH ? AND (? IS NULL OR d.lname = ?) ORDER BY rank LIMIT ?")
        with self._lock:
            try:
                rows = self._db.execute(sql, (expression, name, name, limit)).fetchall()
            except sqlite3.OperationalError as err:
                if "no such table" in str(err):  # never built: nothing to find
                    return []
                raise
        return [Hit(n, k, key, _one_line(s), -rank) for n, k, key, s, rank in rows]

    def _one(self, sql: str, args: tuple[object, ...]) -> tuple[str, ...] | None:
        with self._lock:
            try:
                row = self._db.execute(sql, args).fetchone()
            except sqlite3.OperationalError as err:
                if "no such table" in str(err):
                    return None
                raise
        return None if row is None else tuple(row)

    def _all_names(self) -> list[str]:
        with self._lock:
            if self._names is None:
                try:
                    rows = self._db.execute("SELECT DISTINCT name FROM docs").fetchall()
                except sqlite3.OperationalError:
                    rows = []
                self._names = sorted(r[0] for r in rows)
            return self._names

    def _write(self, docs: list[_Entry], version: str, fingerprint: str,
               meta: Mapping[str, str]) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for table in _TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            db.execute("DELETE FROM meta")
            for doc_id, (doc, help_doc) in enumerate(docs, start=1):
                db.execute("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (doc_id, doc.key, doc.name, doc.name.lower(), doc.kind, doc.summary,
                            int(doc.has_help), json.dumps(doc.to_dict(), separators=(",", ":"))))
                db.execute("INSERT INTO docs_fts (rowid, name, summary, keywords, body, code) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (doc_id, *_fts_row(doc, help_doc)))
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("schema", INDEX_SCHEMA), ("version", version), ("fingerprint", fingerprint),
                ("built_at", str(time.time())), *meta.items(),
            ])
            db.execute("INSERT INTO docs_fts (docs_fts) VALUES ('optimize')")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


# A merged doc and the help file it came from, whose full text the search indexes.
_Entry = tuple[ClassDoc, HelpDoc | None]


def _merge_all(helps: list[HelpDoc], classes: Sequence[ClassRecord]) -> tuple[
        list[_Entry], tuple[int, int]]:
    """Merge help docs and class records by name; return the docs and two counts."""
    records = {c.name: c for c in classes}
    extensions: dict[str, list[HelpDoc]] = defaultdict(list)
    main: list[HelpDoc] = []
    for doc in helps:
        (extensions[doc.extends] if doc.extends else main).append(doc)
    class_helps = {d.name: d for d in main if d.kind == "class"}
    docs: list[_Entry] = []
    help_without_class = 0
    for doc in main:
        record = records.get(doc.name) if doc.kind == "class" else None
        if doc.kind == "class" and record is None and classes:
            help_without_class += 1
        extra = extensions.get(doc.key, [])
        docs.append((merge(doc.name, doc, record, extensions=extra, helps_by_class=class_helps,
                           library=records), doc))
    without_help = [c for c in classes if c.name not in class_helps]
    for record in without_help:
        docs.append((merge(record.name, None, record, library=records), None))
    return docs, (len(without_help), help_without_class)


def _fts_row(doc: ClassDoc, help_doc: HelpDoc | None) -> tuple[str, str, str, str, str]:
    body = [doc.title, help_doc.text if help_doc else doc.description]
    for m in [*doc.class_methods, *doc.instance_methods]:
        # Documented methods are in the help's text already; the library's others are not.
        # camelCase parts too, so "note on" finds noteOn.
        words = [fts.name_words(m.name)]
        if not m.summary:
            words.extend(a.name for a in m.args)
        body.append(" ".join(words))
    keywords = [*doc.categories, *(help_doc.keywords if help_doc else ()),
                *(["UGen"] if doc.is_ugen else [])]
    return (fts.name_words(doc.name), doc.summary, " ".join(keywords), "\n".join(body),
            "\n".join(doc.examples))


def _one_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 160 else line[:157] + "..."
