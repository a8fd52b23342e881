"""Session files without rooms: TOML values read back as written, the sessions folder."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.app.sessions import SessionStore, toml_inline
from scorch.errors import SessionNotFound

#: What sessions hold: TOML has no null, so neither do they.
toml_values = st.recursive(
    st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(toml_values)
def test_toml_values_read_back_as_written(value: object) -> None:
    doc = tomlkit.document()
    doc.add("x", toml_inline(value))
    assert tomllib.loads(tomlkit.dumps(doc))["x"] == value


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, [1.0, math.inf],
                                   {"amp": math.nan}])
def test_a_number_toml_cannot_read_back_is_refused(value: object) -> None:
    with pytest.raises(ValueError, match="finite numbers only"):
        toml_inline(value)


def test_the_store_names_what_it_has_when_a_name_is_missing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    store.write("evening", "version = 1\n")
    with pytest.raises(SessionNotFound, match=r"no session 'morning'; saved sessions: evening"):
        store.read("morning")
    with pytest.raises(SessionNotFound):
        store.delete("morning")
    store.delete("evening")
    assert store.list() == []


def test_a_session_file_nested_too_deep_is_a_located_error_not_a_recursion(
        tmp_path: Path) -> None:
    from scorch.app.sessions import Reading, parse
    from scorch.config.installation import parse_config
    from scorch.errors import SessionFileError
    from scorch.primitives.synthdefs.library import SynthDefLibrary

    config = parse_config("[instances.a]\n", tmp_path / "c.toml")
    (tmp_path / "defs").mkdir()
    text = "version = 2\nx = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(SessionFileError, match="line 2: nested more than 32 levels deep"):
        parse(text, tmp_path / "deep.toml", Reading(config, SynthDefLibrary(tmp_path / "defs")))
