"""Where the config file is: the one named, ./config.toml, the user's own, or the built-in one."""

from __future__ import annotations

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
