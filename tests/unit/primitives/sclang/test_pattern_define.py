"""The sclang code that defines a new pattern: the source evaluated once, the text kept whole."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.sclang.pattern_define import new_pattern_code


def string_literal(code: str, after: str) -> str:
    """The sclang string literal that follows ``after`` in ``code``, read as sclang reads it."""
    start = code.index(after) + len(after)
    assert code[start] == '"'
    out, i = [], start + 1
    while code[i] != '"':
        if code[i] == "\\":
            i += 1
        out.append(code[i])
        i += 1
    return "".join(out)


@given(st.text(max_size=200))
def test_the_text_a_restore_runs_holds_any_source_whole_on_lines_of_its_own(
        source: str) -> None:
    code = new_pattern_code("Pdef", "acc", source, True, "bar")
    assert string_literal(code, "nil }, ") == f"Pdef('acc', (\n{source}\n))"
    # evaluated once, in parentheses on lines of their own: a trailing comment ends there
    assert code.endswith(f"}}.value((\n{source}\n), ScorchPatternOps.grid(\"bar\"))")


def test_a_pbindef_is_made_of_a_pbinds_pairs_and_anything_else_is_refused() -> None:
    code = new_pattern_code("Pbindef", "bass", "Pbind(\\dur, 1) // a comment", True, "beat")
    assert ("var proxy = Pbindef('bass', *source.patternpairs); proxy.stop; "
            "proxy.play(quant: grid)") in code
    assert "source.isKindOf(Pbind).not" in code
    assert string_literal(code, "nil }, ") == \
        "Pbindef('bass', *(\nPbind(\\dur, 1) // a comment\n).patternpairs)"
    # a Pbindef is a Pdef to sclang: a Pdef of that name is taken
    assert 'ScorchPatterns.proxy("Pdef", \'bass\')' in code


def test_a_name_in_use_is_refused_by_sclang_too() -> None:
    code = new_pattern_code("Tdef", "tick", "{ loop { 1.wait } }", True, "now")
    assert re.search(r"p\.source !\? \{ Error\(\"Tdef tick is defined already", code)
    assert "Tdef('tick', source); proxy.stop; proxy.play(quant: grid)" in code


def test_an_ndef_monitors_at_once_and_play_false_only_defines() -> None:
    assert "var proxy = Ndef('hum', source); proxy.play; nil" in new_pattern_code(
        "Ndef", "hum", "{ SinOsc.ar }", True, "bar")
    assert "var proxy = Pdef('acc', source); nil" in new_pattern_code(
        "Pdef", "acc", "Pbind()", False, "bar")
