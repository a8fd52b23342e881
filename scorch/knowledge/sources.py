"""Where the docs come from, and a stamp that changes when any of it changes.

The docs index is made from sclang's class library and the installed help. To
know whether it is still current without starting sclang (which takes a second
and a core), :func:`stamp` hashes the sclang binary, the person's
``sclang_conf.yaml`` (quarks add include paths there), and the path, size and
modification time of every ``.sc`` file of the library's folders and every
``.schelp`` file of the help folder: a few thousand ``stat`` calls. A changed
stamp means "dump the library again"; the index itself is rebuilt only if the
dump or the help then differ (:meth:`DocsIndex.needs_rebuild`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from scorch.knowledge.introspect import Platform
from scorch.primitives.sclang import user_conf_path

#: Where SuperCollider keeps its help when sclang cannot say (it did not start).
KNOWN_HELP_DIRS = (
    "/usr/share/SuperCollider/HelpSource",
    "/usr/local/share/SuperCollider/HelpSource",
    "/Applications/SuperCollider.app/Contents/Resources/HelpSource",
    "/Applications/SuperCollider/SuperCollider.app/Contents/Resources/HelpSource",
)


@dataclass(frozen=True)
class Sources:
    """The files one docs build was made from."""

    sclang: str
    """The sclang binary, its path resolved."""
    conf: str
    """The person's ``sclang_conf.yaml`` (it may not exist)."""
    class_dirs: tuple[str, ...]
    exclude_dirs: tuple[str, ...]
    help_dir: str | None

    def to_json(self) -> str:
        """Return the sources as JSON, for the index's meta table."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Sources:
        """Read :meth:`to_json`'s output; raise ValueError for anything else."""
        raw = json.loads(text)
        try:
            return cls(sclang=str(raw["sclang"]), conf=str(raw["conf"]),
                       class_dirs=tuple(str(d) for d in raw["class_dirs"]),
                       exclude_dirs=tuple(str(d) for d in raw["exclude_dirs"]),
                       help_dir=None if raw["help_dir"] is None else str(raw["help_dir"]))
        except (KeyError, TypeError) as err:
            raise ValueError(f"not a sources record: {err!r}") from err


def sources_of(sclang: str, platform: Platform | None, help_dir: Path | None) -> Sources:
    """Return the sources of a build from sclang's own ``platform`` (None: it did not start)."""
    return Sources(
        sclang=resolve_binary(sclang), conf=str(user_conf_path()),
        class_dirs=platform.class_dirs() if platform is not None else (),
        exclude_dirs=platform.exclude_paths if platform is not None else (),
        help_dir=str(help_dir) if help_dir is not None else None)


def resolve_binary(name: str) -> str:
    """Return the full, resolved path of the program ``name`` (itself if it is not found)."""
    found = shutil.which(name)
    return str(Path(found).resolve()) if found else name


def find_help_dir(sclang: str = "sclang") -> Path | None:
    """Return the HelpSource folder of the SuperCollider beside ``sclang``, or a known one."""
    binary = Path(resolve_binary(sclang))
    candidates = [binary.parent.parent / "share" / "SuperCollider" / "HelpSource"]
    if sys.platform == "darwin":
        candidates.append(binary.parent.parent / "Resources" / "HelpSource")
    candidates += [Path(p) for p in KNOWN_HELP_DIRS]
    return next((path for path in candidates if path.is_dir()), None)


def stamp(sources: Sources) -> str:
    """Return a hash of every file the sources name: what they are, their size and time."""
    digest = hashlib.sha256(b"scorch-docs-sources-v1")
    for path in (sources.sclang, sources.conf):
        digest.update(f"\0{path}\0{_stat(Path(path))}".encode())
    excluded = tuple(Path(d) for d in sources.exclude_dirs)
    for directory in sources.class_dirs:
        digest.update(f"\0dir {directory}".encode())
        for path, facts in _files(Path(directory), ".sc", excluded):
            digest.update(f"\0{path}\0{facts}".encode())
    if sources.help_dir is not None:
        digest.update(f"\0help {sources.help_dir}".encode())
        for path, facts in _files(Path(sources.help_dir), ".schelp", ()):
            digest.update(f"\0{path}\0{facts}".encode())
    return digest.hexdigest()[:32]


def _stat(path: Path) -> str:
    try:
        facts = path.stat()
    except OSError:
        return "missing"
    return f"{facts.st_size}:{facts.st_mtime_ns}"


def _files(root: Path, suffix: str, excluded: tuple[Path, ...]) -> Iterator[tuple[str, str]]:
    """Yield (path, size:mtime) of the files under ``root`` ending in ``suffix``, sorted.

    Symbolic links are followed (quarks are often linked in), each real folder once.
    """
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen or any(Path(folder).is_relative_to(e) for e in excluded):
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        for name in files:
            if name.endswith(suffix):
                path = os.path.join(folder, name)
                found.append((path, _stat(Path(path))))
    # A folder that does not exist (yet) is part of the stamp too: creating it changes it.
    if not found and not root.is_dir():
        found.append((str(root), "missing"))
    yield from sorted(found)
