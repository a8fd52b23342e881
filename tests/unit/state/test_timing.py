"""Timed requests: ``at`` and ``delay`` to a time, the bundle scsynth gets, sclang's schedule."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.api.ops import lookup
from scorch.errors import InvalidRequest
from scorch.machine.doctor import clock_check, parse_tracking
from scorch.primitives.osc import decode_packet, timetag
from scorch.primitives.sclang import protocol
from scorch.primitives.scsynth import commands
from scorch.state.tempo import MAX_AHEAD, MAX_LATE, TempoGrid, resolve

NOW = 1_800_000_000.0


@pytest.mark.parametrize(("at", "delay", "expected"), [
    (None, None, None),
    (None, 0.0, NOW),
    (None, 2.5, NOW + 2.5),
    (NOW + 1, None, NOW + 1),
    (NOW - 1, None, NOW - 1),  # a moment late: scsynth plays it at once
])
def test_at_or_delay_is_one_time(at: float | None, delay: float | None,
                                 expected: float | None) -> None:
    assert resolve(at, delay, NOW) == expected


@pytest.mark.parametrize(("at", "delay", "words"), [
    (NOW + 1, 1.0, "not both"),
    (None, -1.0, "delay must be 0 to"),
    (None, MAX_AHEAD + 1, "delay must be 0 to"),
    (NOW + MAX_AHEAD + 1, None, "s ahead"),
    (NOW - MAX_LATE - 1, None, "in the past"),
    (math.nan, None, "finite"),
    ("next_beat", None, "needs the shared tempo"),
    ("next_bar", None, "needs the shared tempo"),
])
def test_times_that_cannot_be_meant_are_refused_saying_why(
        at: float | str | None, delay: float | None, words: str) -> None:
    with pytest.raises(InvalidRequest, match=words):
        resolve(at, delay, NOW)  # type: ignore[arg-type]


def test_the_next_beat_and_bar_of_a_grid() -> None:
    grid = TempoGrid(bpm=120.0, beats_per_bar=4, beat_zero=NOW)
    assert resolve("next_beat", None, NOW + 0.1, grid) == pytest.approx(NOW + 0.5)
    assert resolve("next_beat", None, NOW + 0.5, grid) == pytest.approx(NOW + 1.0)
    assert resolve("next_bar", None, NOW + 0.1, grid) == pytest.approx(NOW + 2.0)
    assert resolve("next_bar", None, NOW + 2.0, grid) == pytest.approx(NOW + 4.0)


@given(bpm=st.floats(20, 300), bar=st.integers(1, 16), offset=st.floats(-1e4, 1e4),
       quantum=st.sampled_from(["next_beat", "next_bar"]))
def test_the_next_beat_is_after_now_on_the_grid_within_one_step(
        bpm: float, bar: int, offset: float, quantum: str) -> None:
    grid = TempoGrid(bpm, bar, NOW)
    now = NOW + offset
    when = grid.next(quantum, now)  # type: ignore[arg-type]
    step = (60.0 / bpm) * (1 if quantum == "next_beat" else bar)
    assert now < when <= now + step + 1e-6
    beats = grid.beat_at(when) / (1 if quantum == "next_beat" else bar)
    assert beats == pytest.approx(round(beats), abs=1e-5)


def test_a_timed_command_is_a_bundle_at_that_time_of_the_same_messages() -> None:
    packet = commands.n_set(1000, {"freq": 440.0})
    bundle = commands.at(NOW + 0.25, packet, commands.n_free(1001))
    assert bundle.startswith(b"#bundle\x00")
    assert int.from_bytes(bundle[8:16], "big") == timetag(NOW + 0.25)
    assert decode_packet(bundle) == decode_packet(packet) + decode_packet(commands.n_free(1001))
    seconds = (timetag(NOW + 0.25) >> 32) - 2208988800
    fraction = (timetag(NOW + 0.25) & 0xFFFFFFFF) / 2**32
    assert seconds + fraction == pytest.approx(NOW + 0.25, abs=1e-9)


def test_sclang_gets_the_time_only_when_there_is_one() -> None:
    assert protocol.evaluate("a1", "1").startswith(b'Scorch.eval("a1", "1", false)\x1b')
    timed = protocol.evaluate("a1", "1", at=NOW + 0.5)
    assert timed.startswith(f'Scorch.eval("a1", "1", false, {NOW + 0.5!r})'.encode())
    with pytest.raises(ValueError, match="finite"):
        protocol.evaluate("a1", "1", at=math.inf)


@pytest.mark.parametrize("name", ["play", "set", "release", "execute"])
def test_timed_operations_take_at_or_delay_but_not_both(name: str) -> None:
    op = lookup(name)
    base = {"play": {"instance": "a", "synthdef": "sine"},
            "set": {"instance": "a", "node": "n", "params": {"amp": 0.1}},
            "release": {"instance": "a", "node": "n"},
            "execute": {"instance": "a", "code": "1"}}[name]
    assert op.parse({**base, "at": time.time() + 1}).at is not None
    assert op.parse({**base, "at": "next_bar"}).at == "next_bar"
    assert op.parse({**base, "delay": 0.5}).delay == 0.5
    for bad in ({"at": 1.0, "delay": 1.0}, {"at": "soon"}, {"at": math.inf},
                {"delay": -1}, {"delay": 4000}, {"at": "1795441215"}):
        with pytest.raises(InvalidRequest, match=r"at|delay"):
            op.parse({**base, **bad})


CHRONYC_TRACKING = """\
Reference ID    : CB00710F (foo.example.net)
Stratum         : 3
Ref time (UTC)  : Fri Jan 27 09:49:17 2017
System time     : 0.000006523 seconds slow of NTP time
Last offset     : -0.000006747 seconds
RMS offset      : 0.000035822 seconds
Frequency       : 3.225 ppm slow
Residual freq   : -0.000 ppm
Skew            : 0.129 ppm
Root delay      : 0.013639022 seconds
Root dispersion : 0.001100737 seconds
Update interval : 64.2 seconds
Leap status     : Normal
"""


def test_chronyc_tracking_gives_the_offset_and_its_sign() -> None:
    tracking = parse_tracking(CHRONYC_TRACKING)  # chronyc's manual's own example
    assert tracking is not None
    assert tracking.offset == pytest.approx(-0.000006523)
    assert (tracking.leap, tracking.reference) == ("Normal", "CB00710F (foo.example.net)")
    fast = parse_tracking(CHRONYC_TRACKING.replace("slow of NTP", "fast of NTP"))
    assert fast is not None and fast.offset == pytest.approx(0.000006523)
    assert parse_tracking("506 Cannot talk to daemon") is None


def test_without_chronyc_the_doctor_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    alone, several = clock_check(False), clock_check(True)
    assert alone.ok and "chronyc not found" in alone.detail and not alone.fix
    assert not several.ok and "apt-get install -y chrony" in several.fix
