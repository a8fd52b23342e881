"""The files a room needs that are not Python: shipped inside the package.

In a checkout, ``synthdefs``, ``config.toml`` and ``docs`` here are links to the
repository's own (one copy, edited where it always was); a built wheel or sdist
holds the files themselves. Either way they are read from here, through
:mod:`importlib.resources`, so a scorch installed anywhere boots a room.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def folder(package: str, name: str) -> Path:
    """The real folder ``name`` of ``package`` (sclang and scsynth need a path on disk)."""
    found = Path(str(files(package) / name))
    if not found.is_dir():
        raise FileNotFoundError(f"{package} has no folder {name!r} (looked in {found}): "
                                "is scorch installed whole?")
    return found


def synthdefs() -> Path:
    """The built-in SynthDef sources (``synthdefs/*.scd``)."""
    return folder(__name__, "synthdefs")


def default_config() -> Path:
    """The built-in installation: one room that you hear."""
    return Path(str(files(__name__) / "config.toml"))


def docs() -> Path:
    """The Markdown docs (``docs/*.md``)."""
    return folder(__name__, "docs")

__all__ = ["default_config", "docs", "folder", "synthdefs"]
