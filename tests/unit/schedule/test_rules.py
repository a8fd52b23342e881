"""Time rules on the wall clock: cron, times of day, the sun, days kept free; daylight saving."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from astral import Observer
from astral import sun as astral_sun

from scorch.schedule.plan import Except, parse_except
from scorch.schedule.rules import (
    Holidays,
    Place,
    last_at,
    next_after,
    parse_days,
    parse_rule,
    parse_span,
)

BERLIN = Place(ZoneInfo("Europe/Berlin"), 52.52, 13.405, 34.0)
NEW_YORK = Place(ZoneInfo("America/New_York"), 40.7128, -74.006)


def at(place: Place, *args: int, fold: int = 0) -> float:
    return datetime(*args, tzinfo=place.zone, fold=fold).timestamp()  # type: ignore[misc,arg-type]


def wall(place: Place, t: float | None) -> str:
    assert t is not None
    return datetime.fromtimestamp(t, place.zone).strftime("%Y-%m-%d %H:%M:%S %Z")


def times(rule: str, place: Place, start: float, end: float, days: str | None = None) -> list[str]:
    found, t, parsed = [], start, parse_rule(rule, days)
    while (t := next_after(parsed, t, place)) is not None and t <= end:  # type: ignore[assignment]
        found.append(wall(place, t))
    return found


# --- daylight saving: neither skipped nor doubled, on the days it changes ------------------

SPRING = [(BERLIN, (2026, 3, 29)), (NEW_YORK, (2026, 3, 8))]
AUTUMN = [(BERLIN, (2026, 10, 25)), (NEW_YORK, (2026, 11, 1))]


@pytest.mark.parametrize(("place", "day"), SPRING)
def test_a_daily_time_the_spring_change_skips_happens_once_when_the_clocks_jump(
        place: Place, day: tuple[int, int, int]) -> None:
    start = at(place, *day) - 86400
    found = times("02:30", place, start, start + 3 * 86400)
    assert found == [wall(place, at(place, *day) - 86400 + 2.5 * 3600),
                     f"{day[0]}-{day[1]:02d}-{day[2]:02d} 03:00:00 "
                     f"{'CEST' if place is BERLIN else 'EDT'}",
                     wall(place, at(place, *day) + 86400 + 2.5 * 3600 - 3600)]


@pytest.mark.parametrize(("place", "day"), AUTUMN)
def test_a_daily_time_the_autumn_change_repeats_happens_once_the_first_time(
        place: Place, day: tuple[int, int, int]) -> None:
    hour = 2 if place is BERLIN else 1  # the hour each zone repeats
    rule = f"{hour}:30"
    found = times(rule, place, at(place, *day) - 3600, at(place, *day) + 86400 - 3600)
    assert len(found) == 1
    assert found[0].endswith("CEST" if place is BERLIN else "EDT")  # its first time
    first = at(place, *day, hour, 30, fold=0)
    second = at(place, *day, hour, 30, fold=1)
    assert second - first == 3600
    # looked back from the second pass, the last time is the first pass, not yesterday's
    assert last_at(parse_rule(rule), second, place) == first


@pytest.mark.parametrize(("place", "day"), SPRING + AUTUMN)
def test_an_hourly_cron_across_each_change_keeps_one_action_per_wall_clock_hour(
        place: Place, day: tuple[int, int, int]) -> None:
    found = times("0 * * * *", place, at(place, *day), at(place, *day) + 6 * 3600)
    hours = [f[11:13] for f in found]
    assert len(hours) == len(set(hours))  # no wall-clock hour twice
    assert len(found) in (5, 6)  # the day's missing (or repeated) hour is one action, not two
    instants = [datetime.strptime(f[:19], "%Y-%m-%d %H:%M:%S") for f in found]
    assert instants == sorted(instants) or found == sorted(found)


@pytest.mark.parametrize(("place", "day"), SPRING + AUTUMN)
def test_next_and_last_agree_on_every_action_around_each_change(
        place: Place, day: tuple[int, int, int]) -> None:
    rule = parse_rule("*/20 * * * *")
    t = at(place, *day) - 3600
    end = t + 8 * 3600
    while (found := next_after(rule, t, place)) is not None and found < end:
        assert found > t
        assert last_at(rule, found, place) == found
        before = last_at(rule, found - 0.5, place)
        assert before is not None and before < found
        assert next_after(rule, before, place) == found  # nothing between: none skipped
        t = found


# --- the sun, against astral's own figures --------------------------------------------------


@pytest.mark.parametrize("day", [date(2026, 6, 21), date(2026, 12, 21), date(2026, 3, 29),
                                 date(2026, 10, 25)])
def test_a_sunset_rule_is_astrals_sunset_for_the_place_and_day(day: date) -> None:
    observer = Observer(BERLIN.latitude, BERLIN.longitude, BERLIN.elevation)  # type: ignore[arg-type]
    expected = astral_sun.sunset(observer, day, tzinfo=BERLIN.zone).timestamp()
    noon = at(BERLIN, day.year, day.month, day.day, 12)
    assert next_after(parse_rule("sunset"), noon, BERLIN) == pytest.approx(expected, abs=1e-3)
    assert next_after(parse_rule("sunset-30m"), noon, BERLIN) == pytest.approx(
        expected - 1800, abs=1e-3)
    assert last_at(parse_rule("sunset+1h"), noon + 86400 / 2, BERLIN) == pytest.approx(
        expected + 3600, abs=1e-3)


def test_sunrise_on_weekdays_only_and_none_in_the_polar_summer() -> None:
    saturday = at(BERLIN, 2026, 6, 20, 0)
    found = next_after(parse_rule("sunrise", "mon-fri"), saturday, BERLIN)
    assert wall(BERLIN, found).startswith("2026-06-22")  # Monday
    svalbard = Place(ZoneInfo("Arctic/Longyearbyen"), 78.22, 15.65)
    midsummer = datetime(2026, 6, 1, tzinfo=svalbard.zone).timestamp()
    following = next_after(parse_rule("sunset"), midsummer, svalbard)
    assert following is not None and wall(svalbard, following) > "2026-08"  # no June sunset


# --- cron, days, spans, days kept free -------------------------------------------------------


def test_six_fields_have_their_seconds_last_as_croniter_reads_them() -> None:
    start = at(BERLIN, 2026, 5, 4, 9, 59, 0)
    assert times("0 10 * * mon-fri 15", BERLIN, start, start + 3600) == [
        "2026-05-04 10:00:15 CEST"]
    assert times("* * * * * */20", BERLIN, start, start + 59) == [
        "2026-05-04 09:59:20 CEST", "2026-05-04 09:59:40 CEST"]


def test_a_time_exactly_now_is_the_last_not_the_next() -> None:
    ten = at(BERLIN, 2026, 5, 4, 10)
    rule = parse_rule("10:00")
    assert last_at(rule, ten, BERLIN) == ten
    assert next_after(rule, ten, BERLIN) == ten + 86400
    assert last_at(rule, ten - 0.001, BERLIN) == ten - 86400


@pytest.mark.parametrize(("text", "why"), [
    ("25:00", "not a time of day"), ("61 * * * *", "not a cron expression"),
    ("1 2 3", "5 fields"), ("sunset+13h", "at most 12 h"), ("sunset+soon", "length of time"),
    ("", "expected a time"), ("0 0 * * * * *", "5 fields")])
def test_a_bad_rule_says_what_was_expected(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_rule(text)


def test_days_go_with_times_of_day_and_the_sun_not_with_cron() -> None:
    assert parse_days("weekdays") == frozenset(range(5))
    assert parse_days("fri-mon") == frozenset({4, 5, 6, 0})
    assert parse_rule("10:00", "sat,sun").cron == "0 10 * * sat,sun"
    with pytest.raises(ValueError, match="own day-of-week"):
        parse_rule("0 10 * * *", "mon-fri")
    with pytest.raises(ValueError, match="mon-fri"):
        parse_days("someday")
    assert parse_span("1h30m") == 5400 and parse_span("00:45") == 2700
    with pytest.raises(ValueError):
        parse_span("1x")


def test_dates_kept_free_and_public_holidays_are_skipped() -> None:
    free = parse_except(["2026-12-24", "12-31", "2026-08-01..2026-08-03"], None)
    rule = parse_rule("10:00")
    start = at(BERLIN, 2026, 12, 23, 12)
    found = [wall(BERLIN, t)[:10] for t in _run(rule, start, 9, free)]
    assert "2026-12-24" not in found and "2026-12-31" not in found
    assert found[0] == "2026-12-25"
    summer = [wall(BERLIN, t)[:10] for t in _run(rule, at(BERLIN, 2026, 7, 31, 12), 3, free)]
    assert summer == ["2026-08-04", "2026-08-05", "2026-08-06"]
    bavaria = Except(holidays=Holidays("DE", "BY"))
    assert bavaria(date(2026, 1, 6))  # Epiphany, a holiday in Bavaria
    assert not Except(holidays=Holidays("DE", "BE"))(date(2026, 1, 6))  # not in Berlin
    back = last_at(rule, at(BERLIN, 2026, 1, 6, 11), BERLIN, bavaria)
    assert wall(BERLIN, back).startswith("2026-01-05")
    with pytest.raises(ValueError, match="country"):
        parse_except(["holidays"], None)
    with pytest.raises(ValueError, match="12-32"):
        parse_except(["12-32"], None)


def _run(rule: object, start: float, count: int, skip: Except) -> list[float]:
    found, t = [], start
    for _ in range(count):
        t = next_after(rule, t, BERLIN, skip)  # type: ignore[arg-type,assignment]
        found.append(t)
    return found


def test_a_rule_that_fits_no_day_left_gives_none() -> None:
    free = parse_except(["2026-01-01..2027-12-31"], None)
    assert wall(BERLIN, next_after(parse_rule("10:00"), at(BERLIN, 2026, 1, 1), BERLIN, free)
                ).startswith("2028-01-01")
    never = parse_except(["2026-01-01..2045-12-31"], None)  # beyond the steps a search takes
    assert next_after(parse_rule("10:00"), at(BERLIN, 2026, 1, 1), BERLIN, never) is None
    assert next_after(parse_rule("sunset"), at(BERLIN, 2026, 6, 1), BERLIN, never) is None
