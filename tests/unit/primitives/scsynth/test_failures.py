"""scsynth's failure lines are the request's only for the commands it sent."""

from __future__ import annotations

import pytest

from scorch.primitives.scsynth.failures import command_name, select

LINES = [
    "*** ERROR: SynthDef nosuchdef not found",
    "FAILURE IN SERVER /s_new SynthDef not found",
    "FAILURE IN SERVER /n_set Node 1018 not found",
    "a line about nothing",
    "*** ERROR: failed to open file 'x.wav'",
    "FAILURE IN SERVER /b_allocRead File 'x.wav' could not be opened",
]


@pytest.mark.parametrize(("sent", "name"), [
    ("9", "/s_new"), ("s_new", "/s_new"), ("/s_new", "/s_new"), ("15", "/n_set"),
    ("29", "/b_allocRead"), ("64", "/version"), ("65", "/65"), ("*", "*")])
def test_sclangs_names_and_numbers_are_scsynths_addresses(sent: str, name: str) -> None:
    assert command_name(sent) == name


def test_only_the_sent_commands_failures_are_kept_each_after_its_error_line() -> None:
    assert select(LINES, ["9"]) == tuple(LINES[:2])
    assert select(LINES, ["/n_set", "g_new"]) == (LINES[2],)  # not /s_new's ERROR line
    assert select(LINES, ["29"]) == tuple(LINES[4:])
    assert select(["*** ERROR: alone", "a line", "FAILURE IN SERVER /s_new x"], ["9"]) == (
        "FAILURE IN SERVER /s_new x",)
    assert select(LINES, ["/g_new"]) == ()


def test_a_raw_packet_may_have_caused_any_of_them() -> None:
    assert select(LINES, ["*"]) == (*LINES[:3], *LINES[4:])
