"""Safe FTS5 queries from any text: words only, each quoted, checked against real FTS5."""

from __future__ import annotations

import sqlite3

import pytest

from scorch.knowledge.fts import MAX_TERMS, match_all, match_any, name_words, terms


def test_terms_are_lower_case_distinct_words_in_order() -> None:
    assert terms("Free VERB free, reverb!") == ["free", "verb", "reverb"]
    assert terms("") == [] and terms(None) == [] and terms(" ,.;*()\"") == []


def test_query_syntax_becomes_plain_words() -> None:
    assert terms('NEAR(sin osc) AND "x" OR name:y*') == ["near", "sin", "osc", "and", "x", "or",
                                                         "name", "y"]


def test_underscores_split_words_as_fts5_does() -> None:
    assert terms("Tour_of_UGens") == ["tour", "of", "ugens"]


def test_a_huge_paste_is_cut_to_a_few_short_terms() -> None:
    words = terms(" ".join(f"w{i}" for i in range(5000)) + " " + "y" * 1000)

    assert len(words) == MAX_TERMS
    assert all(len(w) <= 48 for w in terms("z" * 1000))


def test_each_word_is_quoted_and_joined() -> None:
    assert match_all(["sin", "osc"]) == '"sin" AND "osc"'
    assert match_any(["sin", "osc"]) == '"sin" OR "osc"'
    assert match_any([]) is None and match_all([]) is None


def test_names_carry_their_camel_case_parts() -> None:
    assert name_words("SinOsc") == "SinOsc Sin Osc"
    assert name_words("LFSaw") == "LFSaw LF Saw"
    assert name_words("Pan2") == "Pan2 Pan 2"
    assert name_words("Pbind") == "Pbind"


@pytest.mark.parametrize("text", ["AND", "\"", "a\"b", "NEAR(a b)", "*", "^x", "col:x", "é",
                                  "日本語 text", "-", "(", "x" * 10_000, "OR OR", "\x00a"])
def test_every_expression_is_valid_fts5(text: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize = 'porter unicode61')")
    db.execute("INSERT INTO t VALUES ('and or near a b x col text')")
    for expression in (match_all(terms(text)), match_any(terms(text))):
        if expression is not None:
            db.execute("SELECT * FROM t WHERE t MATCH ?", (expression,)).fetchall()
