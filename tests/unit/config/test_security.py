"""[files] and [security]: the folders path arguments reach, and what sclang's guard reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.config.allowed import OWN, folders, protected, sclang_guard
from scorch.config.installation import Config, parse_config
from scorch.errors import ConfigError
from scorch.primitives.sclang.guard import ENV, guard_path, guard_text

ROOM = "[instances.room]\n"


def config(tmp_path: Path, extra: str = "") -> Config:
    (tmp_path / "samples").mkdir(exist_ok=True)
    text = (f'state_dir = "{tmp_path / "state"}"\n[samples]\npaths = ["samples"]\n'
            f"{extra}{ROOM}")
    return parse_config(text, tmp_path / "config.toml")


def test_by_default_the_shell_is_closed_and_only_the_installations_own_folders_are_allowed(
        tmp_path: Path) -> None:
    found = config(tmp_path)
    assert found.security.sclang_shell is False and found.files.allow == ()
    allowed = folders(found)
    assert allowed.own == tuple(tmp_path / "state" / name for name in OWN)
    assert allowed.allowed == (tmp_path / "samples",)
    for own in (tmp_path / "state", tmp_path / "config.toml"):
        assert own in allowed.denied


def test_more_folders_are_allowed_relative_to_the_config_file(tmp_path: Path) -> None:
    found = config(tmp_path, '[files]\nallow = ["exports", "/srv/audio"]\n'
                             "[security]\nsclang_shell = true\n")
    allowed = folders(found)
    assert tmp_path / "exports" in allowed.allowed and Path("/srv/audio") in allowed.allowed
    assert found.security.sclang_shell is True


@pytest.mark.parametrize(("extra", "words"), [
    ('[files]\nallow = ["a\\nshell 1"]\n', "control character"),
    ("[files]\nallowed = []\n", "allow"),
    ('[security]\nsclang_shell = "yes"\n', "sclang_shell"),
    ("[security]\nshell = true\n", "sclang_shell"),
])
def test_a_bad_key_is_refused_saying_where(tmp_path: Path, extra: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        config(tmp_path, extra)


def test_scorchs_own_files_are_protected_whatever_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "start.scd").write_text("1")
    found = parse_config(f'state_dir = "{tmp_path / "state"}"\n[files]\nallow = ["/"]\n'
                         '[instances.room]\nstartup = "start.scd"\n', tmp_path / "config.toml")
    denied = protected(found)
    assert tmp_path / "start.scd" in denied and tmp_path / "config.toml" in denied
    allowed = folders(found)
    assert not allowed.allows(tmp_path / "config.toml")
    assert allowed.allows(tmp_path / "state" / "midi" / "x.mid")
    assert not allowed.allows(tmp_path / "state" / "control.sock")
    assert allowed.allows(Path("/srv/x.wav"))


def test_sclangs_guard_reads_a_file_named_after_the_config_that_says_what_is_allowed(
        tmp_path: Path) -> None:
    found = config(tmp_path, "[security]\nsclang_shell = true\n")
    env = sclang_guard(found)
    path = Path(env[ENV])
    assert path == guard_path(tmp_path / "config.toml", None)
    lines = path.read_text().splitlines()
    assert lines[0] == "shell 1"
    assert f"own {tmp_path / 'state' / 'midi'}" in lines
    assert f"allow {tmp_path / 'samples'}" in lines
    assert f"deny {tmp_path / 'state'}" in lines
    assert guard_path(tmp_path / "config.toml", "lobby") != path  # a host's own


def test_no_folder_can_smuggle_a_line_into_the_guards_file(tmp_path: Path) -> None:
    allowed = folders(config(tmp_path))
    bad = type(allowed)(own=(Path("/x\nshell 1"),), allowed=(), denied=())
    with pytest.raises(ValueError, match="control character"):
        guard_text(False, bad)


def test_a_reload_refuses_a_change_to_files_or_security(tmp_path: Path) -> None:
    from scorch.config.reload import config_changes
    from scorch.errors import InvalidRequest

    old = config(tmp_path)
    for extra, table in (("[security]\nsclang_shell = true\n", "[security]"),
                         ('[files]\nallow = ["/srv"]\n', "[files]")):
        with pytest.raises(InvalidRequest, match=table.replace("[", r"\[").replace("]", r"\]")):
            config_changes(old, config(tmp_path, extra))
