"""The differential harness's own judgement, without processes: what counts as agreeing."""

from __future__ import annotations

from scorch.primitives.sclang.result import ExecuteResult, SclangError
from tests.support.bare_sclang import BareRun
from tests.support.differential import Unit, _judge, normalise

UNIT = Unit("case:x", "5")
FIVE = ExecuteResult(ok=True, value="5")
TIMEOUT = ExecuteResult(ok=False, elapsed=5.0, error=SclangError(kind="timeout", message="t"))


def judge(runs: list[BareRun], result: ExecuteResult, timeout: float = 5.0):  # type: ignore[no-untyped-def]
    return _judge(UNIT, runs, [(result, []), (result, [])], timeout)


def test_the_same_value_agrees_and_another_does_not() -> None:
    done = BareRun("-> 5\n", True, 0.01)
    assert judge([done, done], FIVE).same
    wrong = judge([done, done], ExecuteResult(ok=True, value="6"))
    assert not wrong.same and not wrong.nondeterministic


def test_scorch_timing_out_where_sclang_was_quick_is_a_difference() -> None:
    verdict = judge([BareRun("-> 5\n", True, 0.01)] * 2, TIMEOUT)
    assert not verdict.same and not verdict.nondeterministic
    assert "scorch timed out" in verdict.reason


def test_code_that_takes_about_the_limit_in_sclang_is_named_not_counted() -> None:
    verdict = judge([BareRun("-> 5\n", True, 4.2)] * 2, TIMEOUT)
    assert verdict.nondeterministic and "about the time limit" in verdict.reason


def test_what_sclang_printed_before_it_hung_is_compared() -> None:
    hung = BareRun("-> 5\n", False, 5.0)
    assert judge([hung, hung], FIVE).same
    assert not judge([hung, hung], ExecuteResult(ok=True, value="6")).same
    assert judge([BareRun("", False, 5.0)] * 2, TIMEOUT).same  # neither side finished


def test_a_unit_sclang_itself_dies_on_is_named_unless_scorch_agreed_anyway() -> None:
    died = BareRun("", False, 0.1, died=True)
    verdict = judge([died, died], FIVE)
    assert verdict.nondeterministic and verdict.reason.startswith("sclang itself died")
    printed = BareRun("-> 5\n", True, 0.1, died=True)  # died in what the code left running
    assert judge([printed, printed], FIVE).same


def test_identity_hashes_and_node_ids_are_noise_but_values_are_not() -> None:
    assert normalise("var\txC3288DE0 = 1") == normalise("var\tx715BFB6F = 1")
    assert normalise("Synth('a' : 1000)") == normalise("Synth('a' : 1017)")
    assert normalise("x = 12") != normalise("x = 13")


def test_sclang_finishing_one_run_and_not_the_other_is_named_where_they_differ() -> None:
    verdict = judge([BareRun("-> 5\n", True, 4.9), BareRun("", False, 5.0)], FIVE)
    assert verdict.nondeterministic and "finished one of its two runs" in verdict.reason
    raced = [BareRun("-> 5\n", True, 0.1), BareRun("-> 5\n", False, 5.0)]
    assert judge(raced, FIVE).same  # the routine hung it before or after its marker


def test_each_run_is_compared_with_its_counterpart() -> None:
    one, two = BareRun("-> 1\n", True, 0.01), BareRun("-> 2\n", True, 0.01)
    counted = [(ExecuteResult(ok=True, value="1"), []), (ExecuteResult(ok=True, value="2"), [])]
    growing = _judge(UNIT, [one, two], counted, 5.0)  # a counter: certain, and agreed
    assert growing.same and not growing.nondeterministic
    off = [(ExecuteResult(ok=True, value="1"), []), (ExecuteResult(ok=True, value="3"), [])]
    varies = _judge(UNIT, [one, two], off, 5.0)  # sclang's own runs differ: named
    assert not varies.same and varies.nondeterministic
    steady = _judge(UNIT, [one, one], off, 5.0)  # sclang steady, scorch not: a difference
    assert not steady.same and not steady.nondeterministic
    assert steady.reason.startswith("second run")


def test_the_wall_clock_is_noise() -> None:
    assert normalise("1795444580.293\n-> Mon Nov 23 14:36:20 2026") == normalise(
        "1795444580.1906\n-> Mon Nov 23 14:36:21 2026")
    assert normalise("-> 1.8346999999252e-05") == normalise("-> 5.7179999999324e-06")
    assert normalise("-> 1795") != normalise("-> 1796")
