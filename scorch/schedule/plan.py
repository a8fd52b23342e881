"""A schedule's entries in time: what happens when, and what holds at any moment. Pure.

An entry is a point (``when``: its ``do`` happens then) or a period (``from`` and
``until``: its ``do`` holds from its start, its ``after`` from its end on). The
state at a moment is not every action ever due: it is, for each kind of action,
the last one due (:func:`kind_of`): the scene the rooms last got, whether a room
was last booted or quit, a node's last value of each param. That is what a
restart, a reboot or a clock jump brings back, without replaying what was missed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from scorch.schedule.rules import Holidays, Place, Rule, last_at, never, next_after

Part = Literal["do", "after"]


@dataclass(frozen=True)
class Call:
    """One operation call, in the words of the tools: ``op`` and its arguments."""

    op: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The call for a person: ``scene recall name=evening``."""
        action = self.args.get("action")
        rest = " ".join(f"{k}={json.dumps(v)[:60]}" for k, v in self.args.items()
                        if k != "action")
        return " ".join(part for part in (self.op, action, rest) if part)


@dataclass(frozen=True)
class Except:
    """The days an entry keeps free: dates, dates of every year, spans, public holidays."""

    dates: frozenset[date] = frozenset()
    yearly: frozenset[tuple[int, int]] = frozenset()
    spans: tuple[tuple[date, date], ...] = ()
    holidays: Holidays | None = None

    def __call__(self, day: date) -> bool:
        return (day in self.dates or (day.month, day.day) in self.yearly
                or any(first <= day <= last for first, last in self.spans)
                or (self.holidays is not None and day in self.holidays))


_YEARLY = re.compile(r"^(\d{2})-(\d{2})$")


def parse_except(items: Sequence[str], holidays: Holidays | None) -> Except:
    """``except`` items: ``2026-12-24``, ``12-24`` (every year), ``2026-12-24..2027-01-06``,
    ``holidays``; ValueError names the item and what was expected."""
    dates, yearly, spans, free = set(), set(), [], None
    for item in items:
        spec = item.strip().lower()
        try:
            if spec == "holidays":
                if holidays is None:
                    raise ValueError("holidays need [location] country (and region)")
                free = holidays
            elif ".." in spec:
                first, last = (date.fromisoformat(p.strip()) for p in spec.split("..", 1))
                if last < first:
                    raise ValueError("the span ends before it begins")
                spans.append((first, last))
            elif (every := _YEARLY.fullmatch(spec)) is not None:
                date(2000, int(every[1]), int(every[2]))  # a day that exists (in a leap year)
                yearly.add((int(every[1]), int(every[2])))
            else:
                dates.add(date.fromisoformat(spec))
        except ValueError as err:
            raise ValueError(f"{item[:40]!r}: {err}; expected a date (2026-12-24), a date of "
                             "every year (12-24), a span (2026-12-24..2027-01-06) or "
                             "holidays") from None
    return Except(frozenset(dates), frozenset(yearly), tuple(spans), free)


@dataclass(frozen=True)
class Entry:
    """One ``[[schedule]]`` entry, read."""

    index: int
    name: str
    do: tuple[Call, ...]
    when: Rule | None = None
    start: Rule | None = None
    """A period's ``from``."""
    end: Rule | None = None
    """A period's ``until``: the first time after its start."""
    after: tuple[Call, ...] = ()
    """A period's calls at its end."""
    skip: Except = field(default_factory=Except)
    catch_up: bool = True
    """Whether a restart or a clock jump brings back its last action."""


@dataclass(frozen=True)
class Due:
    """What an entry does at a time."""

    time: float
    entry: Entry
    part: Part
    calls: tuple[Call, ...]


#: Arguments that say what a call does to its target rather than which target: a later
#: call that differs only in these replaces an earlier one.
VALUES = frozenset({"action", "position", "seconds", "value", "bpm", "beat", "transport",
                    "synthdef", "source", "at", "delay", "dry_run", "timeout_s", "play",
                    "target", "add_action"})
#: Operations whose ``name`` is what they set, not what they act on (a scene's).
NAME_IS_VALUE = frozenset({"scene"})
#: Operations that act on one target together (a named node is played, then released).
FAMILY = {"release": "play"}
#: Operations whose rooms argument is not ``instance`` (a ``do`` item may say either).
ROOMS_ARG = {"instance": "name"}


def kind_of(call: Call) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What a call sets: a later call of the same kind replaces it in the state."""
    keys = []
    for key, value in sorted(call.args.items()):
        if key in VALUES or (key == "name" and call.op in NAME_IS_VALUE):
            continue
        if key == ROOMS_ARG.get(call.op):
            key = "instance"
        if key == "params" and isinstance(value, Mapping):
            keys.append(("params", ",".join(sorted(value))))
        else:
            keys.append((key, json.dumps(value, sort_keys=True, default=str)))
    return FAMILY.get(call.op, call.op), tuple(sorted(keys))


class Plan:
    """The entries of a schedule in one place and zone."""

    def __init__(self, entries: Sequence[Entry], place: Place) -> None:
        self.entries = tuple(entries)
        self.place = place

    def last(self, entry: Entry, t: float) -> Due | None:
        """The entry's last action due at or before ``t`` (a period: its start while it lasts,
        then its end; None once it ended without ``after``)."""
        if entry.when is not None:
            when = last_at(entry.when, t, self.place, entry.skip)
            return Due(when, entry, "do", entry.do) if when is not None else None
        assert entry.start is not None and entry.end is not None
        began = last_at(entry.start, t, self.place, entry.skip)
        if began is None:
            return None
        ended = next_after(entry.end, began, self.place, never)
        if ended is None or ended > t:
            return Due(began, entry, "do", entry.do)
        return Due(ended, entry, "after", entry.after) if entry.after else None

    def state_at(self, t: float, catching_up: bool = False) -> list[Due]:
        """What holds at ``t``: of each kind of call, the last due, oldest first.

        ``catching_up``: only the entries a restart brings back (``catch_up``).
        """
        lasts = [due for entry in self.entries
                 if (not catching_up or entry.catch_up) and (due := self.last(entry, t))]
        latest: dict[Any, tuple[float, int, int]] = {}
        for due in lasts:
            for number, call in enumerate(due.calls):
                order = (due.time, due.entry.index, number)
                kind = kind_of(call)
                if kind not in latest or latest[kind] < order:
                    latest[kind] = order
        kept = set(latest.values())
        out = []
        for due in sorted(lasts, key=lambda d: (d.time, d.entry.index)):
            calls = tuple(c for n, c in enumerate(due.calls)
                          if (due.time, due.entry.index, n) in kept)
            if calls:
                out.append(Due(due.time, due.entry, due.part, calls))
        return out

    def between(self, t0: float, t1: float, limit: int = 10_000) -> list[Due]:
        """Every action due after ``t0`` up to ``t1``, in order (at most ``limit``)."""
        found: dict[tuple[float, int, Part], Due] = {}
        for entry in self.entries:
            for due in self._entry_between(entry, t0, t1, limit):
                found.setdefault((due.time, entry.index, due.part), due)
        ordered = sorted(found.values(),
                         key=lambda d: (d.time, d.entry.index, d.part == "do"))
        return ordered[:limit]

    def _entry_between(self, entry: Entry, t0: float, t1: float, limit: int) -> list[Due]:
        rule = entry.when or entry.start
        assert rule is not None
        out: list[Due] = []
        starts: list[float] = []
        t = t0
        while len(out) < limit:
            when = next_after(rule, t, self.place, entry.skip)
            if when is None or when > t1:
                break
            out.append(Due(when, entry, "do", entry.do))
            starts.append(when)
            t = when
        if entry.when is None and entry.after:
            assert entry.start is not None and entry.end is not None
            began = last_at(entry.start, t0, self.place, entry.skip)
            for start in ([began] if began is not None else []) + starts:
                ended = next_after(entry.end, start, self.place, never)
                if ended is not None and t0 < ended <= t1:
                    out.append(Due(ended, entry, "after", entry.after))
        return out

    def next_time(self, t: float) -> float | None:
        """When the next action after ``t`` is due (None: never)."""
        later = [when for entry in self.entries
                 if (when := self.next_time_of(entry, t)) is not None]
        return min(later) if later else None

    def next_time_of(self, entry: Entry, t: float) -> float | None:
        """When ``entry`` next acts after ``t`` (None: never)."""
        rule = entry.when or entry.start
        assert rule is not None
        times = [next_after(rule, t, self.place, entry.skip)]
        if entry.when is None and entry.after:
            assert entry.start is not None and entry.end is not None
            began = last_at(entry.start, t, self.place, entry.skip)
            if began is not None:
                times.append(next_after(entry.end, began, self.place, never))
        later = [when for when in times if when is not None and when > t]
        return min(later) if later else None
