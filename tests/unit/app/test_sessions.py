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
from scorch.state.session import RoomSpec, Session

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


def round_trip(session: Session) -> Session:
    """``session`` written to a session file of rooms a and b, and read back."""
    import tempfile

    from scorch.app.sessions import Reading, parse, render
    from scorch.config.installation import parse_config
    from scorch.primitives.synthdefs.library import SynthDefLibrary

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        config = parse_config("[instances.a]\n[instances.b]\n", tmp / "c.toml")
        (tmp / "defs").mkdir()
        return parse(render(session, "s"), tmp / "s.toml",
                     Reading(config, SynthDefLibrary(tmp / "defs")))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(
    st.sampled_from(["a", "b"]),
    st.none() | st.lists(st.tuples(st.sampled_from(["Pdef", "Pbindef", "Tdef", "Ndef"]),
                                   st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
                                   st.booleans(),
                                   st.text(min_size=1, max_size=80).filter(
                                       lambda t: "\x00" not in t)), max_size=3),
    max_size=2))
def test_patterns_read_back_from_a_session_file_and_rooms_without_them_are_left_alone(
        rooms: dict[str, list[tuple[str, str, bool, str]] | None]) -> None:
    from scorch.primitives.sclang.patterns import pattern_key
    from scorch.state.session import PatternSpec

    session = Session(rooms={room: RoomSpec(
        patterns={pattern_key(k, n): PatternSpec(k, n, p, t) for k, n, p, t in found or []},
        patterns_known=found is not None) for room, found in rooms.items()})
    assert round_trip(session).rooms == session.rooms


def test_nodes_keep_their_places_through_a_session_file_and_bad_places_are_located(
        tmp_path: Path) -> None:
    from scorch.app.sessions import Reading, parse, render
    from scorch.config.installation import parse_config
    from scorch.errors import SessionFileError
    from scorch.primitives.synthdefs.library import SynthDefLibrary
    from scorch.state.session import NodeSpec, RoomSpec, Session

    nodes = {"src": NodeSpec("sine"), "fx": NodeSpec("sine", {}, "src", "after"),
             "pre": NodeSpec("sine", {}, "src", "before"),
             "top": NodeSpec("sine", {}, None, "head")}
    session = Session(rooms={"a": RoomSpec(nodes=nodes)})
    config = parse_config("[instances.a]\n", tmp_path / "c.toml")
    reading = Reading(config, SynthDefLibrary())
    text = render(session, "s")
    assert 'target = "src"' in text and 'add_action = "before"' in text
    assert text.count("add_action") == 2  # after a target and the tail are left out
    assert parse(text, tmp_path / "s.toml", reading).rooms["a"].nodes == nodes
    wrong = text.replace('target = "src"\nadd_action = "before"', 'target = "nope"')
    with pytest.raises(SessionFileError, match=r"s.toml:\d+: rooms.a.nodes.pre.target: "
                                               "target 'nope' is no node of this room"):
        parse(wrong, tmp_path / "s.toml", reading)
    old = text.replace("version = 3", "version = 2")
    without = old.replace('target = "src"\n', "").replace('add_action = "before"\n', "")
    without = without.replace('add_action = "head"\n', "")
    assert {n.add_action for n in parse(without, tmp_path / "s.toml", reading)
            .rooms["a"].nodes.values()} == {None}  # version 2 kept no places: left alone


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b"]),
                       st.tuples(st.none() | st.floats(-120, 12, allow_nan=False),
                                 st.booleans()), max_size=2))
def test_a_master_gain_reads_back_from_a_session_file_and_an_unknown_one_stays_unknown(
        rooms: dict[str, tuple[float | None, bool]]) -> None:
    session = Session(rooms={room: RoomSpec(gain_db=gain, patterns_known=known)
                             for room, (gain, known) in rooms.items()})
    assert round_trip(session).rooms == session.rooms
