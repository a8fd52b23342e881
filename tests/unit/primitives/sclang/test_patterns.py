"""The pattern records ScorchPatterns.sc sends, and the restore code scorch sends back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.sclang.patterns import (
    PatternRecord,
    Silenced,
    parse_gone,
    parse_pattern,
    parse_silenced,
    restore_code,
    sc_string,
    short,
)


def test_a_pattern_record_gives_kind_name_play_state_quant_and_the_whole_text() -> None:
    record = parse_pattern("Pbindef\t1\t[ 4, 0.5 ]\tsource\t\tnil\tbass line\n"
                           "Pbindef('bass line', 'degree', 1)\n// second line")
    assert record == PatternRecord("Pbindef", "bass line", True, "[ 4, 0.5 ]", "source",
                                   "Pbindef('bass line', 'degree', 1)\n// second line")
    assert record.key == "Pdef bass line"  # a Pbindef is a Pdef to sclang


@pytest.mark.parametrize("mute", ["muted", "solo"])
def test_a_pattern_record_says_whether_it_is_muted_or_soloed(mute: str) -> None:
    record = parse_pattern(f"Pdef\t1\t1.0\tsource\t{mute}\tnil\tacc\nPdef('acc', 1)")
    assert record == PatternRecord("Pdef", "acc", True, "1.0", "source", "Pdef('acc', 1)", mute)


@pytest.mark.parametrize("payload", [
    "Pdef\t1\t1.0\tsource\t\t4\tacc",             # no text line
    "Pdef\t1\t1.0\tsource\t\t4\t\n",              # no name
    "Synth\t1\t1.0\tsource\t\t4\tx\ncode",         # not a proxy kind
    "Pdef\tyes\t1.0\tsource\t\t4\tx\ncode",        # play state not 0/1/2
    "Pdef\t3\t1.0\tsource\t\t4\tx\ncode",
    "Pdef\t1\t1.0\tguess\t\t4\tx\ncode",           # unknown origin of the text
    "Pdef\t1\t1.0\tsource\tloud\t4\tx\ncode",      # unknown mute state
    "Pdef\t1\t1.0\tsource\t\tx\ncode",             # no play quant (an older record)
    "Pdef\t1\t1.0\tsource\tx\ncode",               # no mute field (older still)
])
def test_a_malformed_pattern_record_is_refused(payload: str) -> None:
    with pytest.raises(ValueError, match="not a pattern record"):
        parse_pattern(payload)


def test_a_pattern_played_to_its_end_is_finished_not_playing() -> None:
    record = parse_pattern("Pdef\t2\t1.0\tsource\t\t4\tonce\nPdef('once', 1)")
    assert (record.playing, record.finished) == (False, True)
    assert record.quant_in_force == "1.0"  # it plays no more: its own quant


def test_the_quant_in_force_is_the_grid_it_was_played_on_while_it_plays() -> None:
    on_the_bar = parse_pattern("Pdef\t1\t1.0\tsource\t\t4\tkick\nPdef('kick', 1)")
    assert (on_the_bar.quant, on_the_bar.play_quant, on_the_bar.quant_in_force) == (
        "1.0", "4", "4")
    never_played = parse_pattern("Pdef\t0\t1.0\tsource\t\tnil\tkick\nPdef('kick', 1)")
    assert never_played.quant_in_force == "1.0"
    ndef = parse_pattern("Ndef\t1\tnil\tsource\t\tnil\tdrone\nNdef('drone', 1)")
    assert ndef.quant_in_force == "nil"


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


def test_silence_answers_the_routines_then_a_pattern_a_line() -> None:
    assert parse_silenced("2\nPdef kick\nTdef lights") == Silenced(2, ("Pdef kick",
                                                                       "Tdef lights"))
    assert parse_silenced("0") == Silenced(0, ())
    for wrong in ("", "x", "1\nSynth a", "-1", "1\n"):
        with pytest.raises(ValueError, match=r"ScorchPatterns\.silence"):
            parse_silenced(wrong)


@given(st.text(max_size=200))
def test_any_text_from_sclang_is_read_or_refused_never_misread(payload: str) -> None:
    for parse in (parse_pattern, parse_silenced):
        try:
            read = parse(payload)
        except ValueError:
            continue
        if isinstance(read, PatternRecord):
            assert read.kind in ("Pdef", "Pbindef", "Tdef", "Ndef") and read.name
            assert not (read.playing and read.finished)
        else:
            assert read.routines >= 0 and all(p.split(" ")[0] in ("Pdef", "Pbindef", "Tdef",
                                                                   "Ndef") for p in read.patterns)
