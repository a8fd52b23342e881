"""Where the primitives keep a person's files: XDG's folders on Linux, as before platformdirs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scorch.primitives.sclang.launch import user_class_paths, user_conf_path
from scorch.primitives.synthdefs.library import default_cache_dir
from tests.support.skips import only_on

pytestmark = only_on(sys.platform == "linux", "the XDG layout is Linux's")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return tmp_path / "home"


def test_compiled_synthdefs_are_cached_under_xdg_cache_home_or_the_homes_cache(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_cache_dir() == home / ".cache" / "scorch" / "synthdefs"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_cache_dir() == tmp_path / "cache" / "scorch" / "synthdefs"


def test_sclang_conf_is_read_from_xdg_config_home_or_the_homes_config(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert user_conf_path() == home / ".config" / "SuperCollider" / "sclang_conf.yaml"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    conf = tmp_path / "config" / "SuperCollider" / "sclang_conf.yaml"
    assert user_conf_path() == conf
    conf.parent.mkdir(parents=True)
    conf.write_text("includePaths:\n    - /q/one\nexcludePaths:\n    - /q/two\n")
    assert user_class_paths() == (["/q/one"], ["/q/two"])
