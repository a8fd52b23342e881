"""The schedule operation: what holds at a moment, what happens next, and what fired lately."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from scorch.api import budget, ops
from scorch.api.firing import expand, rooms_here
from scorch.api.operation import (
    READ,
    Answer,
    Args,
    CliForm,
    Host,
    Result,
    Spread,
    operation,
)
from scorch.errors import InvalidRequest, ScorchError
from scorch.schedule import Call, Due
from scorch.schedule.moments import parse_moment
from scorch.schedule.rules import parse_span
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app import Orchestra
    from scorch.app.hours import Fired

#: The farthest ahead ``next`` looks.
MAX_AHEAD = 31 * 86400.0
#: Actions listed at most, however long the span (a cron of every second makes many).
MAX_LISTED = 2000


class ScheduleArgs(Args):
    """A moment, or a length of time from now."""

    at: Annotated[str | None, Field(max_length=60, description=(
        "A moment: what a start then would bring back (the last action of each kind): "
        "18:00, 18:00 tomorrow, 2026-12-24 18:00, +2h"))] = None
    next: Annotated[str | None, Field(max_length=30, description=(
        "Every action from now until this much later: 24h, 90m, 7d"))] = None
    full: Annotated[Flag, Field(description="Every action, however many (by default those "
                                "that fit the answer's size budget)")] = False


class PlannedCall(BaseModel):
    """One call an entry makes."""

    op: str
    args: dict[str, Any]
    text: str


class Planned(BaseModel):
    """What an entry does at a time, on this host."""

    time: float
    local: str = Field(description="the time on the installation's wall clock")
    entry: str
    part: str = Field(description="do (its time, or a period's start) or after (a period's "
                      "end)")
    host: str | None = Field(None, description="the host that makes these calls")
    calls: list[PlannedCall]


class EntryInfo(BaseModel):
    """One entry of the schedule."""

    name: str
    rule: str = Field(description="when, or from .. until")
    next: float | None = Field(description="when it next does something (None: never)")
    next_local: str | None


class FiredInfo(BaseModel):
    """A schedule entry or a cue that fired lately on this host."""

    source: str
    label: str
    due: float
    late_ms: float = Field(description="how long after its time its last call returned")
    ok: bool
    errors: list[str]
    host: str | None = None


class ScheduleOutput(Result):
    """The schedule: what holds, what comes, what fired."""

    timezone: str
    now: float
    at: float | None = Field(None, description="the moment `holds` is for")
    at_local: str | None = Field(None, description="that moment on the wall clock")
    until: float | None = Field(None, description="the end of `upcoming`")
    holds: list[Planned] = Field(default_factory=list, description="at: the last action of "
                                 "each kind due by then, oldest first")
    upcoming: list[Planned] = Field(default_factory=list,
                                    description="next: every action due, in order")
    entries: list[EntryInfo] = Field(default_factory=list)
    recent: list[FiredInfo] = Field(default_factory=list)
    problem: str | None = Field(None, description="why nothing fires (the schedule is off)")
    more: int = Field(0, description="actions left out (the size budget): full=true")

    def text(self) -> str:
        rows = []
        if self.problem:
            rows.append(f"OFF: {self.problem}")
        if self.at is not None:
            rows.append(f"at {self.at_local} the schedule holds:")
            rows += [_row(p) for p in self.holds] or ["  nothing"]
        if self.until is not None:
            rows.append("coming:")
            rows += [_row(p) for p in self.upcoming] or ["  nothing"]
        if self.at is None and self.until is None:
            rows += [f"{e.name}: {e.rule}; next {e.next_local or 'never'}" for e in self.entries]
            rows += [f"fired {f.label}: {'ok' if f.ok else '; '.join(f.errors)}"
                     for f in self.recent[-10:]]
        return budget.lines(rows, self.more, "actions", "schedule(full=true)", "no schedule")


def _row(p: Planned) -> str:
    host = f" [{p.host}]" if p.host else ""
    calls = "; ".join(c.text for c in p.calls)
    return f"  {p.local} {p.entry}{'' if p.part == 'do' else ' ' + p.part}{host}: {calls}"


def _by_time(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Every host's actions by time; each entry once."""
    seen: dict[str, Any] = {}
    for entry in merged.get("entries") or []:
        seen.setdefault(entry["name"], entry)
    return {**merged, "entries": list(seen.values()),
            "holds": sorted(merged.get("holds") or [], key=lambda p: p["time"]),
            "upcoming": sorted(merged.get("upcoming") or [], key=lambda p: p["time"]),
            "recent": sorted(merged.get("recent") or [], key=lambda f: f["due"])}


@operation(access=READ, cli=CliForm("schedule"), spread=Spread(merge=_by_time))
def schedule(orch: Orchestra, args: ScheduleArgs) -> ScheduleOutput:
    """The installation's schedule ([[schedule]] in the config): each entry, when it next
    acts, and what fired lately; with `at`, what holds then; with `next`, every action
    until then. This host's calls only (each host makes its own rooms' part)."""
    if args.at is not None and args.next is not None:
        raise InvalidRequest("give at or next, not both")
    hours, now = orch.hours, time.time()
    plan = hours.plan
    zone = plan.place.zone
    out = ScheduleOutput(timezone=str(zone), now=now, problem=hours.problem,
                         recent=[_fired(f, orch.config.host) for f in hours.recent()])
    try:
        if args.at is not None:
            at = parse_moment(args.at, now, zone)
            held = plan.state_at(at, catching_up=True)
            kept, more = _listed([_planned(orch, d) for d in held], args.full)
            return out.model_copy(update={"at": at, "at_local": _local(at, zone),
                                          "holds": kept, "more": more})
        if args.next is not None:
            span = parse_span(args.next)
            if not 0 < span <= MAX_AHEAD:
                raise ValueError(f"next looks at most {MAX_AHEAD / 86400:g} days ahead")
            dues = plan.between(now, now + span, MAX_LISTED)
            kept, more = _listed([_planned(orch, d) for d in dues], args.full)
            return out.model_copy(update={"until": now + span, "upcoming": kept, "more": more})
    except ValueError as err:
        argument = "at" if args.at is not None else "next"
        refused = InvalidRequest(f"{argument}: {err}")
        refused.argument = argument
        raise refused from None
    entries = []
    for entry in plan.entries:
        rule = entry.when or entry.start
        assert rule is not None
        following = plan.next_time_of(entry, now)
        shown = rule.text if entry.end is None else f"from {rule.text} until {entry.end.text}"
        entries.append(EntryInfo(name=entry.name, rule=shown, next=following,
                                 next_local=_local(following, zone) if following else None))
    return out.model_copy(update={"entries": entries})


def _listed(planned: list[Planned | None], full: bool) -> tuple[list[Planned], int]:
    found = [p for p in planned if p is not None and p.calls]
    return budget.listing(found, budget.json_size, full)


def _local(when: float, zone: Any) -> str:
    return datetime.fromtimestamp(when, zone).strftime("%Y-%m-%d %H:%M:%S %Z")


def _planned(orch: Orchestra, due: Due) -> Planned | None:
    """``due`` with this host's calls only."""
    calls = [PlannedCall(op=c.op, args=dict(c.args), text=c.text()) for c in due.calls
             if _here(orch, c)]
    return Planned(time=due.time, local=_local(due.time, orch.hours.plan.place.zone),
                   entry=due.entry.name, part=due.part, host=orch.config.host, calls=calls)


def _here(orch: Orchestra, call: Call) -> bool:
    """Whether this host makes (part of) ``call``."""
    try:
        return any(rooms_here(op, parsed, orch.config) != []
                   for op, parsed in expand(call, orch.config, ops.load_all))
    except ScorchError:
        return True  # the firing will say why it fails, here


def _fired(fired: Fired, host: str | None) -> FiredInfo:
    return FiredInfo(source=fired.source, label=fired.label, due=fired.due,
                     late_ms=round((fired.done - fired.due) * 1000, 1), ok=fired.ok,
                     errors=[f"{o.call.text()}: {o.error}" for o in fired.outcomes if not o.ok],
                     host=host)

