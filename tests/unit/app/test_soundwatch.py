"""The sound watch's detector against generated readings, and a plain oracle of silence."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.app.soundwatch.detector import (
    CLEAR_S,
    DC,
    DC_LEVEL,
    DC_S,
    GAP_S,
    HOWL_CREST_DB,
    HOWL_FLOOR_DB,
    HOWL_LOOKBACK_S,
    HOWL_RISE_DB,
    HOWL_S,
    LIMIT_DB,
    Detector,
    Finding,
    Measured,
    Thresholds,
    dbfs,
)
from scorch.app.soundwatch.watch import SoundWatch
from scorch.state.events import Kind

LOUD, QUIET = 0.5, 1e-4  # -6 dBFS and -80 dBFS
anything = st.floats(allow_nan=True, allow_infinity=True)
steps = st.floats(0.05, 0.6)


def run(detector: Detector, readings: list[Measured]) -> list[tuple[float, Finding]]:
    return [(m.time, f) for m in readings for f in detector.feed(m)]


def oracle(readings: list[Measured], holds: Callable[[Measured], bool], after: float,
           kind: Kind) -> list[tuple[float, Kind]]:
    """A plain walk of the readings: each run of ``holds`` that lasts ``after`` is ``kind``
    once, and SOUND_OK once the condition has been gone for CLEAR_S."""
    expected, start, raised, clear = [], None, False, None
    for m in readings:
        if holds(m):
            clear, start = None, m.time if start is None else start
            if not raised and m.time - start >= after:
                expected.append((m.time, kind))
                raised = True
        elif raised:
            clear = m.time if clear is None else clear
            if m.time - clear >= CLEAR_S:
                expected.append((m.time, Kind.SOUND_OK))
                raised, start, clear = False, None, None
        else:
            start = None
    return expected


def timeline(gaps: list[float], levels: list[float]) -> list[Measured]:
    t, out = 100.0, []
    for gap, level in zip(gaps, levels, strict=False):
        t += gap
        out.append(Measured(t, level, level, 0.0))
    return out


@settings(max_examples=300)
@given(st.lists(st.tuples(steps, st.booleans()), min_size=1, max_size=200),
       st.floats(0.5, 5.0))
def test_silence_is_said_once_a_run_of_silent_readings_lasts_silence_s(
        seq: list[tuple[float, bool]], silence_s: float) -> None:
    readings = timeline([g for g, _ in seq], [QUIET if quiet else LOUD for _, quiet in seq])
    found = run(Detector(Thresholds(True, silence_s, -60.0, 5.0)), readings)
    expected = oracle(readings, lambda m: m.peak_out == QUIET, silence_s, Kind.SOUND_SILENT)
    assert [(t, f.kind) for t, f in found] == expected
    for _, finding in found:
        if finding.kind == Kind.SOUND_SILENT:
            assert finding.details["for_s"] >= silence_s - 0.005  # rounded to 0.01 s
            assert finding.details["peak_out_dbfs"] < -60.0


def tone(t: float, peak_db: float, crest_db: float) -> Measured:
    """A reading of a signal ``peak_db`` loud whose peak stands ``crest_db`` over its RMS."""
    peak = 10 ** (peak_db / 20)
    return Measured(t, peak, min(peak, 0.89), 0.0, False, peak / 10 ** (crest_db / 20))


@settings(max_examples=300)
@given(st.lists(st.tuples(steps, st.integers(-140, 40), st.sampled_from([3.0, 4.0, 6.0, 12.0])),
                min_size=1, max_size=200))
def test_a_howl_is_a_tone_for_howl_s_whose_peak_rose_over_the_lookback(
        seq: list[tuple[float, int, float]]) -> None:
    t, readings = 100.0, []
    for gap, half_db, crest in seq:
        t += gap
        readings.append(tone(t, half_db / 2, crest))
    found = [(t, f.kind) for t, f in run(Detector(Thresholds()), readings)
             if f.fault == "howl"]
    # the oracle: each run of tone-like readings, its loudest peak, the audible ones before
    expected, start, top, raised, clear = [], None, 0.0, False, None
    for i, m in enumerate(readings):
        peak_db = 20 * math.log10(m.peak_in)
        heard = [20 * math.log10(r.peak_in) for r in readings[:i + 1]
                 if m.time - r.time <= HOWL_LOOKBACK_S and r.peak_in >= 10 ** (HOWL_FLOOR_DB / 20)]
        if peak_db >= HOWL_FLOOR_DB and peak_db - 20 * math.log10(m.rms_in) <= HOWL_CREST_DB:
            clear = None
            if start is None:
                start, top = m.time, peak_db
            top = max(top, peak_db)
            if (not raised and m.time - start >= HOWL_S
                    and top - min(heard) >= HOWL_RISE_DB - 0.05):
                expected.append((m.time, Kind.SOUND_HOWL))
                raised = True
        elif raised:
            clear = m.time if clear is None else clear
            if m.time - clear >= CLEAR_S:
                expected.append((m.time, Kind.SOUND_OK))
                raised, start, clear = False, None, None
        else:
            start = None
    assert found == expected


def test_feedback_growing_is_a_howl_a_steady_tone_or_rising_noise_is_not() -> None:
    growing = [tone(0.25 * i, -40.0 + 1.5 * i, 3.0) for i in range(12)]  # 6 dB/s, a sine
    detector = Detector(Thresholds())
    found = run(detector, growing)
    assert [(t, f.kind) for t, f in found] == [(2.0, Kind.SOUND_HOWL)]
    assert found[0][1].details["risen_db"] == 12.0 and detector.sound == "howl"
    gone = [Measured(3.0 + 0.25 * i, 0.0, 0.0, 0.0) for i in range(6)]
    assert [(t, f.kind) for t, f in run(detector, gone)] == [(4.0, Kind.SOUND_OK)]
    quick = [tone(0.0, -30.0, 6.0), *(tone(0.25 * i, 0.8, 3.0) for i in range(1, 12))]
    assert [(t, f.kind) for t, f in run(Detector(Thresholds()), quick)] == [
        (2.25, Kind.SOUND_HOWL)]  # grew faster than the RMS follows: tone-like only after
    steady = [tone(0.25 * i, -3.0, 3.0) for i in range(40)]  # a sine from silence
    noise = [tone(0.25 * i, -40.0 + 1.5 * i, 12.0) for i in range(40)]
    assert run(Detector(Thresholds()), steady) == run(Detector(Thresholds()), noise) == []
    assert run(Detector(Thresholds(howl=False)), growing) == []


@given(st.lists(st.tuples(steps, anything, anything, anything, st.booleans(), anything),
                max_size=120), st.booleans())
def test_hostile_readings_never_break_it_and_faults_alternate_with_ok(
        seq: list[tuple[float, float, float, float, bool, float]], expect: bool) -> None:
    detector, t, open_faults = Detector(Thresholds(expect, 1.0, -60.0, 1.0)), 0.0, set()
    for gap, peak_in, peak_out, reduction, bad, rms in seq:
        t += gap
        for finding in detector.feed(Measured(t, peak_in, peak_out, reduction, bad, rms)):
            if finding.kind == Kind.SOUND_OK:
                assert finding.fault in open_faults
                open_faults.discard(finding.fault)
                assert finding.details["lasted_s"] >= 0
            else:
                assert finding.fault not in open_faults
                open_faults.add(finding.fault)
            assert all(not isinstance(v, float) or math.isfinite(v)
                       for v in finding.details.values())
        assert detector.sound in (open_faults or {"ok"})
    if not expect:
        assert "silent" not in open_faults


def test_limiting_for_limit_s_then_ok_once_the_stage_rests() -> None:
    detector = Detector(Thresholds(limit_s=2.0))
    loud = [Measured(0.25 * i, 4.0, 0.89, 12.0) for i in range(9)]  # +12 dB in, 2 s
    found = run(detector, loud)
    assert [(t, f.kind) for t, f in found] == [(2.0, Kind.SOUND_LIMITING)]
    assert found[0][1].details["peak_in_dbfs"] == 12.0
    assert found[0][1].details["reduction_db"] == 12.0
    assert detector.sound == "limiting"
    calm = [Measured(2.25 + 0.25 * i, 0.3, 0.3, LIMIT_DB / 2) for i in range(5)]
    assert [(t, f.kind) for t, f in run(detector, calm)] == [(3.25, Kind.SOUND_OK)]
    assert detector.sound == "ok"


def test_a_nan_is_said_at_once_and_outranks_the_other_faults() -> None:
    detector = Detector(Thresholds(expect_sound=True, silence_s=0.5))
    found = run(detector, [Measured(0.0, 0.0, 0.0, 0.0, True), Measured(0.5, 0.0, 0.0, 0.0, True)])
    assert [f.kind for _, f in found] == [Kind.SOUND_NAN, Kind.SOUND_SILENT]
    assert detector.sound == "nan"


def test_a_gap_in_the_readings_forgets_a_silence_not_yet_a_fault() -> None:
    detector = Detector(Thresholds(expect_sound=True, silence_s=3.0))
    quiet = [Measured(0.5 * i, 0, 0, 0) for i in range(5)]  # 2 s of silence
    assert run(detector, quiet) == []
    after = 2.0 + GAP_S + 0.1  # scsynth restarted meanwhile: the silence starts again
    again = [Measured(after + 0.5 * i, 0, 0, 0) for i in range(6)]  # 2.5 s
    assert run(detector, again) == []
    assert [f.kind for _, f in run(detector, [Measured(after + 3.0, 0, 0, 0)])] == [
        Kind.SOUND_SILENT]


def test_dbfs_reads_silence_and_nonsense_as_the_floor() -> None:
    assert dbfs(1.0) == 0.0
    assert dbfs(0.5) == -6.0
    assert dbfs(0.0) == dbfs(-1.0) == dbfs(math.nan) == dbfs(math.inf) == -200.0


@settings(max_examples=200)
@given(st.lists(st.tuples(st.floats(0.1, 0.5), st.floats(0.0, 0.1)), min_size=1, max_size=80))
def test_a_dc_level_held_for_dc_s_is_a_fault_once_and_ends_after_clear_s(
        seq: list[tuple[float, float]]) -> None:
    t, readings = 50.0, []
    for gap, dc in seq:
        t += gap
        readings.append(Measured(t, LOUD, LOUD, 0.0, dc_in=dc))
    found = [(at, f) for at, f in run(Detector(Thresholds(howl=False)), readings)
             if f.fault == DC]
    expected = oracle(readings, lambda m: m.dc_in >= DC_LEVEL, DC_S, Kind.SOUND_DC)
    assert [(at, f.kind) for at, f in found] == expected
    for _, f in found:
        if f.kind == Kind.SOUND_DC:
            assert f.details["dc_dbfs"] >= dbfs(DC_LEVEL) and "DC offset" in f.message


def test_a_dc_offset_that_comes_in_loud_is_dc_not_a_howl() -> None:
    detector = Detector(Thresholds())
    quiet = [Measured(t * 0.25, 0.01, 0.01, 0.0, rms_in=0.007) for t in range(8)]
    dc = [Measured(2.0 + t * 0.25, 0.5, 0.01, 0.0, rms_in=0.5, dc_in=0.5) for t in range(12)]
    found = run(detector, quiet + dc)
    assert [f.kind for _, f in found] == [Kind.SOUND_DC] and detector.sound == "dc"


def test_loud_noise_whose_slow_wander_reads_as_a_dc_level_is_no_dc_offset() -> None:
    # white noise at 10x (RMS 5.8) through the stage's 2 Hz low-pass wanders 0.05-0.15
    detector = Detector(Thresholds(howl=False))
    noise = [Measured(t * 0.25, 10.0, 0.9, 20.0, rms_in=5.8, dc_in=0.15) for t in range(16)]
    assert Kind.SOUND_DC not in [f.kind for _, f in run(detector, noise)]
    offset = [Measured(4.0 + t * 0.25, 0.6, 0.3, 0.0, rms_in=0.5, dc_in=0.3) for t in range(12)]
    assert Kind.SOUND_DC in [f.kind for _, f in run(detector, offset)]


def test_a_fault_going_on_says_how_long_since_its_condition_began() -> None:
    detector = Detector(Thresholds(expect_sound=True, silence_s=1.0))
    assert detector.lasting(0.0) == {}
    run(detector, [Measured(10.0 + t * 0.25, QUIET, QUIET, 0.0) for t in range(8)])
    assert detector.lasting(13.0) == {"silent": 3.0}  # raised at 11.0, silent since 10.0
    run(detector, [Measured(12.0 + t * 0.25, LOUD, LOUD, 0.0) for t in range(6)])
    assert detector.lasting(14.0) == {}  # ended: SOUND_OK said how long it lasted


def test_xruns_over_the_rooms_limit_are_a_fault_at_once_and_none_when_unwatched() -> None:
    readings = [Measured(float(t), LOUD, LOUD, 0.0, xruns_last_min=x)
                for t, x in enumerate([0, 3, 12, 12, 4, 2, 1, 0])]
    watched = run(Detector(Thresholds(xruns_per_min=10)), readings)
    assert [(t, f.kind) for t, f in watched] == [(2.0, Kind.SOUND_XRUNS), (5.0, Kind.SOUND_OK)]
    assert watched[0][1].details["xruns_last_min"] == 12 and "xruns" in watched[0][1].message
    assert run(Detector(Thresholds()), readings) == []  # xruns_per_min 0: not watched


def test_the_xruns_rate_is_what_the_jack_server_reported_in_the_last_minute() -> None:
    counts = {"lobby": 0}
    watch = SoundWatch(SimpleNamespace(views={}), lambda: counts)  # type: ignore[arg-type]
    assert watch._xruns_last_min("lobby", 0.0) == 0
    counts["lobby"] = 5
    assert watch._xruns_last_min("lobby", 30.0) == 5
    counts["lobby"] = 12
    assert watch._xruns_last_min("lobby", 75.0) == 7  # the 5 before 15 s are out of it
    assert watch._xruns_last_min("far", 75.0) == 0  # another host's room: not known here
