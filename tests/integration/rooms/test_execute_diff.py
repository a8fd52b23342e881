"""execute against a bare sclang given the same code: the fast subset (the bench runs more).

A room and a plain sclang on its own scsynth run every hand-made case of
issue 18 and a seeded sample of the examples in SuperCollider's class help;
the value, the posts and the error must agree, except where sclang itself
gives a different answer from one run to the next.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import jack_name
from tests.support.bare_sclang import BareSclang
from tests.support.differential import CASES, Verdict, help_units, run_units
from tests.support.harness import Scsynth, compile_test_synthdefs

pytestmark = pytest.mark.integration

#: Help examples in the fast run (a seeded sample; the benchmark runs thousands).
SAMPLE = 20


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
                yield run_units(orch, "room", bare, CASES + help_units(SAMPLE))
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
    examples = [v for v in verdicts if not v.unit.source.startswith("case:")]
    assert len(examples) == SAMPLE
    unexplained = [(v.unit.source, v.unit.code, v.reason) for v in examples
                   if not v.same and not v.nondeterministic]
    assert not unexplained
    assert sum(v.same for v in examples) >= SAMPLE // 2  # a comparison that ever agrees


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
