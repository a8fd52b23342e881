"""Bring the docs index up to date: dump the class library, read the help, rebuild if changed.

Runs as its own process, ``python -m scorch.knowledge.build INDEX``, which the
service starts in the background once the rooms are READY: parsing a thousand
help files then never holds the interpreter lock of the process that routes
MIDI and answers Claude, it runs at a lower priority than the rooms, and
stopping scorch ends it by its pid. It prints one JSON line, a :class:`Report`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from scorch.errors import IntrospectionError
from scorch.knowledge import shared
from scorch.knowledge.docs_index import INDEX_SCHEMA, DocsIndex, docs_fingerprint, needs_rebuild
from scorch.knowledge.introspect import ClassRecord, Platform, introspect
from scorch.knowledge.sources import (
    KNOWN_HELP_DIRS,
    Sources,
    find_help_dir,
    resolve_binary,
    sources_of,
    stamp,
)

#: The index's meta keys this module writes (besides DocsIndex's own).
STAMP, SOURCES, NOTE = "stamp", "sources", "note"

#: Niceness of the build: the rooms' processes come first.
NICENESS = 10
#: Seconds a builder waits for another one (of another installation) to finish.
LOCK_TIMEOUT = 170.0


@dataclass(frozen=True)
class Report:
    """What one refresh did."""

    rebuilt: bool
    """False when the library and the help were the same as at the last build."""
    version: str
    """SuperCollider's version, empty when sclang could not be run."""
    documents: int
    """Documents in the index now."""
    introspection_seconds: float
    build_seconds: float
    """0 when nothing was rebuilt."""
    note: str
    """What the index lacks and why (no help: runtime classes only; no sclang: help only)."""


def refresh(index_path: Path, *, sclang: str = "sclang", help_dir: Path | None = None,
            data_home: Path | None = None, timeout: float = 60.0,
            force: bool = False, lock_timeout: float = LOCK_TIMEOUT) -> Report:
    """Dump the library, find the help, and rebuild the index at ``index_path`` if they changed.

    ``help_dir`` replaces the HelpSource folder sclang reports. When sclang cannot
    be run, an index that exists is kept as it is; a new one is built from the help
    alone. Either way the note says so. One builder at a time holds the index's
    lock; one that waited for another finds the index current and returns at once.
    The index is never written in place (:mod:`scorch.knowledge.shared`).
    """
    with shared.build_lock(index_path, lock_timeout):
        current = _meta(index_path)
        if not force and is_current(current) and _asked_for(current, sclang, help_dir):
            return Report(False, current.get("version", ""), _documents(current), 0.0, 0.0,
                          current.get(NOTE, ""))
        return _refresh(index_path, current, sclang=sclang, help_dir=help_dir,
                        data_home=data_home, timeout=timeout, force=force)


def _refresh(index_path: Path, current: dict[str, str], *, sclang: str,
             help_dir: Path | None, data_home: Path | None, timeout: float,
             force: bool) -> Report:
    started = time.monotonic()
    notes: list[str] = []
    classes: tuple[ClassRecord, ...] = ()
    version = ""
    platform: Platform | None = None
    try:
        dump = introspect(timeout=timeout, sclang=sclang, data_home=data_home)
        classes, version, platform = dump.classes, dump.version, dump.platform
    except IntrospectionError as err:
        first = str(err).splitlines()[0]
        notes.append(f"the class library could not be read ({first}): help files only")
    dumped = time.monotonic() - started
    if help_dir is None:
        reported = Path(platform.help_dir) if platform is not None else None
        help_dir = reported if reported is not None and reported.is_dir() else find_help_dir(
            sclang)
    sources = sources_of(sclang, platform, help_dir)
    # Without a dump there is nothing to compare with: no stamp, so the next start tries again.
    meta = {STAMP: stamp(sources) if platform is not None else "", SOURCES: sources.to_json()}
    if platform is None and current.get("version"):
        # Keep the last good index rather than replace it with the help alone.
        notes[-1] = notes[-1].replace("help files only", "the last index is kept")
        _republish(index_path, {NOTE: "; ".join(notes)})
        return Report(False, current["version"], _documents(current), dumped, 0.0,
                      "; ".join(notes))
    fingerprint = docs_fingerprint(help_dir, classes)
    if not force and current and not needs_rebuild(current, version, fingerprint):
        _republish(index_path, {**meta, NOTE: current.get(NOTE, "")})
        return Report(False, version, _documents(current), dumped, 0.0, current.get(NOTE, ""))
    if help_dir is None:
        notes.append(f"no HelpSource folder found (looked where sclang said, beside "
                     f"{sources.sclang} and in {', '.join(KNOWN_HELP_DIRS)}): "
                     "runtime classes only, without summaries or examples")
    elif not help_dir.is_dir():
        notes.append(f"no HelpSource folder at {help_dir}: runtime classes only, "
                     "without summaries or examples")
    note = "; ".join(notes)
    scratch = shared.scratch_path(index_path)
    index = DocsIndex(scratch)
    try:
        stats = index.build(help_dir if help_dir is not None and help_dir.is_dir() else None,
                            classes, version=version, meta={**meta, NOTE: note})
    finally:
        index.close()
    shared.publish(scratch, index_path)
    return Report(True, version, stats.documents, dumped, stats.seconds, note)


def is_current(meta: dict[str, str]) -> bool:
    """Say whether an index's meta names sources that are as they were when it was built.

    False for an index of another format, and for one whose class library could
    not be read (it has no stamp).
    """
    if meta.get("schema") != INDEX_SCHEMA or not meta.get(STAMP):
        return False
    try:
        sources = Sources.from_json(meta.get(SOURCES, ""))
    except ValueError:
        return False
    return stamp(sources) == meta[STAMP]


def _asked_for(meta: dict[str, str], sclang: str, help_dir: Path | None) -> bool:
    """Say whether the index was made from this sclang (and this help folder, if named)."""
    sources = Sources.from_json(meta[SOURCES])
    return sources.sclang == resolve_binary(sclang) and (
        help_dir is None or sources.help_dir == str(help_dir))


def _meta(index_path: Path) -> dict[str, str]:
    """The published index's meta ({} when there is none, or it cannot be read)."""
    if not index_path.exists():
        return {}
    try:
        index = DocsIndex(index_path, published=True)
    except sqlite3.Error:
        return {}
    try:
        return index.meta()
    except sqlite3.Error:
        return {}
    finally:
        index.close()


def _republish(index_path: Path, items: dict[str, str]) -> None:
    """Publish a copy of the index with ``items`` in its meta (it is never written in place)."""
    scratch = shared.scratch_path(index_path)
    shutil.copyfile(index_path, scratch)
    index = DocsIndex(scratch)
    try:
        index.set_meta(items)
    finally:
        index.close()
    shared.publish(scratch, index_path)


def _documents(meta: dict[str, str]) -> int:
    try:
        return int(json.loads(meta.get("stats", "{}")).get("documents", 0))
    except ValueError:
        return 0


def main(argv: list[str] | None = None) -> int:
    """Refresh the index named on the command line; print the report as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path, help="the index's SQLite file")
    parser.add_argument("--sclang", default="sclang")
    parser.add_argument("--help-dir", type=Path, help="the HelpSource folder to read")
    parser.add_argument("--data-home", type=Path, help="sclang's XDG_DATA_HOME")
    parser.add_argument("--timeout", type=float, default=60.0, help="for the class dump")
    parser.add_argument("--force", action="store_true", help="rebuild even if nothing changed")
    args = parser.parse_args(argv)
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    try:
        report = refresh(args.index, sclang=args.sclang, help_dir=args.help_dir,
                         data_home=args.data_home, timeout=args.timeout, force=args.force)
    except Exception as err:  # the parent reads the reason from this line
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        return 1
    print(json.dumps(asdict(report)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
