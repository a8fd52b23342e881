"""A schedule in time: the state at a moment (the last of each kind), what comes, and its
clockwork, with time injected: a start, each action once, a clock jump, daylight saving."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from scorch.schedule.clockwork import JUMP, Keeper
from scorch.schedule.plan import Call, Due, Entry, Plan, kind_of
from scorch.schedule.rules import Place, parse_rule

BERLIN = Place(ZoneInfo("Europe/Berlin"), 52.52, 13.405)


def at(*args: int, fold: int = 0) -> float:
    return datetime(*args, tzinfo=BERLIN.zone, fold=fold).timestamp()  # type: ignore[misc,arg-type]


def scene(name: str, rooms: str = "*") -> Call:
    return Call("scene", {"action": "recall", "name": name, "instance": rooms})


def room(action: str, name: str = "lobby") -> Call:
    return Call("instance", {"action": action, "instance": name})


def museum() -> Plan:
    """Open 10:00-18:00 on weekdays, quieter at lunch, the evening scene at sunset."""
    return Plan([
        Entry(0, "open", (room("boot"), scene("day")), start=parse_rule("10:00", "mon-fri"),
              end=parse_rule("18:00"), after=(room("quit"),)),
        Entry(1, "lunch", (scene("quiet"),), when=parse_rule("0 12 * * *")),
        Entry(2, "afternoon", (scene("day"),), when=parse_rule("14:00")),
        Entry(3, "evening", (scene("evening"),), when=parse_rule("sunset")),
    ], BERLIN)


def texts(dues: list[Due]) -> list[str]:
    return [f"{d.entry.name}{'' if d.part == 'do' else '/' + d.part}: "
            f"{', '.join(c.text() for c in d.calls)}" for d in dues]


def test_the_state_mid_period_is_the_last_action_of_each_kind() -> None:
    plan = museum()
    tuesday_15h = at(2026, 5, 5, 15)  # after lunch, before sunset
    state = plan.state_at(tuesday_15h)
    # the room booted at 10:00 holds; of the scenes (one kind) only the 14:00 recall
    assert [(d.entry.name, [c.args.get("name") or c.args["action"] for c in d.calls])
            for d in state] == [("open", ["boot"]), ("afternoon", ["day"])]


def test_after_the_period_its_end_holds_and_the_evening_scene_after_sunset() -> None:
    state = museum().state_at(at(2026, 5, 5, 22))
    assert [(d.entry.name, d.part, [c.args.get("name") or c.args["action"] for c in d.calls])
            for d in state] == [("open", "after", ["quit"]), ("evening", "do", ["evening"])]


def test_a_weekend_holds_fridays_end_of_the_period() -> None:
    saturday = at(2026, 5, 9, 12, 30)
    state = museum().state_at(saturday)
    opened = [d for d in state if d.entry.name == "open"]
    assert opened[0].part == "after" and opened[0].time == at(2026, 5, 8, 18)
    assert [d.entry.name for d in state][-1] == "lunch"


def test_between_lists_each_action_once_in_order_and_agrees_with_the_state() -> None:
    plan = museum()
    start, end = at(2026, 5, 5, 9), at(2026, 5, 6, 9)
    dues = plan.between(start, end)
    assert [d.entry.name + ("/after" if d.part == "after" else "") for d in dues] == [
        "open", "lunch", "afternoon", "open/after", "evening"]
    assert [d.time for d in dues] == sorted(d.time for d in dues)
    # the dry run's answer at any moment is what firing its actions in order leaves
    for moment in (at(2026, 5, 5, 11), at(2026, 5, 5, 13), at(2026, 5, 5, 23)):
        fired = [d for d in dues if d.time <= moment]
        last = {}
        for due in fired:
            for call in due.calls:
                last[kind_of(call)] = call
        held = {kind_of(c): c for d in plan.state_at(moment) for c in d.calls}
        assert {k: last[k] for k in held} == held
    assert plan.next_time(start) == dues[0].time
    assert plan.next_time(dues[-1].time) == at(2026, 5, 6, 10)


def test_kinds_keep_values_apart_from_targets() -> None:
    a = Call("set", {"instance": "lobby", "node": "drone", "params": {"amp": 0.1}})
    b = Call("set", {"instance": "lobby", "node": "drone", "params": {"amp": 0.5}})
    c = Call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 220}})
    assert kind_of(a) == kind_of(b) != kind_of(c)
    assert kind_of(Call("play", {"instance": "x", "node": "n", "synthdef": "sine"})) == \
        kind_of(Call("release", {"instance": "x", "node": "n"}))
    assert kind_of(scene("a")) == kind_of(scene("b")) != kind_of(scene("a", "hall"))
    assert kind_of(Call("instance", {"action": "quit", "name": "lobby"})) == \
        kind_of(room("boot"))
    assert kind_of(Call("pattern", {"action": "play", "instance": "x", "name": "a"})) != \
        kind_of(Call("pattern", {"action": "stop", "instance": "x", "name": "b"}))


def test_an_entry_that_does_not_catch_up_is_left_out_of_a_start() -> None:
    plan = Plan([Entry(0, "go", (Call("cue", {"action": "go"}),), when=parse_rule("19:00"),
                       catch_up=False)], BERLIN)
    late = at(2026, 5, 5, 20)
    assert plan.state_at(late) and not plan.state_at(late, catching_up=True)


# --- the clockwork -------------------------------------------------------------------------


def every(seconds: int) -> Plan:
    return Plan([Entry(0, "tick", (scene("t"),), when=parse_rule(f"* * * * * */{seconds}"))],
                BERLIN)


def test_the_first_look_brings_the_state_then_each_action_once_at_its_time() -> None:
    keeper = Keeper(museum(), lead=0.2)
    t0 = at(2026, 5, 5, 11, 59, 50)
    first = keeper.tick(t0, 100.0)
    assert [d.entry.name for d in first.catch_up] == ["open"] and not first.due
    assert first.wake == pytest.approx(at(2026, 5, 5, 12) - 0.2)
    again = keeper.tick(t0 + 5, 105.0)
    assert not again.catch_up and not again.due  # nothing until lunch
    lunch = keeper.tick(first.wake, 100.0 + first.wake - t0)  # type: ignore[arg-type,operator]
    assert [d.entry.name for d in lunch.due] == ["lunch"] and not lunch.catch_up
    late = keeper.tick(at(2026, 5, 5, 12, 0, 1), 100.0 + 11)
    assert not late.due  # handed out once


def test_a_clock_jump_brings_the_state_for_now_not_every_missed_action() -> None:
    keeper = Keeper(every(10), lead=0.0)
    t0 = at(2026, 5, 5, 12)
    keeper.tick(t0, 0.0)
    jumped = keeper.tick(t0 + 3600, 1.0)  # an hour on the wall clock in one monotonic second
    assert jumped.jumped == pytest.approx(3599.0)
    assert len(jumped.catch_up) == 1 and not jumped.due  # not 360 scene recalls
    steady = keeper.tick(t0 + 3600 + 10, 11.0)
    assert steady.jumped == 0 and len(steady.due) == 1
    back = keeper.tick(t0 + 10, 12.0)  # set back an hour
    assert back.jumped < -JUMP and len(back.catch_up) == 1


def test_a_slow_drift_is_no_jump() -> None:
    keeper = Keeper(every(10), lead=0.0)
    t0 = at(2026, 5, 5, 12)
    keeper.tick(t0, 0.0)
    tick = keeper.tick(t0 + 20.5, 20.0)  # NTP slewing half a second
    assert tick.jumped == 0 and not tick.catch_up and len(tick.due) == 2


@pytest.mark.parametrize("day", [(2026, 3, 29), (2026, 10, 25)])
def test_the_keeper_fires_a_daily_230_once_on_each_change_day(day: tuple[int, int, int]) -> None:
    plan = Plan([Entry(0, "night", (scene("n"),), when=parse_rule("02:30"))], BERLIN)
    keeper = Keeper(plan, lead=0.0)
    t = at(*day) - 3600.0
    keeper.tick(t, 0.0)
    fired = []
    while t < at(*day) + 6 * 3600:
        t += 60.0
        fired += keeper.tick(t, t - at(*day) + 3600.0).due
    assert len(fired) == 1
