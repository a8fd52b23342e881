"""The partner operation's arguments: hostile values are refused by name, never crash."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from scorch.api.ops.music.partner import PartnerArgs, PartnerContinue

ARGS: TypeAdapter[Any] = TypeAdapter(PartnerArgs)

VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                   st.lists(st.integers(), max_size=3))
FIELDS = st.sampled_from(["action", "input", "notes", "bars", "order", "temperature", "key",
                          "density", "seed", "instance", "synthdef", "pause_beats", "split",
                          "last_bars", "since", "channel", "path", "bogus"])


@given(st.dictionaries(FIELDS, VALUES, max_size=6),
       st.sampled_from(["continue", "infill", "answer_on", "answer_off", "answering"]))
def test_any_arguments_validate_or_are_refused_naming_the_field(
        fields: dict[str, Any], action: str) -> None:
    fields.setdefault("action", action)
    try:
        ARGS.validate_python(fields)
    except ValidationError as err:
        assert err.errors()[0]["loc"] or "action" in str(err), err


@pytest.mark.parametrize("bad", [{"temperature": float("nan")}, {"order": 7}, {"density": 0.0},
                                 {"notes": 0}, {"bars": 65.0}, {"key": "x" * 30},
                                 {"temperature": "1"}])
def test_out_of_range_controls_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as err:
        ARGS.validate_python({"action": "continue", **bad})
    assert next(iter(bad)) in str(err.value)


def test_continue_is_the_default_action() -> None:
    assert isinstance(ARGS.validate_python({"action": "continue"}), PartnerContinue)
