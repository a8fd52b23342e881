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
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from scorch.errors import IntrospectionError
from scorch.knowledge.docs_index import DocsIndex, docs_fingerprint
from scorch.knowledge.introspect import ClassRecord, Platform, introspect
from scorch.knowledge.sources import KNOWN_HELP_DIRS, find_help_dir, sources_of, stamp

#: The index's meta keys this module writes (besides DocsIndex's own).
STAMP, SOURCES, NOTE = "stamp", "sources", "note"

#: Niceness of the build: the rooms' processes come first.
NICENESS = 10


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
            force: bool = False) -> Report:
    """Dump the library, find the help, and rebuild the index at ``index_path`` if they changed.

    ``help_dir`` replaces the HelpSource folder sclang reports. When sclang cannot
    be run, an index that exists is kept as it is; a new one is built from the help
    alone. Either way the note says so.
    """
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
    index = DocsIndex(index_path)
    try:
        if platform is None and index.meta().get("version"):
            # Keep the last good index rather than replace it with the help alone.
            notes[-1] = notes[-1].replace("help files only", "the last index is kept")
            index.set_meta({NOTE: "; ".join(notes)})
            return Report(False, index.meta()["version"], _documents(index), dumped, 0.0,
                          "; ".join(notes))
        fingerprint = docs_fingerprint(help_dir, classes)
        if not force and not index.needs_rebuild(version, fingerprint):
            index.set_meta({**meta, NOTE: index.meta().get(NOTE, "")})
            return Report(False, version, _documents(index), dumped, 0.0,
                          index.meta().get(NOTE, ""))
        if help_dir is None:
            notes.append(f"no HelpSource folder found (looked where sclang said, beside "
                         f"{sources.sclang} and in {', '.join(KNOWN_HELP_DIRS)}): "
                         "runtime classes only, without summaries or examples")
        elif not help_dir.is_dir():
            notes.append(f"no HelpSource folder at {help_dir}: runtime classes only, "
                         "without summaries or examples")
        note = "; ".join(notes)
        stats = index.build(help_dir if help_dir is not None and help_dir.is_dir() else None,
                            classes, version=version, meta={**meta, NOTE: note})
        return Report(True, version, stats.documents, dumped, stats.seconds, note)
    finally:
        index.close()


def _documents(index: DocsIndex) -> int:
    try:
        return int(json.loads(index.meta().get("stats", "{}")).get("documents", 0))
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
