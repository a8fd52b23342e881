"""Where the config file is: the one named, ./config.toml, the user's own, or the built-in one."""

from __future__ import annotations

import tomllib
from pathlib import Path

import platformdirs

from scorch import bundled

#: The built-in installation (package data; in a checkout, its own config.toml).
DEFAULT_CONFIG = bundled.default_config()


def user_config() -> Path:
    """The user's own config, where ``scorch init`` writes it (``~/.config/scorch`` on Linux)."""
    return platformdirs.user_config_path("scorch") / "config.toml"


def find_config(arg: str | Path | None) -> Path:
    """The config ``--config`` names: that file, else ./config.toml, else the user's own
    (:func:`user_config`), else the built-in one (one room that you hear)."""
    if arg:
        return Path(arg)
    for found in (Path("config.toml"), user_config()):
        if found.is_file():
            return found
    return DEFAULT_CONFIG


def room_names(path: Path, host: str | None) -> list[str]:
    """The ``[instances.NAME]`` of the TOML file at ``path`` that run on ``host``, read
    without checking anything (nothing when it does not read as a small TOML file)."""
    try:
        if path.stat().st_size > 1 << 20:
            return []
        rooms = tomllib.loads(path.read_text(encoding="utf-8")).get("instances", {})
        return [name for name, table in rooms.items()
                if isinstance(table, dict) and table.get("host") == host]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return []
