"""What sclang's guard allows, written where a room's sclang reads it as it starts.

scorch's classes close sclang's ways out of SuperCollider (shell commands, file
writes outside the allowed folders, class-library paths changed) to the code
scorch runs in it (``classes/guard/``). What they allow comes from a small file
written by scorch, whose path a room's sclang is given in its environment
(:data:`ENV`), read by the guard from the environment sclang *started* with
(``/proc/self/environ``: code cannot point it elsewhere with ``setenv``). The
file is named after the config's path, so a room's first sclang, started before
the config is read, is given the same path. The folders are written with their
symlinks followed; a line each::

    shell 0
    own /state/midi
    allow /samples
    deny /state
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from scorch.primitives.disk import cache_folder, write_atomically

if TYPE_CHECKING:
    from scorch.primitives.disk import Folders

#: The environment variable that names the guard's file to a room's sclang.
ENV = "SCORCH_GUARD"


def guard_env(config: Path | None, host: str | None) -> dict[str, str]:
    """The environment that names the guard's file to a room's sclang."""
    return {ENV: str(guard_path(config, host))}


def guard_path(config: Path | None, host: str | None) -> Path:
    """The guard's file for the config at ``config`` (None: the embedded one) on ``host``."""
    origin = f"{config.resolve() if config is not None else 'embedded'}\n{host or ''}"
    return cache_folder("guard") / f"{hashlib.sha1(origin.encode()).hexdigest()[:16]}.txt"


def guard_text(shell: bool, folders: Folders) -> str:
    """The file's content: whether the shell is allowed, then the folders by kind."""
    lines = [f"shell {int(shell)}"]
    for kind, paths in (("own", folders.own), ("allow", folders.allowed),
                        ("deny", folders.denied)):
        for path in paths:
            if any(ord(c) < 32 for c in str(path)):  # one line each: no folder hides a line
                raise ValueError(f"a folder's path holds a control character: {str(path)!r}")
            lines.append(f"{kind} {path}")
    return "\n".join(lines) + "\n"


def write_guard(path: Path, shell: bool, folders: Folders) -> Path:
    """Write the guard's file at ``path`` (when it says something else) and return it."""
    text = guard_text(shell, folders).encode()
    try:
        if path.read_bytes() == text:
            return path
    except OSError:
        pass
    write_atomically(path, text, durable=False)
    return path
