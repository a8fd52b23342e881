"""The live view's pure parts: a pattern's main params, the patterns shown, jackd's xruns
of the last minute, and a process's CPU between two looks."""

from __future__ import annotations

from types import SimpleNamespace

from scorch.api.live import (
    CPU_SPAN,
    PATTERNS_SHOWN,
    ProcessCpu,
    pattern_params,
    shown_patterns,
    xruns_since,
)
from scorch.primitives.sclang.patterns import PatternRecord


def test_a_patterns_main_params_are_its_keys_with_a_literal_value() -> None:
    source = (r"Pbind(\instrument, \sine, \degree, Pseq([\a, \b], inf), \dur, 0.25, "
              r"\amp, 0.1, \legato, -0.5)")
    assert pattern_params(source) == {"instrument": "sine", "dur": "0.25", "amp": "0.1",
                                      "legato": "-0.5"}


def test_a_pbindefs_name_is_no_param_and_computed_values_are_left_out() -> None:
    assert pattern_params(r"Pbindef(\acc, \freq, 440, \dur, 1/4)") == {"freq": "440"}
    assert pattern_params(r"Pdef(\acc, Pbind(\note, Pwhite(0, 7), \dur, 0.5))") == {
        "dur": "0.5"}
    assert pattern_params(r"Tdef(\t, { loop { 1.wait } })") == {}


def test_the_first_params_are_kept_up_to_the_limit() -> None:
    source = "Pbind(" + ", ".join(f"\\k{i}, {i}" for i in range(10)) + ")"
    assert list(pattern_params(source, limit=3)) == ["k0", "k1", "k2"]


def test_only_xruns_from_the_window_on_are_counted() -> None:
    lines = [(100.0, "JackEngine::XRun: client = scsynth"), (130.0, "some other line"),
             (150.0, "Jack: xrun detected"), (159.0, "JackAudioDriver::ProcessAsync: XRun")]
    assert xruns_since(lines, 120.0) == 2
    assert xruns_since(lines, 0.0) == 3
    assert xruns_since([], 0.0) == 0


def test_compile_strings_quote_their_symbols() -> None:
    source = "Pdef('acc', Pbind('instrument', 'sine', 'degree', Pseq([ 0, 2 ], inf), 'dur', 0.5))"
    assert pattern_params(source) == {"instrument": "sine", "dur": "0.5"}
    assert pattern_params("Pbindef('b', 'freq', 220)") == {"freq": "220"}


def test_a_processs_cpu_is_the_time_it_used_between_two_looks() -> None:
    used = {7: 10.0}
    cpu = ProcessCpu(read=lambda pid: used.get(pid or 0))
    assert cpu.percent(7, 100.0) is None  # a first look gives no rate
    used[7] = 10.5
    assert cpu.percent(7, 101.0) == 50.0
    used[7] = 10.6  # a look too soon after (the panel after the page) answers the last rate
    assert cpu.percent(7, 101.0 + CPU_SPAN / 2) == 50.0
    assert cpu.percent(7, 102.0) == 10.0
    assert cpu.percent(8, 102.0) is None and cpu.percent(None, 102.0) is None
    del used[7]  # the process ended
    assert cpu.percent(7, 103.0) is None


def test_a_room_shows_its_playing_patterns_first_and_counts_the_rest() -> None:
    records = [PatternRecord("Pdef", f"p{i}", i >= 20, "1.0", "source", r"Pbind(\dur, 1)")
               for i in range(24)]
    view = SimpleNamespace(patterns={r.key: r for r in records}, pattern_times={})
    shown, more = shown_patterns(view)
    assert len(shown) == PATTERNS_SHOWN and more == 24 - PATTERNS_SHOWN
    assert [p.name for p in shown[:4]] == ["p20", "p21", "p22", "p23"]
    assert not any(p.playing for p in shown[4:])
