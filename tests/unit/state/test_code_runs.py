"""Which code request made each synth a crash lost, by when the synth started."""

from __future__ import annotations

from scorch.state.code_runs import GRACE, CodeRun, CodeRuns, origins, quote

FIRST = CodeRun(7, 100.0, 101.0, "~a = Synth(\\sine); ~b = Synth(\\sine)")
SECOND = CodeRun(9, 110.0, 110.2, "fork { 5.wait; Synth(\\fx) }")


def test_a_synth_is_the_request_s_that_ran_when_it_started_or_started_after_the_one_before(
        ) -> None:
    synths = [(1, "sine"), (2, "sine"), (3, "fx"), (4, "fx"), (5, "old")]
    started = {1: 100.5, 2: 101.0 + GRACE / 2,  # in the window, and in its latency's grace
               3: 110.1, 4: 115.0}  # the second's; then its routine's, after it returned
    made = origins(synths, started, [FIRST, SECOND])
    assert [(o.run.entry if o.run else None, o.during, dict(o.synthdefs)) for o in made] == [
        (None, False, {"old": 1}), (7, True, {"sine": 2}), (9, True, {"fx": 1}),
        (9, False, {"fx": 1})]
    assert made[1].text() == "sine x2 made by history #7 (`~a = Synth(\\sine); ~b = Synth(\\sine)`)"
    assert made[3].text().startswith("fx started after history #9 (")
    assert made[0].text() == "old started before any code request scorch kept"
    assert made[1].details() == {"entry": 7, "during": True, "code": quote(FIRST.code),
                                 "synthdefs": {"sine": 2}}


def test_a_synth_in_the_grace_of_one_request_and_the_window_of_the_next_is_the_next_s() -> None:
    quick = CodeRun(8, 101.1, 101.2, "Synth(\\b)")
    (made,) = origins([(1, "b")], {1: 101.15}, [FIRST, quick])
    assert made.run == quick and made.during


def test_the_runs_kept_are_bounded_and_a_long_code_is_quoted_on_one_short_line() -> None:
    runs = CodeRuns()
    for i in range(300):
        runs.ran(CodeRun(i, float(i), float(i), "1"))
    kept = runs.runs()
    assert len(kept) == 200 and kept[0].entry == 100 and kept[-1].entry == 299
    line = quote("(\n  " + "x" * 200 + "\n)")
    assert "\n" not in line and len(line) == 60 and line.endswith("…")
