"""When a schedule's entries happen: cron expressions, times of day and the sun's, in one zone.

Pure: Unix times in and out. A rule is read on the installation's wall clock
(its time zone), so "10:00" is ten o'clock in summer and in winter. A wall-clock
time the clocks skip (the spring change) happens when they jump; one they
repeat (the autumn change) happens the first time only: daylight saving neither
skips nor doubles an action. croniter reads the cron expressions (5 fields, or
6 with seconds last), astral places the sun, holidays knows the public
holidays; each is imported where it is first used, so a config without a
schedule never pays for them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

#: The sun's events a rule may name (astral's functions of the same names).
SUN_EVENTS = ("dawn", "sunrise", "noon", "sunset", "dusk")
#: Occurrences looked at before a search gives up (a rule that fits no day left).
MAX_STEPS = 5000
#: Days a search of the sun's times looks ahead or back (beyond a year: none).
MAX_DAYS = 400
#: The farthest a sun rule's offset may move its time.
MAX_OFFSET = 12 * 3600.0

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_WORDS = {"weekdays": "mon-fri", "weekends": "sat-sun", "weekend": "sat-sun",
              "daily": "*", "every day": "*"}
_TIME_OF_DAY = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_SUN = re.compile(r"^(dawn|sunrise|noon|sunset|dusk)\s*(?:([+-])\s*(\S.*))?$")
_SPAN_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|m|s)")

Skip = Callable[[date], bool]
"""Whether a day is left out (an ``except`` date, a holiday)."""


def never(day: date) -> bool:
    """Leave no day out."""
    return False


def parse_span(text: str) -> float:
    """Seconds from ``1h30m``, ``90s``, ``2d``, ``45m`` or ``00:30`` (ValueError says why)."""
    spec = text.strip().lower().replace(" ", "")
    clock = re.fullmatch(r"(\d{1,3}):(\d{2})(?::(\d{2}))?", spec)
    if clock:
        return int(clock[1]) * 3600.0 + int(clock[2]) * 60.0 + int(clock[3] or 0)
    parts = _SPAN_PART.findall(spec)
    if not spec or not parts or "".join(n + u for n, u in parts) != spec:
        raise ValueError(f"expected a length of time such as 30m, 1h30m, 90s or 2d, "
                         f"found {text[:40]!r}")
    unit = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(number) * unit[letter] for number, letter in parts)


def parse_days(text: str) -> frozenset[int]:
    """Weekdays (0 is Monday) from ``mon-fri``, ``sat,sun``, ``weekdays`` or ``*``."""
    spec = _DAY_WORDS.get(text.strip().lower(), text.strip().lower())
    if spec == "*":
        return frozenset(range(7))
    days: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.strip().partition("-")
        start, end = _day(first, text), _day(last or first, text)
        span = range(start, end + 1) if start <= end else [*range(start, 7), *range(end + 1)]
        days.update(span)
    return frozenset(days)


def _day(word: str, text: str) -> int:
    word = word.strip()[:3]
    if word not in DAY_NAMES:
        raise ValueError(f"expected days such as mon-fri, sat,sun, weekdays or *, found "
                         f"{text[:40]!r}")
    return DAY_NAMES.index(word)


@dataclass(frozen=True)
class Rule:
    """When something happens: a cron expression or the sun's event, on the wall clock."""

    text: str
    """As written."""
    cron: str | None = None
    """5 fields, or 6 with seconds last (a time of day is written as one)."""
    sun: str | None = None
    """dawn, sunrise, noon, sunset or dusk."""
    offset: float = 0.0
    """Seconds after (or before, negative) the sun's event."""
    days: frozenset[int] = field(default_factory=lambda: frozenset(range(7)))
    """The weekdays a sun rule keeps (a cron expression has its own field)."""


def parse_rule(text: str, days: str | None = None) -> Rule:
    """A rule from ``when``, ``from`` or ``until``; ValueError says what was expected."""
    spec = " ".join(text.split())
    if not spec:
        raise ValueError("expected a time: a cron expression, HH:MM, or sunrise/sunset")
    weekdays = parse_days(days) if days is not None else frozenset(range(7))
    clock = _TIME_OF_DAY.fullmatch(spec)
    if clock:
        hour, minute, second = int(clock[1]), int(clock[2]), int(clock[3] or 0)
        if hour > 23 or minute > 59 or second > 59:
            raise ValueError(f"{spec!r} is not a time of day (00:00 to 23:59:59)")
        dow = ",".join(DAY_NAMES[d] for d in sorted(weekdays)) if len(weekdays) < 7 else "*"
        cron = f"{minute} {hour} * * {dow}" + (f" {second}" if second else "")
        return Rule(spec, cron=cron, days=weekdays)
    sun = _SUN.fullmatch(spec.lower())
    if sun:
        offset = parse_span(sun[3]) * (-1 if sun[2] == "-" else 1) if sun[2] else 0.0
        if abs(offset) > MAX_OFFSET:
            raise ValueError(f"{spec!r}: an offset from the sun is at most 12 h")
        return Rule(spec, sun=sun[1], offset=offset, days=weekdays)
    if days is not None:
        raise ValueError("`days` goes with a time of day or the sun; a cron expression has "
                         "its own day-of-week field")
    fields = spec.split(" ")
    if len(fields) not in (5, 6):
        raise ValueError(f"expected a cron expression of 5 fields (minute hour day month "
                         f"weekday) or 6 (seconds last), HH:MM, or sunrise/sunset with an "
                         f"offset (sunset-30m), found {spec[:80]!r}")
    from croniter import croniter

    try:
        croniter(spec, datetime(2000, 1, 1))
    except (ValueError, KeyError, TypeError) as err:  # croniter's errors are ValueErrors
        raise ValueError(f"{spec!r} is not a cron expression croniter reads: {err}") from None
    return Rule(spec, cron=spec)


@dataclass(frozen=True)
class Place:
    """Where and in which zone the installation keeps its hours."""

    zone: tzinfo
    latitude: float | None = None
    longitude: float | None = None
    elevation: float = 0.0


@dataclass(frozen=True)
class Holidays:
    """The public holidays of a country (and region), as the holidays package knows them."""

    country: str
    region: str | None = None

    def __contains__(self, day: object) -> bool:
        return isinstance(day, date) and day in _holidays(self.country, self.region)


@functools.lru_cache(maxsize=8)
def _holidays(country: str, region: str | None) -> Any:
    import holidays

    return holidays.country_holidays(country, subdiv=region)


def check_holidays(country: str, region: str | None) -> None:
    """ValueError when the holidays package knows no such country or region (from its list:
    a country's own calendar takes a third of a second to load, left for the first use)."""
    import holidays

    known: dict[str, list[str]] = holidays.list_supported_countries()
    if country not in known:
        raise ValueError(f"the holidays package knows no country {country!r} (ISO codes: "
                         f"DE, FR, US...)")
    if region is not None and region not in known[country]:
        raise ValueError(f"the holidays package knows no region {region!r} of {country}; "
                         f"its regions: {', '.join(known[country][:40]) or 'none'}")


# --- occurrences ----------------------------------------------------------------------


def instant(local: datetime, zone: tzinfo) -> float:
    """The Unix time of a wall-clock time: a time the clocks skip is the jump's moment, a
    repeated one its first time."""
    first = local.replace(tzinfo=zone, fold=0).timestamp()
    if _wall(first, zone) == local.replace(fold=0):
        return first
    # skipped: the jump lies between the two readings of the time (whole seconds apart)
    low, high = int(local.replace(tzinfo=zone, fold=1).timestamp()), int(first) + 1
    after = _offset(first, zone)
    while high - low > 1:
        middle = (low + high) // 2
        if _offset(middle, zone) == after:
            high = middle
        else:
            low = middle
    return float(high)


def _wall(t: float, zone: tzinfo) -> datetime:
    return datetime.fromtimestamp(t, zone).replace(tzinfo=None, fold=0)


def _offset(t: float, zone: tzinfo) -> timedelta | None:
    return datetime.fromtimestamp(t, zone).utcoffset()


def _second(t: float, zone: tzinfo) -> datetime:
    """The wall-clock second ``t`` falls in (its fractions dropped)."""
    return _wall(t, zone).replace(microsecond=0)


def next_after(rule: Rule, t: float, place: Place, skip: Skip = never) -> float | None:
    """The first time ``rule`` happens after ``t`` on a day not skipped (None: none found)."""
    if rule.sun is not None:
        day = _wall(t, place.zone).date()
        for step in range(-1, MAX_DAYS):
            found = _sun_on(rule, day + timedelta(days=step), place, skip)
            if found is not None and found > t:
                return found
        return None
    from croniter import croniter

    assert rule.cron is not None
    it = croniter(rule.cron, _second(t, place.zone))
    for _ in range(MAX_STEPS):
        local = it.get_next(datetime)
        if skip(local.date()):  # on to the next day
            it = croniter(rule.cron, datetime.combine(local.date(), datetime.max.time())
                          .replace(microsecond=0))
            continue
        found = instant(local, place.zone)
        if found > t:
            return found
    return None


def last_at(rule: Rule, t: float, place: Place, skip: Skip = never) -> float | None:
    """The last time ``rule`` happened at or before ``t`` on a day not skipped (None: none)."""
    if rule.sun is not None:
        day = _wall(t, place.zone).date()
        for step in range(1, -MAX_DAYS, -1):
            found = _sun_on(rule, day + timedelta(days=step), place, skip)
            if found is not None and found <= t:
                return found
        return None
    from croniter import croniter

    assert rule.cron is not None
    start = _second(t, place.zone) + timedelta(seconds=1)
    aware = datetime.fromtimestamp(t, place.zone)
    if aware.fold:  # the repeated hour's second pass: its first pass has happened whole
        first = aware.replace(fold=0).utcoffset()
        second = aware.utcoffset()
        if first is not None and second is not None:
            start += first - second
    it = croniter(rule.cron, start)
    for _ in range(MAX_STEPS):
        local = it.get_prev(datetime)
        if skip(local.date()):  # back to the day before
            it = croniter(rule.cron, datetime.combine(local.date(), datetime.min.time()))
            continue
        found = instant(local, place.zone)
        if found <= t:
            return found
    return None


def _sun_on(rule: Rule, day: date, place: Place, skip: Skip) -> float | None:
    """When the rule's sun event (with its offset) falls on ``day``, if that day is kept."""
    if day.weekday() not in rule.days or skip(day):
        return None
    found = _sun(rule.sun or "", day, place)
    return None if found is None else found + rule.offset


@functools.lru_cache(maxsize=4096)
def _sun(event: str, day: date, place: Place) -> float | None:
    if place.latitude is None or place.longitude is None:
        raise ValueError("sunrise and sunset need [location] latitude and longitude")
    from astral import Observer
    from astral import sun as astral_sun

    observer = Observer(place.latitude, place.longitude, place.elevation)
    try:
        found: datetime = getattr(astral_sun, event)(observer, day, tzinfo=place.zone)
    except ValueError:  # the sun never rises or sets that day there
        return None
    return found.timestamp()
