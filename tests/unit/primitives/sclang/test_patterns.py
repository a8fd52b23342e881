"""The pattern records ScorchPatterns.sc sends, and the restore code scorch sends back."""

from __future__ import annotations

import pytest

from scorch.primitives.sclang.patterns import (
    PatternRecord,
    parse_gone,
    parse_pattern,
    restore_code,
    sc_string,
    short,
)


def test_a_pattern_record_gives_kind_name_play_state_quant_and_the_whole_text() -> None:
    record = parse_pattern("Pbindef\t1\t[ 4, 0.5 ]\tsource\t\tbass line\n"
                           "Pbindef('bass line', 'degree', 1)\n// second line")
    assert record == PatternRecord("Pbindef", "bass line", True, "[ 4, 0.5 ]", "source",
                                   "Pbindef('bass line', 'degree', 1)\n// second line")
    assert record.key == "Pdef bass line"  # a Pbindef is a Pdef to sclang


@pytest.mark.parametrize("mute", ["muted", "solo"])
def test_a_pattern_record_says_whether_it_is_muted_or_soloed(mute: str) -> None:
    record = parse_pattern(f"Pdef\t1\t1.0\tsource\t{mute}\tacc\nPdef('acc', 1)")
    assert record == PatternRecord("Pdef", "acc", True, "1.0", "source", "Pdef('acc', 1)", mute)


@pytest.mark.parametrize("payload", [
    "Pdef\t1\t1.0\tsource\t\tacc",             # no text line
    "Pdef\t1\t1.0\tsource\t\n",                 # no name
    "Synth\t1\t1.0\tsource\t\tx\ncode",         # not a proxy kind
    "Pdef\tyes\t1.0\tsource\t\tx\ncode",        # play state not 0/1
    "Pdef\t1\t1.0\tguess\t\tx\ncode",           # unknown origin of the text
    "Pdef\t1\t1.0\tsource\tloud\tx\ncode",      # unknown mute state
    "Pdef\t1\t1.0\tsource\tx\ncode",            # no mute field (an older record)
])
def test_a_malformed_pattern_record_is_refused(payload: str) -> None:
    with pytest.raises(ValueError, match="not a pattern record"):
        parse_pattern(payload)


def test_a_gone_record_names_the_key_and_bad_ones_are_refused() -> None:
    assert parse_gone("Ndef\tdrone") == "Ndef drone"
    assert parse_gone("Pbindef\tb") == "Pdef b"
    with pytest.raises(ValueError):
        parse_gone("Ndef")


def test_restore_code_quotes_every_text_so_sclang_reads_it_back_unchanged() -> None:
    tricky = 'Pdef(\\a, Pbind(\\note, "x\\"y"))'
    code = restore_code([PatternRecord("Pdef", "a", True, "1.0", "code", tricky, "muted"),
                         PatternRecord("Ndef", "n", False, "nil", "source", "Ndef('n', 1)")])
    assert code == ('ScorchPatterns.restore([["Pdef", "a", true, "code", '
                    + sc_string(tricky) + ', "1.0", "muted"], ["Ndef", "n", false, "source", '
                    '"Ndef(\'n\', 1)", "nil", ""]]);')
    assert sc_string(tricky) == '"Pdef(\\\\a, Pbind(\\\\note, \\"x\\\\\\"y\\"))"'


def test_short_puts_the_source_on_one_line_within_the_limit() -> None:
    assert short("Pdef('a',\n\tPbind('degree', 1))") == "Pdef('a', Pbind('degree', 1))"
    cut = short("x" * 100, limit=20)
    assert len(cut) == 20 and cut.endswith("...")
