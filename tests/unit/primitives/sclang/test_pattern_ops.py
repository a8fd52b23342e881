"""The sclang code of pattern changes: names quoted as symbols whatever they hold."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.sclang import pattern_ops


def unquote(literal: str) -> str:
    """Read an sclang symbol literal back as sclang's lexer does."""
    assert literal[0] == literal[-1] == "'"
    out, i, body = [], 0, literal[1:-1]
    while i < len(body):
        if body[i] == "\\":
            i += 1
        else:
            assert body[i] != "'", f"unescaped quote in {literal!r}"
        out.append(body[i])
        i += 1
    return "".join(out)


@given(st.text(max_size=64))
def test_any_name_is_one_symbol_literal_that_reads_back_the_same(name: str) -> None:
    assert unquote(pattern_ops.sc_symbol(name)) == name


def test_a_pbindef_is_changed_as_the_pdef_sclang_keeps_it_in() -> None:
    code = pattern_ops.replace_code("Pbindef", "bass", "Pbind(\\dur, 1)", "bar")
    assert code.startswith('ScorchPatternOps.replace("Pdef", \'bass\', (\nPbind(\\dur, 1)\n)')
    assert code.endswith('"bar", "Pdef(\'bass\', Pbind(\\\\dur, 1))")')


def test_set_puts_the_value_in_parentheses_on_lines_of_its_own() -> None:
    # a trailing comment in the value cannot swallow the rest of the call
    code = pattern_ops.set_key_code("bass", "dur", "0.5 // half", "beat")
    assert code == "ScorchPatternOps.setKey('bass', 'dur', (\n0.5 // half\n), \"beat\")"


def test_unmute_of_no_name_unmutes_every_muted_one() -> None:
    assert pattern_ops.simple_code("unmute", None, None, "now") == \
        'ScorchPatternOps.unmute(nil, nil, "now")'


def test_defined_again_to_play_a_pattern_that_does_not_play_gets_a_new_player() -> None:
    # a player a CmdPeriod caught waiting for its quant never plays again
    code = pattern_ops.define_code("Pbindef", "bass", "Pbindef('bass', 'dur', 1)", True)
    assert code.endswith("if(Pdef('bass').isPlaying.not) { Pdef('bass').stop }; "
                         "Pdef('bass').play; ScorchPatternOps.setMute(\"Pdef\", 'bass', \"\"); "
                         "nil")
    # an Ndef's monitor has no such player; a stop is a stop
    assert "Ndef('hum').play; " in pattern_ops.define_code("Ndef", "hum", "x", True)
    assert pattern_ops.define_code("Tdef", "t", "x", False).endswith("\nTdef('t').stop; nil")
