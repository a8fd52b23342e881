"""A phrase for ``midi send``: each message checked, with its time, before any is sent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.app.midi import phrase_step
from scorch.errors import InvalidRequest


def test_a_phrase_gives_each_message_its_delay_kind_and_fields() -> None:
    phrase = [{"type": "note_on", "note": 60, "velocity": 90, "channel": 2},
              {"type": "note_off", "note": 60, "channel": 2, "time": 0.5},
              {"kind": "cc", "control": 7, "value": 100, "time": 1}]
    assert [phrase_step(phrase, i) for i in range(3)] == [
        (0.0, "note_on", {"note": 60, "velocity": 90, "channel": 2}),
        (0.5, "note_off", {"note": 60, "channel": 2}),
        (1.0, "cc", {"control": 7, "value": 100})]


@pytest.mark.parametrize(("message", "says"), [
    ({"note": 60}, "needs a 'type'"),
    ({"type": "note_on", "note": 60, "time": -0.1}, "'time' is the seconds"),
    ({"type": "note_on", "note": 60, "time": True}, "'time' is the seconds"),
    ({"type": "note_on", "note": 60, "time": float("nan")}, "'time' is the seconds"),
    ({"type": "note_on", "note": 128}, "message 1 of the phrase"),
    ({"type": "note_on", "note": 60, "channel": 0}, "channel must be 1-16"),
    ({"type": "sysex_dump"}, "cannot send 'sysex_dump'"),
    ([60, 90], "not an object"),
])
def test_a_message_that_is_not_one_is_refused_naming_it(message: object, says: str) -> None:
    phrase = [{"type": "clock"}, message]
    with pytest.raises(InvalidRequest, match=says):
        phrase_step(phrase, 1)  # type: ignore[arg-type]


@given(st.dictionaries(st.sampled_from(["type", "kind", "note", "velocity", "channel",
                                        "time", "control", "value", "program", "x"]),
                       st.one_of(st.integers(-10**9, 10**9), st.floats(), st.text(max_size=9),
                                 st.none(), st.booleans())))
def test_any_message_is_a_step_or_a_clear_refusal(message: dict[str, object]) -> None:
    try:
        delay, kind, _ = phrase_step([message], 0)
    except InvalidRequest as err:
        assert str(err).startswith("MIDI message")
        return
    assert delay >= 0 and isinstance(kind, str)
