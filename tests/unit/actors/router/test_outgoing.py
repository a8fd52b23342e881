"""Messages the router sends to MIDI outputs on request, by name."""

from __future__ import annotations

import pytest

from actors.router.outgoing import PANIC, encode


def test_messages_by_name_on_channels_one_to_sixteen() -> None:
    assert encode("note_on", 3, {"note": 60, "velocity": 90}) == [0x92, 60, 90]
    assert encode("note_off", 3, {"note": 60}) == [0x82, 60, 64]
    assert encode("cc", 1, {"control": 7, "value": 100}) == [0xB0, 7, 100]
    assert encode("program", 16, {"program": 5}) == [0xCF, 5]
    assert encode("clock", 99, {}) == [0xF8]  # no channel: none checked
    assert len(PANIC) == 32 and PANIC[0] == [0xB0, 64, 0]


@pytest.mark.parametrize(("kind", "channel", "words"), [
    ("sysex", 1, "cannot send 'sysex'"), ("note_on", 0, "channel must be 1-16"),
    ("cc", 17, "channel must be 1-16")])
def test_what_cannot_be_sent_is_refused_in_words(kind: str, channel: int, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        encode(kind, channel, {"note": 1, "control": 1})
