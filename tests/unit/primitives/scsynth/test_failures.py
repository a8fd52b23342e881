"""scsynth's failure lines are the request's only for the commands it sent."""

from __future__ import annotations

import time
from typing import cast

import pytest

from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.scsynth.failures import command_name, failures_since, select
from scorch.primitives.system.console import Console

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


def test_the_grace_ends_at_once_when_a_failure_of_a_sent_command_is_there() -> None:
    """And waits out its grace when only another command's failure is."""
    class Synced:
        def sync(self, timeout: float) -> None:
            pass

    osc = cast(OscClient, Synced())
    console = Console()
    console.append("scsynth", "FAILURE IN SERVER /n_set Node 5 not found")
    started = time.monotonic()
    assert failures_since(osc, console, 0, ["9"], grace=0.5) == ()
    assert time.monotonic() - started >= 0.5
    console.append("scsynth", "FAILURE IN SERVER /s_new SynthDef not found")
    started = time.monotonic()
    assert failures_since(osc, console, 0, ["9"], grace=5.0) == (
        "FAILURE IN SERVER /s_new SynthDef not found",)
    assert time.monotonic() - started < 1.0
