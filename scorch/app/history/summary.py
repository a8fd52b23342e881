"""What ``scorch report`` says of each room over a time span (pure: history in, rows out).

Everything is read by kind and sample name, so kinds added later need no change here:
``SOUND_SILENT`` opens silent time, ``SOUND_LIMITING`` limiting time, from when its
condition began (``for_s`` before the event); ``SOUND_OK`` ends the fault its ``fault``
names (without one: every fault open); a room is up from ``READY``/``RESTORED``/
``DEGRADED`` until a kind of :data:`DOWN`. Samples named ``lufs`` give the loudness
distribution, ``peak_dbfs`` the peaks, ``xruns`` (a count that only grows, but for
restarts) the xruns.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from scorch.app.history.store import Recorded, Sample

UP = frozenset({"READY", "RESTORED", "DEGRADED"})
DOWN = frozenset({"CRASHED", "HUNG", "RESTARTING", "FAILED", "STOPPED", "BOOTING",
                  "BOOT_FAILED"})
#: Kinds counted as a restart, with the reason their message gives.
RESTARTS = frozenset({"CRASHED", "HUNG", "SCLANG_RESTARTED"})
#: Sound kinds whose time is summed, by the column they go in.
SOUND_SPANS = {"SOUND_SILENT": "silent_s", "SOUND_LIMITING": "limiting_s"}
SOUND_OK = "SOUND_OK"
#: The kind each fault a ``SOUND_OK`` names was raised as.
FAULTS = {"silent": "SOUND_SILENT", "limiting": "SOUND_LIMITING"}

COLUMNS = ("room", "uptime_pct", "restarts", "why", "silent_s", "limiting_s",
           "lufs_median", "lufs_p95", "peak_dbfs", "xruns")


@dataclass
class RoomReport:
    """One room's figures over the span."""

    room: str
    span_s: float
    up_s: float = 0.0
    restarts: Counter[str] = field(default_factory=Counter)
    silent_s: float = 0.0
    limiting_s: float = 0.0
    lufs: list[float] = field(default_factory=list)
    peak_dbfs: float | None = None
    xruns: int = 0

    @property
    def uptime_pct(self) -> float:
        return 100.0 * self.up_s / self.span_s if self.span_s > 0 else 0.0

    def row(self) -> dict[str, str]:
        """The room's figures as the columns print them."""
        def num(value: float | None, digits: int = 1) -> str:
            return "" if value is None else f"{value:.{digits}f}"

        return {"room": self.room, "uptime_pct": num(self.uptime_pct, 2),
                "restarts": str(sum(self.restarts.values())),
                "why": "; ".join(f"{n}x {why}" for why, n in self.restarts.most_common()),
                "silent_s": num(self.silent_s), "limiting_s": num(self.limiting_s),
                "lufs_median": num(percentile(self.lufs, 50)),
                "lufs_p95": num(percentile(self.lufs, 95)),
                "peak_dbfs": num(self.peak_dbfs), "xruns": str(self.xruns)}


def percentile(values: list[float], pct: float) -> float | None:
    """The ``pct`` percentile of ``values`` (inclusive method); None when there are none."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    if pct == 50:
        return statistics.median(values)
    return statistics.quantiles(values, n=100, method="inclusive")[int(pct) - 1]


def _reason(event: Recorded) -> str:
    # the message names the process and how it ended ("scsynth killed by SIGKILL")
    return f"{event.kind} {event.message[:60]}".rstrip()


def summarize(events: Iterable[Recorded], samples: Iterable[Sample],
              since: float, until: float) -> list[RoomReport]:
    """Each room's report over ``[since, until]``, rooms in name order."""
    span = max(0.0, until - since)
    rooms: dict[str, RoomReport] = {}
    by_room: dict[str, list[Recorded]] = {}
    for event in events:
        if since <= event.time <= until:
            by_room.setdefault(event.room, []).append(event)
    for room, its in by_room.items():
        report = rooms.setdefault(room, RoomReport(room, span))
        _spans(report, sorted(its, key=lambda e: e.time), since, until)
    _samples(rooms, samples, since, until, span)
    return [rooms[name] for name in sorted(rooms)]


def _spans(report: RoomReport, events: list[Recorded], since: float, until: float) -> None:
    # Before its first event in the span a room was up if that event brings it down.
    up_from: float | None = since if events and events[0].kind in DOWN - {"BOOTING"} else None
    sound: dict[str, float] = {}
    for event in events:
        if event.kind in RESTARTS:
            report.restarts[_reason(event)] += 1
        if event.kind in UP and up_from is None:
            up_from = event.time
        elif event.kind in DOWN and up_from is not None:
            report.up_s += event.time - up_from
            up_from = None
        if event.kind in SOUND_SPANS:
            held = event.details.get("for_s")
            began = event.time - (held if isinstance(held, (int, float)) else 0.0)
            sound.setdefault(event.kind, max(since, began))
        elif event.kind == SOUND_OK:
            fault = event.details.get("fault")
            for kind in ([FAULTS.get(str(fault), "")] if fault is not None else list(sound)):
                if kind in sound:
                    _add_sound(report, kind, event.time - sound.pop(kind))
    if up_from is not None:
        report.up_s += until - up_from
    for kind, start in sound.items():
        _add_sound(report, kind, until - start)


def _add_sound(report: RoomReport, kind: str, seconds: float) -> None:
    column = SOUND_SPANS[kind]
    setattr(report, column, getattr(report, column) + seconds)


def _samples(rooms: dict[str, RoomReport], samples: Iterable[Sample], since: float,
             until: float, span: float) -> None:
    last_xruns: dict[str, float] = {}
    for sample in samples:
        if not since <= sample.time <= until:
            continue
        report = rooms.setdefault(sample.room, RoomReport(sample.room, span))
        if sample.name == "lufs":
            report.lufs.append(sample.value)
        elif sample.name == "peak_dbfs":
            report.peak_dbfs = sample.value if report.peak_dbfs is None \
                else max(report.peak_dbfs, sample.value)
        elif sample.name == "xruns":
            before = last_xruns.get(sample.room)
            # a count that fell was restarted with its process: what it shows is new
            if before is not None:
                report.xruns += int(sample.value - before if sample.value >= before
                                    else sample.value)
            last_xruns[sample.room] = sample.value


def as_text(reports: list[RoomReport], since: float, until: float) -> str:
    """The reports as an aligned table with a heading line."""
    rows = [dict(zip(COLUMNS, COLUMNS, strict=True))] + [r.row() for r in reports]
    widths = {c: max(len(row[c]) for row in rows) for c in COLUMNS}
    head = f"scorch report over {until - since:.0f} s ({len(reports)} rooms)"
    lines = ["  ".join(row[c].ljust(widths[c]) for c in COLUMNS).rstrip() for row in rows]
    return "\n".join([head, *lines]) + "\n"


def as_csv(reports: list[RoomReport]) -> str:
    """The reports as CSV with a header row."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(r.row() for r in reports)
    return out.getvalue()
