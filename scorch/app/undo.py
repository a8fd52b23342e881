"""Undo and redo: the journal of changes, kept in the state folder, stepped back and forth.

Before a change runs, what it may touch is captured as a session cut to its rooms
(and to the tempo or the MIDI routes when it changes those); undoing it brings that
back by the same diff a session load makes, after capturing what it had made, which
redoing brings back in turn. The journal itself is :mod:`scorch.state.journal`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorch.app.session_keeper import Sessions
from scorch.app.tree import Tree
from scorch.errors import InvalidRequest, ScorchError
from scorch.state import Entry, Journal, Kind, Session, entry_json, redone_line, undone_line
from scorch.state.session import Change

log = logging.getLogger(__name__)

#: The journal's file in the state folder: one JSON line per change, undo and redo.
FILE = "journal.jsonl"
#: The file is rewritten from the journal once it holds this many times its bound in lines.
COMPACT = 4


@dataclass(frozen=True)
class Scope:
    """What a change may touch: rooms, and the tempo or the MIDI routes."""

    rooms: tuple[str, ...] = ()
    tempo: bool = False
    routes: bool = False
    patterns: bool = False
    """The rooms' patterns too (only pattern changes and loads: code changes them unjournaled)."""


@dataclass(frozen=True)
class Step:
    """One entry undone or redone, and what that changed."""

    seq: int
    call: str
    summary: str
    changes: list[Change]
    failed: list[tuple[Change, str]]


class Undo:
    """The journal of one installation (any thread: one lock around it)."""

    def __init__(self, tree: Tree, sessions: Sessions) -> None:
        self._tree = tree
        self._sessions = sessions
        self._path = tree.config.state_path() / FILE
        self._lock = threading.RLock()
        self._lines = 0
        """Lines in the file (it is compacted past :data:`COMPACT` times the bound)."""
        self.journal = self._read(self._path)

    def _read(self, path: Path) -> Journal:
        journal = Journal()
        try:
            text = path.read_text()
        except FileNotFoundError:
            return journal
        except OSError as err:
            log.warning("journal %s not read (%s): starting a new one", path, err)
            return journal
        for number, line in enumerate(text.splitlines(), 1):
            try:
                journal.read_line(json.loads(line))
            except ValueError as err:  # a line cut short by a crash: the rest is kept
                log.warning("journal %s line %d left out: %s", path, number, err)
            self._lines += 1
        return journal

    def _append(self, line: dict[str, Any]) -> None:
        """Add one line to the file; rewrite it whole once it holds far more than the bound."""
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            if self._lines >= COMPACT * self.journal.limit:
                part = self._path.with_suffix(".part")
                part.write_text("".join(json.dumps(x) + "\n" for x in self.journal.lines()))
                os.replace(part, self._path)
                self._lines = len(self.journal.entries)
                return
            with self._path.open("a") as out:
                out.write(json.dumps(line) + "\n")
            self._lines += 1
        except OSError as err:  # the change is made; only its undo is not kept on disk
            log.warning("journal %s not written: %s", self._path, err)

    # --- recording --------------------------------------------------------------------

    def capture(self, scope: Scope) -> Session:
        """What ``scope`` holds now (read from the views: it never waits)."""
        return self._sessions.capture_now(list(scope.rooms), scope.tempo, scope.routes,
                                          scope.patterns)

    def record(self, call: str, summary: str, scope: Scope, before: Session) -> Entry:
        """Keep a change that was just made, with what it touched as it was before."""
        with self._lock:
            entry = self.journal.record(call, summary, scope.rooms, before, time.time())
            self._append({"entry": entry_json(entry)})
            return entry

    # --- stepping ---------------------------------------------------------------------

    def undo(self, room: str | None, steps: int = 1, dry_run: bool = False) -> list[Step]:
        """Undo the latest ``steps`` changes of ``room`` (None: of the installation)."""
        return self._step(room, steps, dry_run, back=True)

    def redo(self, room: str | None, steps: int = 1, dry_run: bool = False) -> list[Step]:
        """Redo the latest ``steps`` undone changes of ``room`` (None: of the installation)."""
        return self._step(room, steps, dry_run, back=False)

    def _step(self, room: str | None, steps: int, dry_run: bool, back: bool) -> list[Step]:
        if room is not None:
            self._tree.view(room)  # RoomNotFound names the rooms
        done: list[Step] = []
        with self._lock:
            journal = self.journal
            for _ in range(steps):
                entry = journal.to_undo(room) if back else journal.to_redo(room)
                if entry is None:
                    break
                target = entry.before if back else entry.after
                assert target is not None  # an undone entry has its after
                now = self.capture(_scope_of(entry, target))
                changes = self._sessions.diff_to(now, target)
                if dry_run:
                    done.append(Step(entry.seq, entry.call, entry.summary, changes, []))
                    # what a second step would do depends on this one's: show one
                    break
                failed = self._sessions.apply(changes, by="undo")
                if back:
                    self._append(undone_line(journal.undone(entry.seq, now)))
                else:
                    self._append(redone_line(journal.redone(entry.seq)))
                done.append(Step(entry.seq, entry.call, entry.summary, changes, failed))
                self._event(entry, back, changes, failed)
        if not done and not dry_run:
            what = "undo" if back else "redo"
            where = f" in {room}" if room is not None else ""
            raise InvalidRequest(f"nothing to {what}{where}")
        return done

    def _event(self, entry: Entry, back: bool, changes: Sequence[Change],
               failed: Sequence[tuple[Change, str]]) -> None:
        verb = "undone" if back else "redone"
        for room in entry.rooms or self._tree.views:
            with contextlib.suppress(ScorchError, KeyError):
                self._tree.views[room].events.add(
                    Kind.UNDONE, f"{verb}: {entry.summary} ({len(changes)} changes"
                    f"{f', {len(failed)} failed' if failed else ''})",
                    seq=entry.seq, call=entry.call, undone=back)

    def entries(self, room: str | None) -> list[Entry]:
        """The journal, oldest first (of ``room``, or all)."""
        with self._lock:
            return [e for e in self.journal.entries if e.touches(room)]


def _scope_of(entry: Entry, target: Session) -> Scope:
    return Scope(rooms=entry.rooms, tempo=bool(target.tempos), routes=target.routes_known,
                 patterns=any(spec.patterns_known for spec in target.rooms.values()))

