"""The installation's log for an operator: consoles and lifecycle events, merged in time.

``scorch logs [ROOM] [-n N] [-f]`` reads it; ``-f`` follows by passing back the
answer's ``cursor``, which is exact (console and event sequence numbers), so a
line is never shown twice or skipped. Claude reads the same through ``console``
and ``events``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from scorch.api.fields import Selector
from scorch.api.operation import (
    READ,
    Answer,
    Args,
    CliForm,
    Host,
    Result,
    Spread,
    Tool,
    operation,
)

if TYPE_CHECKING:
    from scorch.app import Orchestra

#: A cursor holds, per room, its console's seq under its name and its events'
#: seq under its name and this suffix.
EVENTS = "@events"


class LogsArgs(Args):
    """Which rooms, how much, and from where."""

    instance: Selector = "*"
    lines: Annotated[int, Field(ge=1, le=10_000, strict=True,
                                description="How many of the latest entries")] = 50
    after: Annotated[dict[str, Annotated[int, Field(ge=0, strict=True)]] | None, Field(
        max_length=1000, description="Only entries after this cursor (a previous answer's "
        "cursor); the latest `lines` entries when absent")] = None


class LogEntry(BaseModel):
    """One line of a room's console, or one lifecycle event."""

    time: float
    instance: str
    source: str = Field(description="sclang, scsynth, jackd, or scorch for an event")
    text: str


class LogsOutput(Result):
    """Log entries, oldest first, and where the next read starts."""

    entries: list[LogEntry]
    cursor: dict[str, int]

    def text(self) -> str:
        return "\n".join(_line(entry) for entry in self.entries)


def _line(entry: LogEntry) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
    return (f"{stamp}.{int(entry.time % 1 * 1000):03d} {entry.instance} "
            f"[{entry.source}] {entry.text}")


def _in_time(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Every host's entries in time; the latest ``lines`` unless after a cursor."""
    entries = sorted(merged.get("entries") or [], key=lambda e: e["time"])
    if not getattr(args, "after", None):
        entries = entries[-args.lines:]
    return {**merged, "entries": entries}


@operation(access=READ, cli=CliForm("logs", ("instance",), short={"lines": "n"}, follow="after"),
           spread=Spread(merge=_in_time), tool=Tool(listed=False))
def logs(orch: Orchestra, args: LogsArgs) -> LogsOutput:
    """The consoles of rooms and their lifecycle events (boots, crashes, restarts),
    merged in time, oldest first. -f follows them."""
    after = args.after or {}
    entries: list[LogEntry] = []
    cursor: dict[str, int] = {}
    for name in orch.rooms.resolve(args.instance):
        view, events_key = orch.views[name], f"{name}{EVENTS}"
        lines = (view.console.since(after[name]) if name in after
                 else view.console.tail(args.lines))
        events = (view.events.since(after[events_key]) if events_key in after
                  else view.events.since()[-args.lines:])
        entries += [LogEntry(time=line.time, instance=name, source=line.source,
                             text=line.text) for line in lines]
        entries += [LogEntry(time=e.time, instance=name, source="scorch",
                             text=f"{e.kind}: {e.message}") for e in events]
        cursor[name] = lines[-1].seq if lines else after.get(name, view.console.mark())
        cursor[events_key] = events[-1].seq if events else after.get(events_key,
                                                                     view.events.mark())
    entries.sort(key=lambda entry: entry.time)
    return LogsOutput(entries=entries if args.after else entries[-args.lines:], cursor=cursor)
