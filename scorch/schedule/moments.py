"""A moment a person names ("18:00 tomorrow", "2026-12-24 18:00", "+2h"), as a Unix time. Pure."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, tzinfo

from scorch.schedule.rules import instant, parse_span

_CLOCK = r"(\d{1,2}):(\d{2})(?::(\d{2}))?"
_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}


def parse_moment(text: str, now: float, zone: tzinfo) -> float:
    """``now``, ``+2h`` (or ``in 2h``), ``18:00``, ``18:00 tomorrow``, ``tomorrow 18:00``,
    ``2026-12-24 18:00``, ``2026-12-24`` (its midnight) or Unix seconds; on the wall clock
    of ``zone``. ValueError says what was expected."""
    spec = " ".join(re.sub(r"^(\d{4}-\d{2}-\d{2})t", r"\1 ", text.strip().lower()).split())
    if spec == "now":
        return now
    ahead = re.fullmatch(r"(?:\+|in )\s*(.+)", spec)
    if ahead:
        return now + parse_span(ahead[1])
    if re.fullmatch(r"\d{9,11}(?:\.\d+)?", spec):
        return float(spec)
    today = datetime.fromtimestamp(now, zone).date()
    words = spec.split(" ")
    day: date | None = None
    clock: re.Match[str] | None = None
    for word in words:
        if word in _DAYS and day is None:
            day = today + timedelta(days=_DAYS[word])
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", word) and day is None:
            try:
                day = date.fromisoformat(word)
            except ValueError:
                raise ValueError(f"{word!r} is not a date") from None
        elif re.fullmatch(_CLOCK, word) and clock is None:
            clock = re.fullmatch(_CLOCK, word)
        else:
            raise ValueError(f"expected a moment such as 18:00, 18:00 tomorrow, 2026-12-24 "
                             f"18:00, +2h or now, found {text[:60]!r}")
    hour, minute, second = (int(clock[1]), int(clock[2]), int(clock[3] or 0)) if clock else (
        0, 0, 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{text[:60]!r}: not a time of day (00:00 to 23:59:59)")
    local = datetime.combine(day or today, datetime.min.time()).replace(
        hour=hour, minute=minute, second=second)
    return instant(local, zone)
