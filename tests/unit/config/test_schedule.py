"""[location], [[schedule]] and [[cues]] in config.toml: read, with located errors; each call
checked against its operation's own arguments."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scorch.api.firing import check_calls
from scorch.api.ops import load_all
from scorch.config.installation import Config, parse_config
from scorch.config.schedule import call_lines, plan_of
from scorch.errors import ConfigError

ROOMS = """
[instances.lobby]
group = "floor"
[instances.hall]
group = "floor"
"""


def config(tmp_path: Path, body: str) -> Config:
    text = textwrap.dedent(f'state_dir = "{tmp_path}"\n{ROOMS}') + textwrap.dedent(body)
    path = tmp_path / "config.toml"
    path.write_text(text)
    return parse_config(text, path)


def refused(tmp_path: Path, body: str, calls: bool = False) -> str:
    with pytest.raises(ConfigError) as err:
        made = config(tmp_path, body)
        if calls:
            check_calls(made, load_all)
    return str(err.value)


def test_a_museums_hours_read_into_a_plan(tmp_path: Path) -> None:
    made = config(tmp_path, """
        [location]
        timezone = "Europe/Berlin"
        latitude = 52.52
        longitude = 13.405
        country = "DE"
        region = "BE"
        [[schedule]]
        name = "open"
        from = "10:00"
        until = "18:00"
        days = "weekdays"
        except = ["holidays", "12-24"]
        rooms = "floor"
        do = [{ op = "instance", action = "boot" },
              { op = "scene", action = "recall", name = "day" }]
        after = [{ op = "instance", action = "quit", instance = "lobby" }]
        [[schedule]]
        when = "sunset-30m"
        do = [{ op = "scene", action = "morph", name = "evening", seconds = 600 }]
        [[schedule]]
        when = "0 19 * * fri 30"
        do = [{ op = "cue", action = "go" }]
        [[cues]]
        number = 1
        name = "house to half"
        do = [{ op = "set", instance = "*", node = "drone", params = { amp = 0.1 } }]
        then = "follow"
        post_wait = 2
        [[cues]]
        number = "1.5"
        [cueing]
        double_go = 0.5
        """)
    check_calls(made, load_all)
    plan = plan_of(made.location, made.schedule)
    opened, evening, friday = plan.entries
    assert opened.do[0].args == {"action": "boot", "instance": "floor"}  # the entry's rooms
    assert opened.end is not None and opened.start is not None
    assert opened.start.cron == "0 10 * * mon,tue,wed,thu,fri"
    assert evening.name == "#2" and evening.when.sun == "sunset"  # type: ignore[union-attr]
    assert evening.when.offset == -1800  # type: ignore[union-attr]
    assert not friday.catch_up and opened.catch_up  # a GO is an event, not a state
    assert [c.cue().number for c in made.cues] == ["1", "1.5"]
    assert made.cues[0].cue().then == "follow" and made.cueing.double_go == 0.5


@pytest.mark.parametrize(("body", "said"), [
    ('[[schedule]]\nwhen = "25:00"\ndo = [{ op = "stop" }]', "schedule.0.when"),
    ('[[schedule]]\nwhen = "10:00"\nuntil = "11:00"\ndo = [{ op = "stop" }]', "not both"),
    ('[[schedule]]\nfrom = "10:00"\ndo = [{ op = "stop" }]', "`from` and `until`"),
    ('[[schedule]]\nwhen = "10:00"\nafter = [{ op = "stop" }]\ndo = [{ op = "stop" }]',
     "a period's"),
    ('[[schedule]]\nwhen = "0 10 * * *"\ndays = "mon"\ndo = [{ op = "stop" }]',
     "own day-of-week"),
    ('[[schedule]]\nwhen = "10:00"\ndo = []', "schedule.0.do"),
    ('[[schedule]]\nwhen = "10:00"\ndo = [{ action = "recall" }]', "table with `op`"),
    ('[[schedule]]\nwhen = "10:00"\nwhne = 1\ndo = [{ op = "stop" }]', "did you mean"),
    ('[[schedule]]\nwhen = "sunset"\ndo = [{ op = "stop" }]', "latitude"),
    ('[[schedule]]\nwhen = "10:00"\nexcept = ["holidays"]\ndo = [{ op = "stop" }]',
     "country"),
    ('[[schedule]]\nwhen = "10:00"\nexcept = ["2026-02-30"]\ndo = [{ op = "stop" }]',
     "2026-02-30"),
    ('[location]\ntimezone = "Europe/Berln"', "did you mean Europe/Berlin"),
    ('[location]\ncountry = "XX"', "XX"),
    ('[location]\nlatitude = 10', "both"),
    ('[[cues]]\nnumber = 1\n[[cues]]\nnumber = 1', "numbered twice"),
    ('[[cues]]\nnumber = "a b"', "cues.0.number"),
    ('[cueing]\nlead = 9', "cueing.lead"),
])
def test_mistakes_are_refused_with_file_line_and_key(tmp_path: Path, body: str,
                                                     said: str) -> None:
    message = refused(tmp_path, body)
    assert said in message, message
    assert f"{tmp_path / 'config.toml'}:" in message


@pytest.mark.parametrize(("call", "said"), [
    ('{ op = "scen", action = "recall", name = "x" }', "schedule.0.do.1.op: no tool 'scen'; "
                                                        "did you mean 'scene'"),
    ('{ op = "status" }', "schedule.0.do.1.op: 'status' cannot be called from [[schedule]]: "
                          "it only reads"),
    ('{ op = "set", instance = "lobby", node = "d", params = { amp = "x" } }',
     "schedule.0.do.1.params: set: invalid arguments: params.amp"),
    ('{ op = "scene", action = "recal", name = "x" }', "schedule.0.do.1.action"),
    ('{ op = "scene", action = "recall", name = "x", instance = "nowhere" }',
     "schedule.0.do.1.instance: scene"),
    ('{ op = "set", instance = "*", node = "d", params = { amp = 1 }, colour = 2 }',
     "schedule.0.do.1.colour"),
])
def test_each_call_is_checked_against_its_operation_on_its_own_line(
        tmp_path: Path, call: str, said: str) -> None:
    body = f"""
        [[schedule]]
        when = "10:00"
        do = [
          {{ op = "stop", instance = "*" }},
          {call},
        ]
        """
    message = refused(tmp_path, body, calls=True)
    assert f"config.toml:{ROOMS.count(chr(10)) + 7}: {said}" in message, message


def test_a_group_given_to_a_tool_of_one_room_makes_one_call_per_room(tmp_path: Path) -> None:
    from scorch.api.firing import expand
    from scorch.schedule.plan import Call

    made = config(tmp_path, "")
    calls = expand(Call("set", {"instance": "floor", "node": "d", "params": {"amp": 1}}), made,
                   load_all)
    assert [args.instance for _, args in calls] == ["lobby", "hall"]  # type: ignore[attr-defined]
    quit_ = expand(Call("instance", {"action": "quit", "instance": "floor"}), made, load_all)
    assert [args.name for _, args in quit_] == ["floor"]  # type: ignore[attr-defined]


def test_calls_in_cues_may_not_go_a_cue(tmp_path: Path) -> None:
    message = refused(tmp_path, '[[cues]]\nnumber = 1\ndo = [{ op = "cue", action = "go" }]',
                      calls=True)
    assert "cues.0.do.0.op: 'cue' cannot be called from [[cues]]" in message


def test_call_lines_find_each_inline_table() -> None:
    text = 'x = 1\n[[schedule]]\ndo = [\n  { op = "a", s = "}{" },  # {\n  { op = "b" }]\n'
    lines = call_lines(text)
    assert lines[("schedule", "0", "do", "0")] == 4
    assert lines[("schedule", "0", "do", "1")] == 5
