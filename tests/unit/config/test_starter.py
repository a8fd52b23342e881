"""`scorch init`'s starter config, and where scorch finds a config when none is named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorch.config.installation import load_config
from scorch.config.locate import DEFAULT_CONFIG, find_config, user_config
from scorch.config.starter import write_starter
from scorch.errors import ConfigError


def test_the_starter_is_the_built_in_room_commented_and_loads(tmp_path: Path) -> None:
    written = write_starter(tmp_path)
    assert written == tmp_path / "config.toml"
    text = written.read_text()
    assert text.startswith("# scorch's starter config")
    assert f"scorch run --config {written.resolve()}" in text
    assert text.endswith(DEFAULT_CONFIG.read_text())
    assert list(load_config(written).instances) == ["main"]


def test_a_new_folder_or_a_toml_path_is_taken(tmp_path: Path) -> None:
    assert write_starter(tmp_path / "a" / "b") == tmp_path / "a" / "b" / "config.toml"
    assert write_starter(tmp_path / "studio.toml") == tmp_path / "studio.toml"


def test_an_existing_config_is_never_written_over(tmp_path: Path) -> None:
    mine = tmp_path / "config.toml"
    mine.write_text("[instances.mine]\n")
    with pytest.raises(ConfigError, match="exists: scorch init never writes over"):
        write_starter(tmp_path)
    assert mine.read_text() == "[instances.mine]\n"


def test_an_unwritable_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="cannot write"):
        write_starter(tmp_path / "file" / "config.toml")


def test_no_config_named_means_here_then_the_users_then_the_built_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    assert user_config() == tmp_path / "conf" / "scorch" / "config.toml"
    assert find_config(None) == DEFAULT_CONFIG
    assert DEFAULT_CONFIG.is_file() and list(load_config(DEFAULT_CONFIG).instances) == ["main"]
    write_starter(user_config())
    assert find_config(None) == user_config()
    (tmp_path / "config.toml").write_text("[instances.here]\n")
    assert find_config(None) == Path("config.toml")
    assert find_config("other.toml") == Path("other.toml")
    assert os.fspath(find_config(None)) == "config.toml"
