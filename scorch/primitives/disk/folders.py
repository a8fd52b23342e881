"""Turn a path argument into a file inside the folders the installation allows.

Every argument that names a file (``buffer load``, ``listen``, ``notes``,
``partner``...) goes through :meth:`Folders.file`: the path is made absolute
against the argument's own folder, its symlinks are followed, and it is refused
(:class:`~scorch.errors.PathRefused`, naming the argument and the allowed
folders) unless it lies inside them. scorch's own files (its state, cache and
class library, SuperCollider's own configuration) are never reached, whatever
folder is allowed around them: a folder of scorch's own state (``midi/``,
``recordings/``...) is allowed by itself. A file to write that is there
already is refused unless the request says ``overwrite``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scorch.errors import FileExists, PathRefused
from scorch.values import shorten

#: A character no path argument holds: NUL cuts a C string short, a newline or another
#: control character is a mistake or a trick (``"take.wav\\n"``), never a file's name.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Characters of a refused path shown: a whole path, never a flood.
SHOWN_PATH = 400


@dataclass(frozen=True)
class Folders:
    """Where path arguments may lead, each folder absolute with its symlinks followed."""

    own: tuple[Path, ...]
    """Folders of scorch's state that files are read from and written to (``midi/``...)."""
    allowed: tuple[Path, ...]
    """More folders the installation allows: the sample folders and ``[files] allow``."""
    denied: tuple[Path, ...]
    """scorch's own files (its state, cache, class library) and SuperCollider's
    configuration: never reached, even inside an allowed folder (``own`` aside)."""

    @classmethod
    def of(cls, own: Sequence[Path], allowed: Sequence[Path], denied: Sequence[Path]) -> Folders:
        """Folders from paths as configured (``~`` expanded, symlinks followed)."""
        return cls(_real_all(own), _real_all(allowed), _real_all(denied))

    def file(self, argument: str, given: str, bases: Sequence[Path], *, write: bool = False,
             overwrite: bool = False) -> Path:
        """The file ``given`` names, absolute, inside the allowed folders; else PathRefused.

        A relative path is taken in the first of ``bases`` that holds it (the first of
        them when none does). ``write``: a file there already is refused (FileExists)
        unless ``overwrite``.
        """
        bad = _CONTROL.search(given)
        if bad is not None or not given.strip():
            what = ("is empty" if bad is None else
                    f"holds a control character ({bad.group()!r} at character {bad.start() + 1})")
            raise _refused(argument, f"{argument}: {shorten(given, SHOWN_PATH)} {what}: not a "
                           "file's path")
        path = self._place(argument, given, bases)
        if not self.allows(path):
            raise _refused(argument, self.outside(argument, given, path))
        if write and not overwrite and os.path.lexists(path):
            refused = FileExists(f"{argument}: {path} exists already: give overwrite = true to "
                                 "write over it, or another path")
            refused.argument = argument
            raise refused
        return path

    def allows(self, path: Path) -> bool:
        """Whether ``path`` (absolute, symlinks followed) lies inside an allowed folder."""
        if any(path.is_relative_to(folder) for folder in self.own):
            return True
        if any(path.is_relative_to(folder) for folder in self.denied):
            return False
        return any(path.is_relative_to(folder) for folder in self.allowed)

    def outside(self, argument: str, given: str, path: Path) -> str:
        """Why ``path`` is refused, with the folders that are allowed."""
        places = ", ".join(str(folder) for folder in (*self.own, *self.allowed))
        mine = (f" (one of scorch's own files, which no path reaches: {path})"
                if any(path.is_relative_to(folder) for folder in self.denied) else
                f" (it leads to {path})" if str(path) != given else "")
        return (f"{argument}: {shorten(given, SHOWN_PATH)} is outside the folders this "
                f"installation allows{mine}; allowed: {places or 'none'}. Add a folder to "
                "[files] allow in the config to reach it")

    def _place(self, argument: str, given: str, bases: Sequence[Path]) -> Path:
        path = Path(os.path.expanduser(given))
        if not path.is_absolute():
            if not bases:
                raise _refused(argument, f"{argument}: {shorten(given, SHOWN_PATH)} is relative, "
                               "and there is no folder to take it in: give an absolute path")
            candidates = [base / path for base in bases]
            path = next((c for c in candidates if os.path.lexists(c)), candidates[0])
        return Path(os.path.realpath(path))


def _real_all(paths: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(Path(os.path.realpath(os.path.expanduser(p))) for p in paths)


def _refused(argument: str, message: str) -> PathRefused:
    refused = PathRefused(message)
    refused.argument = argument
    return refused
