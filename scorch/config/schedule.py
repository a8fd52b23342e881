"""The installation's hours in ``config.toml``: ``[location]``, ``[[schedule]]``, ``[[cues]]``.

Each entry of the schedule and each cue is a list of operation calls in the
words of the tools (``{ op = "scene", action = "recall", name = "evening" }``).
Here their shape is read (a table with an ``op``) and the time rules parsed;
each call is checked against its operation's own arguments by the API layer
(:func:`scorch.api.firing.check_calls`), which knows the operations, with the
same located errors. The pure forms (rules, plans, cue lists) are
:mod:`scorch.schedule`'s.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from scorch.config.lines import key_lines, located
from scorch.errors import ConfigError
from scorch.schedule import Call, Cue, Entry, Place, Plan, parse_rule
from scorch.schedule.plan import parse_except
from scorch.schedule.rules import Holidays, check_holidays, parse_days
from scorch.values import Selector, StrictModel, no_nul

#: Calls one entry or cue makes at most.
MAX_CALLS = 64
#: A call's arguments at most (the widest operation takes about twenty).
MAX_ARGS = 40
_OP = re.compile(r"^[a-z][a-z_]{0,39}$")


def _calls(items: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    for number, item in enumerate(items):
        op = item.get("op")
        if not isinstance(op, str) or not _OP.fullmatch(op):
            raise ValueError(f"item {number}: each call is a table with `op`, the tool's name "
                             f'(e.g. {{ op = "scene", action = "recall", name = "evening" }}),'
                             f" found op = {str(op)[:40]!r}")
        if len(item) > MAX_ARGS:
            raise ValueError(f"item {number}: at most {MAX_ARGS} arguments")
    return items


Calls = Annotated[tuple[dict[str, Any], ...], Field(max_length=MAX_CALLS),
                  AfterValidator(_calls)]
Text = Annotated[str, AfterValidator(no_nul), Field(max_length=200)]


def _rule(value: str | None) -> str | None:
    if value is not None:
        parse_rule(value)
    return value


TimeRule = Annotated[str | None, Field(max_length=200), AfterValidator(_rule)]


def local_zone() -> ZoneInfo:
    """This machine's time zone (from /etc/localtime), else UTC."""
    try:
        link = Path("/etc/localtime").resolve()
        name = str(link).split("zoneinfo/", 1)[1] if "zoneinfo/" in str(link) else ""
        return ZoneInfo(name) if name else _from_file(Path("/etc/localtime"))
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return ZoneInfo("UTC")


def _from_file(path: Path) -> ZoneInfo:
    with path.open("rb") as zone:
        return ZoneInfo.from_file(zone, key="localtime")


class Location(StrictModel):
    """The ``[location]`` table: the installation's time zone, place and public holidays."""

    timezone: str | None = Field(None, max_length=64, description="an IANA time zone "
                                 "(Europe/Berlin) the schedule's times are read in; unset: "
                                 "this machine's")
    latitude: float | None = Field(None, ge=-90, le=90, description="degrees north, for "
                                   "sunrise and sunset")
    longitude: float | None = Field(None, ge=-180, le=180, description="degrees east")
    elevation: float = Field(0.0, ge=-500, le=9000, description="metres above the sea")
    country: str | None = Field(None, pattern=r"^[A-Z]{2,3}$", description="an ISO code "
                                "(DE, US): `except = [\"holidays\"]` skips its public holidays")
    region: str | None = Field(None, pattern=r"^[A-Za-z0-9-]{1,8}$",
                               description="a subdivision of the country (BY, NY)")

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            near = difflib.get_close_matches(value, sorted(available_timezones()), n=3)
            raise ValueError(f"no time zone {value!r}" + (
                f"; did you mean {', '.join(near)}?" if near else
                " (IANA names such as Europe/Berlin)")) from None
        return value

    @model_validator(mode="after")
    def _known(self) -> Location:
        if self.region is not None and self.country is None:
            raise ValueError("region needs its country")
        if self.country is not None:
            check_holidays(self.country, self.region)
        if (self.latitude is None) != (self.longitude is None):
            raise ValueError("give latitude and longitude both, or neither")
        return self

    def place(self) -> Place:
        """Where the schedule's times are read."""
        zone = ZoneInfo(self.timezone) if self.timezone else local_zone()
        return Place(zone, self.latitude, self.longitude, self.elevation)

    def holidays(self) -> Holidays | None:
        """The public holidays ``except`` may skip (None: no country given)."""
        return Holidays(self.country, self.region) if self.country else None


class ScheduleEntry(StrictModel):
    """One ``[[schedule]]`` entry: when, and what the rooms do then (or while it lasts)."""

    name: Text | None = Field(None, description="its name in logs, events and the journal")
    when: TimeRule = Field(None, description="a cron expression (5 fields, or 6 with seconds "
                       "last), HH:MM, or sunrise/sunset/dawn/dusk/noon with an offset "
                       "(sunset-30m)")
    start: TimeRule = Field(None, alias="from", description="a period's start (as `when`)")
    until: TimeRule = Field(None, description="a period's end: the first time after its start")
    days: str | None = Field(None, max_length=60, description="the weekdays of an HH:MM or "
                             "sun time (mon-fri, sat,sun, weekdays); a cron has its own")
    skip: tuple[Text, ...] = Field((), alias="except", max_length=400, description="dates "
                                   "it keeps free: 2026-12-24, 12-24 (every year), "
                                   "2026-12-24..2027-01-06, holidays")
    rooms: Selector | None = Field(None, description="the rooms of each call that names "
                                   "none: a room, a group or *")
    do: Calls = Field(min_length=1, description="the calls it makes (at a period's start)")
    after: Calls = Field((), description="a period's calls at its end")
    catch_up: bool | None = Field(None, description="a restart or a clock jump brings back "
                                  "its last action (default: yes, unless it GOes a cue)")

    @field_validator("days")
    @classmethod
    def _days(cls, value: str | None) -> str | None:
        if value is not None:
            parse_days(value)
        return value

    @model_validator(mode="after")
    def _one_time(self) -> ScheduleEntry:
        period = self.start is not None or self.until is not None
        if self.when is not None and period:
            raise ValueError("give `when`, or `from` and `until` (a period), not both")
        if self.when is None and (self.start is None or self.until is None):
            raise ValueError("give `when`, or `from` and `until` (a period)")
        if self.after and not period:
            raise ValueError("`after` is a period's (at its `until`); a `when` entry has `do`")
        for rule in (self.when, self.start):  # `days` are a start's, never an end's
            if rule is not None:
                parse_rule(rule, self.days)
        return self

    def entry(self, index: int, holidays: Holidays | None) -> Entry:
        """The pure form (see :mod:`scorch.schedule.plan`)."""
        do, after = _pure(self.do, self.rooms), _pure(self.after, self.rooms)
        catch_up = self.catch_up if self.catch_up is not None else not any(
            c.op == "cue" for c in do + after)
        return Entry(
            index=index, name=self.name or f"#{index + 1}", do=do, after=after,
            when=parse_rule(self.when, self.days) if self.when else None,
            start=parse_rule(self.start, self.days) if self.start else None,
            end=parse_rule(self.until) if self.until else None,
            skip=parse_except(self.skip, holidays), catch_up=catch_up)


def plan_of(location: Location, schedule: tuple[ScheduleEntry, ...]) -> Plan:
    """The schedule in time, at the installation's place."""
    holidays = location.holidays()
    return Plan([entry.entry(index, holidays) for index, entry in enumerate(schedule)],
                location.place())


def _pure(items: tuple[dict[str, Any], ...], rooms: str | None) -> tuple[Call, ...]:
    calls = []
    for item in items:
        args = {k: v for k, v in item.items() if k != "op"}
        if rooms is not None:
            args.setdefault("instance", rooms)
        calls.append(Call(str(item["op"]), args))
    return tuple(calls)


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return f"{value:g}"
    return value


CueNumber = Annotated[str, BeforeValidator(_number), Field(
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$", description="the cue's number: 1, 2.5, 3A")]


class CueConfig(StrictModel):
    """One ``[[cues]]`` table: a numbered cue of the cue list."""

    number: CueNumber
    name: Text = ""
    do: Calls = Field((), description="the calls it makes")
    pre_wait: float = Field(0.0, ge=0, le=3600, description="seconds from its GO to its calls")
    then: Literal["stop", "continue", "follow"] = Field(
        "stop", description="stop: the next cue waits for GO; continue: it gets its GO "
        "post_wait after this one fires; follow: once this one's fades end, and post_wait")
    post_wait: float = Field(0.0, ge=0, le=3600, description="seconds before the next cue's "
                             "GO (continue, follow)")

    def cue(self) -> Cue:
        """The pure form."""
        return Cue(self.number, self.name, _pure(self.do, None), self.pre_wait, self.then,
                   self.post_wait)


class Cueing(StrictModel):
    """The ``[cueing]`` table: how GO behaves."""

    lead: float = Field(0.1, ge=0, le=5, description="seconds from a GO to the moment every "
                        "room (on every host) fires it: the GO must reach each in time")
    double_go: float = Field(0.3, ge=0, le=10, description="a second GO within this many "
                             "seconds counts once")


def check_hours(location: Location, schedule: tuple[ScheduleEntry, ...],
                cues: tuple[CueConfig, ...], lines: Mapping[tuple[str, ...], int],
                path: Path) -> None:
    """What one table cannot see: sun rules need a place, holidays a country, cue numbers
    are each given once. ConfigError names the file, the line and the key."""
    problems = []

    def fail(loc: tuple[str, ...], why: str) -> None:
        problems.append(f"{located(path, dict(lines), loc)}: {'.'.join(loc)}: {why}")

    holidays = location.holidays()
    for index, entry in enumerate(schedule):
        for key, rule in (("when", entry.when), ("from", entry.start)):
            if rule is not None and parse_rule(rule, entry.days).sun and location.latitude is None:
                fail(("schedule", str(index), key), "the sun's times need [location] latitude "
                     "and longitude")
        try:
            parse_except(entry.skip, holidays)
        except ValueError as err:
            fail(("schedule", str(index), "except"), str(err))
    seen: set[str] = set()
    for index, cue in enumerate(cues):
        if cue.number in seen:
            fail(("cues", str(index), "number"), f"cue {cue.number!r} is numbered twice")
        seen.add(cue.number)
    if problems:
        raise ConfigError("\n".join(problems))


def call_lines(text: str) -> dict[tuple[str, ...], int]:
    """Where each key is (:func:`key_lines`), and each call of a ``do`` or ``after`` array:
    its inline table's line (TOML keeps an inline table on one line)."""
    lines = key_lines(text)
    rows = text.splitlines()
    found = dict(lines)
    for loc, number in lines.items():
        if len(loc) == 3 and loc[0] in ("schedule", "cues") and loc[2] in ("do", "after"):
            found.update(_items(rows, number - 1, loc))
    return found


def _items(rows: list[str], first: int, loc: tuple[str, ...]) -> dict[tuple[str, ...], int]:
    """The line of each top-level ``{`` of the array that starts after ``=`` on row ``first``."""
    out: dict[tuple[str, ...], int] = {}
    depth, quote = 0, ""
    for at in range(first, min(len(rows), first + 2000)):
        row = rows[at]
        column = row.find("=") + 1 if at == first else 0
        while column < len(row):
            char = row[column]
            if quote:
                if char == "\\" and quote == '"':
                    column += 1
                elif char == quote:
                    quote = ""
            elif char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{":
                if char == "{" and depth == 1:
                    out[(*loc, str(len(out)))] = at + 1
                depth += 1
            elif char in "]}":
                depth -= 1
                if depth == 0:
                    return out
            column += 1
    return out
