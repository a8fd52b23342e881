"""``scorch init``: a commented starter config.toml, never written over an existing file."""

from __future__ import annotations

import os
from pathlib import Path

from scorch.config.locate import DEFAULT_CONFIG, user_config
from scorch.errors import ConfigError

HEADER = """\
# scorch's starter config, written by `scorch init`. Edit it, then:
#   scorch run --config {path}      the rooms, until Ctrl-C
#   scorch mcp --config {path}      what Claude Desktop starts
#   scorch doctor --config {path}   checks this machine and this file
# With no --config, scorch reads ./config.toml, else {user}, else its built-in one.
#
"""


def starter_text(path: Path) -> str:
    """The starter config for ``path``: the built-in installation, commented."""
    return HEADER.format(path=path, user=user_config()) + DEFAULT_CONFIG.read_text(encoding="utf-8")


def write_starter(target: Path) -> Path:
    """Write the starter config at ``target`` (a folder gets ``config.toml``); return the file.

    Refuses (:class:`ConfigError`) when the file exists: a config is someone's work.
    """
    path = target / "config.toml" if target.is_dir() or not target.suffix else target
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot write {path}: {err.strerror}") from err
    try:
        # O_EXCL: even a file that appears between a check and the write is never replaced.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError as err:
        raise ConfigError(f"{path} exists: scorch init never writes over a config "
                          "(move it away, or give another folder)") from err
    except OSError as err:
        raise ConfigError(f"cannot write {path}: {err.strerror}") from err
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(starter_text(path.resolve()))
    return path
