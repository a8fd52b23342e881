"""Session, config and scenes files that are huge, many-keyed or deep: refused where they
break a limit, quickly, saying where; and a good file read right after in the same process."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scorch.app import scenes
from scorch.app.scenes import FILENAME, SCENE_FILE_LIMITS, SceneDirector
from scorch.app.sessions import Reading, parse, render
from scorch.config.installation import parse_config
from scorch.errors import ConfigError, InvalidRequest, SessionFileError
from scorch.primitives.input.toml_limits import MAX_BYTES, MAX_DEPTH, MAX_ITEMS
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.session import NodeSpec, RoomSpec, Session
from scorch.wire.limits import Limits

#: How long a refusal may take: a pass over the text, not a parse of it.
QUICK = 2.0

HOSTILE_TOML = {
    "huge": ("version = 3\nnote = \"" + "x" * MAX_BYTES + "\"\n",
             rf"{MAX_BYTES + 22} bytes: more than the {MAX_BYTES}"),
    "many-keyed": ("version = 3\n" + "".join(f"k{i} = {i}\n" for i in range(MAX_ITEMS + 5)),
                   rf"line {MAX_ITEMS + 1}: more than {MAX_ITEMS} keys, items and tables"),
    "many items": ("version = 3\nx = [" + "0," * (4 * MAX_ITEMS) + "]\n",
                   rf"line 2: more than {MAX_ITEMS} keys"),
    "deep": ("version = 3\n\nx = " + "[" * 100_000 + "]" * 100_000 + "\n",
             rf"line 3: nested more than {MAX_DEPTH} levels deep"),
}


@pytest.fixture
def reading(tmp_path: Path, library: SynthDefLibrary) -> Reading:
    return Reading(parse_config("[instances.a]\n", tmp_path / "c.toml"), library)


@pytest.mark.parametrize("kind", HOSTILE_TOML)
def test_a_hostile_session_file_is_a_located_error_and_a_good_one_loads_after(
        kind: str, reading: Reading, tmp_path: Path) -> None:
    text, message = HOSTILE_TOML[kind]
    started = time.perf_counter()
    with pytest.raises(SessionFileError, match=rf"{tmp_path}/s.toml: invalid TOML: {message}"):
        parse(text, tmp_path / "s.toml", reading)
    assert time.perf_counter() - started < QUICK
    good = Session(rooms={"a": RoomSpec(nodes={"hum": NodeSpec("sine", {"freq": 110.0})})})
    assert parse(render(good, "s"), tmp_path / "s.toml", reading).rooms == good.rooms


@pytest.mark.parametrize("kind", HOSTILE_TOML)
def test_a_hostile_config_file_is_a_located_error_and_a_good_one_loads_after(
        kind: str, tmp_path: Path) -> None:
    text, message = HOSTILE_TOML[kind]
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=rf"{tmp_path}/c.toml: invalid TOML: {message}"):
        parse_config(text, tmp_path / "c.toml")
    assert time.perf_counter() - started < QUICK
    assert list(parse_config("[instances.a]\n", tmp_path / "c.toml").instances) == ["a"]


def director(state: Path, views: dict[str, Any] | None = None) -> SceneDirector:
    """A director of the scenes in ``state``: rooms are ``views``' names, SynthDefs none."""
    state.mkdir(exist_ok=True)
    (state / "defs").mkdir(exist_ok=True)
    return SceneDirector(views or {}, SynthDefLibrary(state / "defs"),  # type: ignore[arg-type]
                         resolve=lambda selector: sorted(views or {}),
                         set_values=lambda room, values: [], state_dir=state)


def good_scenes() -> str:
    return json.dumps({"version": 1, "scenes": {"dusk": {
        "saved_at": 1.0, "rooms": ["a"], "values": {"a": {"hum": {"freq": 110.0}}}}}})


def hostile_scenes() -> dict[str, tuple[str, str]]:
    items = SCENE_FILE_LIMITS.items
    assert items is not None
    values = ", ".join(f'"p{i}": 0.5' for i in range(items // 3 + 1))
    return {
        "many-keyed": ('{"version": 1, "scenes": {"big": {"values":\n{"a": {"n": {'
                       + values + "}}}}}}", f"line 2: more than {items} keys, items"),
        "deep": ('{"version": 1,\n"scenes": ' + "[" * 100_000 + "]" * 100_000 + "}",
                 f"line 2: nested deeper than {SCENE_FILE_LIMITS.depth} levels"),
    }


@pytest.mark.parametrize("kind", ["many-keyed", "deep"])
def test_a_hostile_scenes_file_is_set_aside_saying_where_and_a_good_one_loads_after(
        kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text, message = hostile_scenes()[kind]
    path = tmp_path / "state" / FILENAME
    path.parent.mkdir()
    path.write_text(text)
    started = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger=scenes.__name__):
        assert director(tmp_path / "state").names() == []
    assert time.perf_counter() - started < QUICK
    assert message in caplog.text and str(path) in caplog.text
    assert path.with_suffix(".corrupt").read_text() == text  # kept, for the person to see
    path.write_text(good_scenes())
    assert director(tmp_path / "state").names() == ["dusk"]


def test_a_save_the_next_start_could_not_read_is_refused_and_nothing_is_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A small limit stands for the real one: the same check, without a million params.
    monkeypatch.setattr(scenes, "SCENE_FILE_LIMITS", Limits(size=1 << 20, depth=16, items=120))
    node = SimpleNamespace(name="hum", synthdef="sine",
                           params={f"p{i}": 0.5 for i in range(8)})
    views = {"a": SimpleNamespace(nodes={"hum": node})}
    scenes_of = director(tmp_path / "state", views)
    saved = []
    with pytest.raises(InvalidRequest, match=r"scene 's\d' not saved: the scenes file would "
                                             r"be more than 120 keys, items and strings"):
        for i in range(10):
            scenes_of.save(f"s{i}", "*")
            saved.append(f"s{i}")
    assert saved and scenes_of.names() == saved
    assert director(tmp_path / "state", views).names() == saved  # the file holds them all
    scenes_of.save(saved[0], "*")  # saving again over a scene it has still fits
