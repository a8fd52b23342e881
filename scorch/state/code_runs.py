"""Which code made a synth: the latest code requests of a room, and the loss report's lines.

sclang sends its ``/s_new`` itself, so scorch never sees which request made a node;
it sees when each synth started (its ``/n_go``) and when each request ran. A synth
that started while a request ran (or within :data:`GRACE` after it, the server
latency a bundle adds) is taken for that request's; one that started later is named
after the request before it, as made after it returned (a routine, a pattern, a
responder: that request's, or older code's still running). Pure, but for the lock.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: Seconds after a request returned in which a synth it made may still start: the
#: latency of ``s.bind`` and of a pattern's first events (``s.latency`` is 0.2).
GRACE = 0.5
#: Requests kept per room.
KEPT = 200
#: Characters of a request's code a report quotes.
QUOTE = 60


@dataclass(frozen=True)
class CodeRun:
    """One code request as the history keeps it."""

    entry: int
    """Its history id."""
    started: float
    """Unix time it was sent."""
    ended: float
    """Unix time its answer came (or, scheduled with ``at``, when it ran)."""
    code: str
    """Its code."""


@dataclass
class Origin:
    """The lost synths one request made (``during``), or that started after it returned."""

    run: CodeRun | None
    """None: no request is known before them (they ran before scorch saw any)."""
    during: bool
    synthdefs: Counter[str] = field(default_factory=Counter)

    def details(self) -> dict[str, object]:
        """The plain form an event's details carry."""
        return {"entry": self.run.entry if self.run else None, "during": self.during,
                "code": quote(self.run.code) if self.run else "",
                "synthdefs": dict(self.synthdefs)}

    def text(self) -> str:
        """``sine x2 made by history #12 (`code`)``, or started after it, or before any."""
        defs = ", ".join(f"{name} x{n}" if n > 1 else name
                         for name, n in self.synthdefs.most_common(6))
        if self.run is None:
            return f"{defs} started before any code request scorch kept"
        how = "made by" if self.during else "started after"
        return f"{defs} {how} history #{self.run.entry} (`{quote(self.run.code)}`)"


class CodeRuns:
    """The latest :data:`KEPT` code requests of one room, written by the facade's threads and
    read by the actor's."""

    def __init__(self) -> None:
        self._runs: deque[CodeRun] = deque(maxlen=KEPT)
        self._lock = threading.Lock()

    def ran(self, run: CodeRun) -> None:
        """Keep a request that ran."""
        with self._lock:
            self._runs.append(run)

    def runs(self) -> list[CodeRun]:
        """The requests kept, oldest first."""
        with self._lock:
            return sorted(self._runs, key=lambda r: r.started)


def origins(synths: Sequence[tuple[int, str]], started: Mapping[int, float],
            runs: Sequence[CodeRun]) -> list[Origin]:
    """The lost ``synths`` (node id, SynthDef) by the request that made them, by their start
    times (``started``; a synth without one is placed as one that started before any).
    Oldest request first."""
    found: dict[tuple[int | None, bool], Origin] = {}
    for node_id, synthdef in synths:
        at = started.get(node_id)
        run, during = _made_by(at, runs) if at is not None else (None, False)
        key = (run.entry if run else None, during)
        found.setdefault(key, Origin(run, during)).synthdefs[synthdef] += 1
    return sorted(found.values(), key=lambda o: (o.run.started if o.run else 0.0, not o.during))


def _made_by(at: float, runs: Sequence[CodeRun]) -> tuple[CodeRun | None, bool]:
    """The request running at ``at`` (True; the latest, if a grace overlaps the next), else
    the latest before it (False)."""
    running = before = None
    for run in runs:
        if run.started <= at <= run.ended + GRACE:
            running = run
        if run.started <= at:
            before = run
    return (running, True) if running is not None else (before, False)


def quote(code: str) -> str:
    """A request's code on one short line."""
    line = " ".join(code.split())
    return line if len(line) <= QUOTE else line[:QUOTE - 1] + "…"
