"""The journal of changes: each with the state it changed, so it can be undone and redone.

An entry holds what a change could touch as it was just before it (a
:class:`~scorch.state.session.Session` cut to the change's rooms, and to the tempo or
the MIDI routes when it changes those), and once it is undone, the state it undid
(what redoing it brings back). Undo takes the latest entry still done, of one room or
of the whole installation; redo the latest undone; a new change to a room drops the
undone entries of that room (their future is gone). Bounded, oldest first out. Pure:
the service layer (``scorch/app/undo.py``) captures, applies and stores.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from scorch.state.session import BufferSpec, NodeSpec, PatternSpec, RoomSpec, Session

#: Entries kept at most (a change's state is a few kilobytes).
LIMIT = 200


@dataclass(frozen=True)
class Entry:
    """One change as the journal keeps it."""

    seq: int
    time: float
    call: str
    """The operation and its action, e.g. ``set`` or ``buffer load``."""
    summary: str
    """What it did, for a person."""
    rooms: tuple[str, ...]
    """The rooms it changed (empty: only the tempo or the MIDI routes)."""
    before: Session
    """What it could change, as it was just before."""
    after: Session | None = None
    """Once undone: what it had made (what redo brings back)."""
    undone: int = 0
    """0 while done; else the order it was undone in (the latest undone redoes first)."""

    def touches(self, room: str | None) -> bool:
        """Whether undoing ``room`` (None: the installation) may take this entry."""
        return room is None or room in self.rooms


@dataclass
class Journal:
    """Entries in the order they were made; not thread-safe (its owner locks)."""

    limit: int = LIMIT
    entries: list[Entry] = field(default_factory=list)
    _undos: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def record(self, call: str, summary: str, rooms: Sequence[str], before: Session,
               now: float) -> Entry:
        """Keep a change just made; the undone entries it supersedes go."""
        seq = self.entries[-1].seq + 1 if self.entries else 1
        return self.add(Entry(seq, now, call, summary, tuple(rooms), before))

    def add(self, entry: Entry, new: bool = True) -> Entry:
        """Keep ``entry`` after the others; ``new``: a change just made (or its line read
        back), which drops the undone entries it supersedes. An entry of a compacted file
        is as it was kept: one redone after an older one was undone drops nothing."""
        touched = set(entry.rooms)
        if new and not entry.undone:
            self.entries = [e for e in self.entries
                            if not e.undone or not (touched & set(e.rooms) or not e.rooms)]
        self.entries.append(entry)
        del self.entries[:-self.limit]
        if entry.undone:
            self._undos = itertools.count(max(entry.undone, self._top()) + 1)
        return entry

    def to_undo(self, room: str | None) -> Entry | None:
        """The latest entry still done of ``room`` (None: of any)."""
        return next((e for e in reversed(self.entries) if not e.undone and e.touches(room)),
                    None)

    def to_redo(self, room: str | None) -> Entry | None:
        """The latest undone entry of ``room`` (None: of any)."""
        undone = [e for e in self.entries if e.undone and e.touches(room)]
        return max(undone, key=lambda e: e.undone) if undone else None

    def undone(self, seq: int, after: Session, order: int | None = None) -> Entry:
        """Mark entry ``seq`` undone; ``after``: the state it had made (``order``: as read
        back)."""
        if order is None:
            order = next(self._undos)
        else:
            self._undos = itertools.count(max(order, self._top()) + 1)
        return self._put(seq, after=after, undone=order)

    def _top(self) -> int:
        return max((e.undone for e in self.entries), default=0)

    def redone(self, seq: int) -> Entry:
        """Mark entry ``seq`` done again."""
        return self._put(seq, undone=0)

    def _put(self, seq: int, **changes: Any) -> Entry:
        for index, entry in enumerate(self.entries):
            if entry.seq == seq:
                self.entries[index] = replace(entry, **changes)
                return self.entries[index]
        raise KeyError(seq)

    # --- files: one JSON line per change, undo and redo (appending costs one entry) ----

    def lines(self) -> list[dict[str, Any]]:
        """The whole journal as lines (a compacted file): each entry as it is kept."""
        return [{"kept": entry_json(e)} for e in self.entries]

    def read_line(self, line: Mapping[str, Any]) -> None:
        """Replay one line; ValueError when it is not one."""
        try:
            if "entry" in line:
                self.add(entry_of(line["entry"]))
            elif "kept" in line:
                self.add(entry_of(line["kept"]), new=False)
            elif "undone" in line:
                self.undone(int(line["undone"]), session_of(line["after"]), int(line["order"]))
            elif "redone" in line:
                self.redone(int(line["redone"]))
            else:
                raise ValueError(f"unknown journal line: {sorted(line)[:5]}")
        except KeyError as err:  # a mark for an entry the bound already dropped is no error
            if isinstance(err.args[0], int):
                return
            raise ValueError(f"a journal line does not read: {err!r}") from None
        except (TypeError, AttributeError) as err:
            raise ValueError(f"a journal line does not read: {err!r}") from None


def undone_line(entry: Entry) -> dict[str, Any]:
    """The line saying ``entry`` was undone."""
    assert entry.after is not None
    return {"undone": entry.seq, "order": entry.undone, "after": session_json(entry.after)}


def redone_line(entry: Entry) -> dict[str, Any]:
    """The line saying ``entry`` was redone."""
    return {"redone": entry.seq}


def entry_json(e: Entry) -> dict[str, Any]:
    """One entry as JSON values."""
    return {"seq": e.seq, "time": e.time, "call": e.call, "summary": e.summary,
            "rooms": list(e.rooms), "before": session_json(e.before),
            "after": session_json(e.after) if e.after is not None else None,
            "undone": e.undone}


def entry_of(e: Mapping[str, Any]) -> Entry:
    """An entry from :func:`entry_json`'s values."""
    return Entry(int(e["seq"]), float(e["time"]), str(e["call"]), str(e["summary"]),
                 tuple(str(r) for r in e["rooms"]), session_of(e["before"]),
                 session_of(e["after"]) if e.get("after") is not None else None,
                 int(e["undone"]))


def session_json(session: Session) -> dict[str, Any]:
    """A session as JSON values (every field, ``routes_known`` included)."""
    return {
        "rooms": {room: {
            "nodes": {n: {"synthdef": s.synthdef, "params": dict(s.params)}
                      for n, s in spec.nodes.items()},
            "buffers": {b: {"path": s.path, "bufnum": s.bufnum}
                        for b, s in spec.buffers.items()},
            "patterns": {p: {"kind": s.kind, "name": s.name, "playing": s.playing,
                             "text": s.text, "mute": s.mute}
                         for p, s in spec.patterns.items()},
            "patterns_known": spec.patterns_known, "gain_db": spec.gain_db}
            for room, spec in session.rooms.items()},
        "routes": [dict(r) for r in session.routes],
        "routes_known": session.routes_known,
        "tempos": dict(session.tempos)}


def session_of(data: Mapping[str, Any]) -> Session:
    """A session from :func:`session_json`'s values."""
    rooms = {str(room): RoomSpec(
        nodes={str(n): NodeSpec(str(s["synthdef"]), {str(k): float(v)
                                                     for k, v in s["params"].items()})
               for n, s in spec["nodes"].items()},
        buffers={str(b): BufferSpec(str(s["path"]), int(s["bufnum"]))
                 for b, s in spec["buffers"].items()},
        patterns={str(p): PatternSpec(str(s["kind"]), str(s["name"]), bool(s["playing"]),
                                      str(s["text"]), str(s.get("mute", "")))
                  for p, s in spec["patterns"].items()},
        patterns_known=bool(spec["patterns_known"]),
        gain_db=None if spec.get("gain_db") is None else float(spec["gain_db"]))
        for room, spec in data["rooms"].items()}
    return Session(rooms=rooms, routes=tuple(dict(r) for r in data["routes"]),
                   routes_known=bool(data["routes_known"]),
                   tempos={str(k): float(v) for k, v in data["tempos"].items()})
