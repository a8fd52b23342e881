"""execute against a bare sclang given the same code: the fast subset (the bench runs more).

A room and a plain sclang on its own scsynth run every hand-made case of
issue 18, a seeded sample of the examples in SuperCollider's class help, and
every runnable example that calls what scorch's guard closes (a file written,
a shell command: issue 37); the value, the posts and the error must agree,
except where sclang itself gives a different answer from one run to the next,
and where the guard refused what the bare sclang did, having agreed up to it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import jack_name
from tests.support.bare_sclang import BareSclang
from tests.support.differential import (
    CASES,
    GUARDED,
    Verdict,
    guarded_units,
    help_units,
    run_units,
)
from tests.support.harness import Scsynth, compile_test_synthdefs

pytestmark = pytest.mark.integration

#: Help examples in the fast run (a seeded sample; the benchmark runs thousands).
SAMPLE = 20
#: Every runnable help example that writes a file or runs a command (scorch refuses them).
GUARDS = [unit for unit in guarded_units() if unit not in help_units(SAMPLE)]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory,
             library: SynthDefLibrary) -> Iterator[list[Verdict]]:
    folder = tmp_path_factory.mktemp("diff")
    jack = jack_name("diff")
    text = (f'state_dir = "{folder / "state"}"\n[audio]\n'
            f'driver = "dummy"\njack_server = "{jack}"\n'
            "[midi]\nenabled = false\n[instances.room]\n")
    orch = Orchestra(parse_config(text, folder / "config.toml"), library)
    try:
        assert orch.start() == {"room": None}
        server = Scsynth(jack, compile_test_synthdefs(folder / "defs"), "bare")
        try:
            bare = BareSclang(server.port, "room")
            try:
                yield run_units(orch, "room", bare, CASES + help_units(SAMPLE) + GUARDS)
            finally:
                bare.close()
        finally:
            server.close()
    finally:
        orch.stop()


def test_every_hand_made_case_agrees_with_a_bare_sclang(verdicts: list[Verdict]) -> None:
    cases = [v for v in verdicts if v.unit.source.startswith("case:")]
    assert len(cases) == len(CASES)
    unexplained = [(v.unit.source, v.reason) for v in cases
                   if not v.same and not v.nondeterministic]
    assert not unexplained


def test_help_examples_agree_but_for_what_sclang_itself_varies(verdicts: list[Verdict]) -> None:
    examples = [v for v in verdicts if not v.unit.source.startswith("case:")][:SAMPLE]
    assert len(examples) == SAMPLE
    unexplained = [(v.unit.source, v.unit.code, v.reason) for v in examples
                   if not v.same and not v.nondeterministic]
    assert not unexplained
    assert sum(v.same for v in examples) >= SAMPLE // 2  # a comparison that ever agrees


def test_examples_that_write_files_or_run_commands_differ_by_the_guards_refusal_alone(
        verdicts: list[Verdict]) -> None:
    guarded = verdicts[-len(GUARDS):]
    assert len(GUARDS) >= 10 and [v.unit for v in guarded] == GUARDS
    refused = [v for v in guarded if v.guarded]
    unexplained = [(v.unit.source, v.unit.code[:80], v.reason) for v in guarded
                   if not v.same and not v.guarded and not v.nondeterministic]
    assert not unexplained
    assert len(refused) >= 5  # the guard did refuse, where the bare sclang wrote or ran
    for verdict in refused:
        assert GUARDED.search(verdict.unit.code) and verdict.reason.startswith("scorch refused")
    # nothing but these: no unit outside them met the guard
    assert not [v.unit.source for v in verdicts if v.guarded and v.unit not in GUARDS]


def test_the_comparison_catches_a_wrong_value(verdicts: list[Verdict]) -> None:
    from dataclasses import replace

    from tests.support.differential import compare

    case = next(v for v in verdicts if v.unit.source == "case:posts")
    assert case.same
    wrong = compare(case.unit, [case.bare, case.bare],
                    replace(_result(case), value="4"), late=[])
    assert not wrong.same and "value" in wrong.reason


def _result(verdict: Verdict):  # type: ignore[no-untyped-def]
    from scorch.primitives.sclang.result import ExecuteResult

    return ExecuteResult(ok=True, value="3", posted=("one", "two"))
