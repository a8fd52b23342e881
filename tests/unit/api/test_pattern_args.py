"""The pattern and undo operations' arguments: every hostile value is refused by its name."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.api.ops import lookup
from scorch.api.ops.music.patterns import PatternDefine
from scorch.errors import InvalidRequest

PATTERN = lookup("pattern")
UNDO = lookup("undo")
ROOM = {"instance": "lobby"}
DEFINE = {"action": "define", **ROOM, "kind": "Pdef", "name": "acc", "source": "Pbind()"}
FADE = {"action": "fade", **ROOM, "name": "acc"}
SET = {"action": "set", **ROOM, "name": "acc", "key": "dur", "value": "1"}


@pytest.mark.parametrize(("args", "argument"), [
    ({**DEFINE, "kind": "Xdef"}, "kind"),
    ({k: v for k, v in DEFINE.items() if k != "kind"}, "kind"),
    ({k: v for k, v in DEFINE.items() if k != "source"}, "source"),
    ({**DEFINE, "name": "a b"}, "name"),
    ({**DEFINE, "name": "../x"}, "name"),
    ({**DEFINE, "name": "a\tb"}, "name"),
    ({**DEFINE, "name": "x" * 65}, "name"),
    ({**DEFINE, "source": "1\x002"}, "source"),
    ({**DEFINE, "source": "x" * (257 * 1024)}, "source"),
    ({**DEFINE, "play": "yes"}, "play"),
    ({**DEFINE, "play": 1}, "play"),
    ({**DEFINE, "at": "later"}, "at"),
    ({**DEFINE, "at": None}, "at"),
    ({**FADE, "seconds": 1e39}, "seconds"),
    ({**FADE, "seconds": -1e39}, "seconds"),
    ({**FADE, "seconds": float("nan")}, "seconds"),
    ({**FADE, "seconds": float("inf")}, "seconds"),
    ({**FADE, "seconds": "2"}, "seconds"),
    ({**FADE, "seconds": 0}, "seconds"),
    ({**SET, "key": "a b"}, "key"),
    ({**SET, "key": "dur', 0.exit, '"}, "key"),
    ({**SET, "value": "1\x00"}, "value"),
    ({**SET, "seconds": 1.0}, "seconds"),
    ({"action": "stop", **ROOM, "name": ""}, "name"),
    ({"action": "mute", **ROOM, "name": "acc", "kind": "pdef"}, "kind"),
    ({"action": "solo", **ROOM, "name": "acc", "source": "1"}, "source"),
    ({"action": "play", **ROOM}, "name"),
    ({"action": "unmute", **ROOM, "name": 5}, "name"),
    ({"action": "explode", **ROOM, "name": "acc"}, "action"),
])
def test_bad_pattern_arguments_are_refused_naming_the_argument(
        args: dict[str, Any], argument: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        PATTERN.parse(args)
    assert refused.value.argument == argument, refused.value


@pytest.mark.parametrize(("args", "argument"), [
    ({"steps": 0}, "steps"),
    ({"steps": 51}, "steps"),
    ({"steps": 10**18}, "steps"),
    ({"steps": "1"}, "steps"),
    ({"steps": True}, "steps"),
    ({"steps": 1.5}, "steps"),
    ({"action": "redo", "steps": -1}, "steps"),
    ({"dry_run": "yes"}, "dry_run"),
    ({"dry_run": 1}, "dry_run"),
    ({"instance": "\x00"}, "instance"),
    ({"action": "checkpoint", "name": "../x"}, "name"),
    ({"action": "checkpoint", "name": "a\x00b"}, "name"),
    ({"action": "checkpoint", "name": ""}, "name"),
    ({"action": "checkpoint"}, "name"),
    ({"action": "back", "name": "/etc/passwd"}, "name"),
    ({"action": "back", "name": "x", "dry_run": "no"}, "dry_run"),
    ({"action": "list", "steps": 2}, "steps"),
])
def test_bad_undo_arguments_are_refused_naming_the_argument(
        args: dict[str, Any], argument: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        UNDO.parse(args)
    assert refused.value.argument == argument, refused.value


VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                   st.lists(st.integers(), max_size=3))
FIELDS = st.sampled_from(["instance", "name", "kind", "source", "play", "at", "key", "value",
                          "seconds", "steps", "dry_run", "bogus"])
ACTIONS = ["define", "source", "set", "play", "stop", "mute", "unmute", "solo", "fade"]


@given(st.sampled_from(ACTIONS), st.dictionaries(FIELDS, VALUES, max_size=5))
def test_any_pattern_arguments_parse_or_are_refused_naming_one_of_them(
        action: str, spoiled: dict[str, Any]) -> None:
    bases: dict[str, dict[str, Any]] = {
        "define": DEFINE, "set": SET, "fade": {**FADE, "seconds": 1.0},
        "source": {**FADE, "action": "source", "source": "Pbind()"}}
    base = bases.get(action, {**ROOM, "name": "acc"})
    args = {**base, "action": action, **spoiled}
    try:
        PATTERN.parse(args)
    except InvalidRequest as refused:
        assert refused.argument in args, refused


def test_define_plays_on_the_next_bar_by_default() -> None:
    parsed = PATTERN.parse(DEFINE)
    assert isinstance(parsed, PatternDefine)
    assert (parsed.play, parsed.at, parsed.kind) == (True, "next_bar", "Pdef")
