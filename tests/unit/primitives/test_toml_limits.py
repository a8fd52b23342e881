from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.toml_limits import MAX_DEPTH, TooDeep, check_toml


@pytest.mark.parametrize("opening,closing", [("[", "]"), ("{b = ", "}")])
@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1_000, 100_000])
def test_nesting_past_the_limit_is_refused_with_its_line_before_tomllib_recurses(
        opening: str, closing: str, levels: int) -> None:
    text = "# a file\n\na = " + opening * levels + "1" + closing * levels + "\n"
    with pytest.raises(TooDeep, match=f"line 3: nested more than {MAX_DEPTH} levels deep"):
        check_toml(text)


def test_nesting_up_to_the_limit_reads_as_tomllib_reads_it() -> None:
    text = "a = " + "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH + "\n"
    check_toml(text)
    assert tomllib.loads(text)["a"] is not None


def test_brackets_in_strings_and_comments_are_not_nesting() -> None:
    deep = "[" * 1000
    text = (f'a = "{deep}"\nb = \'{deep}\'\nc = """\n{deep}\n"""\nd = \'\'\'{deep}\'\'\'\n'
            f'# {deep}\n[table]\n[[rows]]\ne = ["\\"[[", {{f = 1}}]\n')
    check_toml(text)
    assert tomllib.loads(text)["a"] == deep


def test_a_file_over_the_size_is_refused_saying_so() -> None:
    with pytest.raises(TooDeep, match="more than the 10 a file may hold"):
        check_toml("a = 123456789\n", max_bytes=10)


@given(st.recursive(st.integers() | st.text(st.sampled_from("ab[]{}#\"'\\ "), max_size=6),
                    lambda inner: st.lists(inner, max_size=3), max_leaves=20))
def test_whatever_tomlkit_writes_within_the_limit_passes(value: object) -> None:
    import tomlkit

    text = tomlkit.dumps({"a": value})
    check_toml(text)  # brackets, quotes and hashes inside strings are not nesting
    tomllib.loads(text)
