from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.input.toml_limits import MAX_DEPTH, MAX_ITEMS, TooDeep, check_toml


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


@pytest.mark.parametrize("many", [
    "".join(f"k{i} = {i}\n" for i in range(MAX_ITEMS + 1)),  # keys
    "a = [" + "1," * MAX_ITEMS + "1]\n",  # array items
    "".join(f"[t{i}]\n" for i in range(MAX_ITEMS + 1)),  # tables
    "a = {" + ", ".join(f"k{i} = 1" for i in range(MAX_ITEMS // 2 + 1)) + "}\n",
])
def test_more_keys_and_items_than_the_limit_are_refused_with_the_line_they_reach(
        many: str) -> None:
    with pytest.raises(TooDeep, match=rf"line \d+: more than {MAX_ITEMS} keys, items and "
                                      "tables") as refused:
        check_toml(many)
    line = int(str(refused.value).split()[1].rstrip(":"))
    assert line == min(many.count("\n"), MAX_ITEMS + 1)


def test_keys_within_the_limit_pass_and_signs_in_strings_and_comments_are_none() -> None:
    check_toml("".join(f"k{i} = {i}\n" for i in range(MAX_ITEMS)))
    check_toml("a = \"" + "=," * MAX_ITEMS + "\"\n# " + "=" * MAX_ITEMS + "\n", max_items=2)
    with pytest.raises(TooDeep, match="line 3: more than 2 keys"):
        check_toml("a = 1\n#\nb = [2]\n", max_items=2)


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
