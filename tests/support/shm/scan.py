"""/dev/shm and /proc as the watcher reads them: segments, who maps them, the suite's processes.

Read straight from /proc (a few hundred small reads a look, some 20 ms on a
quiet machine): psutil's memory maps parse smaps, ten times the text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from scorch.primitives.scsynth.server import SHARED_MEMORY
from tests.support.shm.ledger import WATCHED, SegmentId

_PROC = Path("/proc")


def segments(folder: Path = SHARED_MEMORY) -> dict[SegmentId, int]:
    """The watched segments in ``folder`` now, with their sizes."""
    found = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return {}
    for entry in entries:
        if WATCHED.fullmatch(entry.name):
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # removed while listed
            found[SegmentId(entry.name, info.st_ino)] = info.st_size
    return found


def processes() -> dict[int, int]:
    """Every living process now (zombies map nothing and run nothing), with its parent."""
    parents = {}
    for name in os.listdir(_PROC):
        if name.isdigit():
            try:
                with open(_PROC / name / "stat", "rb") as stat:
                    state, parent = stat.read().rsplit(b")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue  # ended while listed
            if state != b"Z":
                parents[int(name)] = int(parent)
    return parents


def below(root: int, parents: dict[int, int]) -> set[int]:
    """``root`` and every process under it."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def mappers(pids: Iterable[int], folder: Path = SHARED_MEMORY) -> dict[str, set[int]]:
    """For each watched segment's path in ``folder``, the pids among ``pids`` that map it."""
    prefix = str(folder).encode() + b"/"
    found: dict[str, set[int]] = {}
    for pid in pids:
        try:
            with open(_PROC / str(pid) / "maps", "rb") as maps:
                text = maps.read()
        except OSError:
            continue  # ended, or not ours to read
        if prefix not in text:
            continue
        for line in text.splitlines():
            at = line.find(prefix)
            if at >= 0:
                # " (deleted)": a segment unlinked while mapped is no longer a file here.
                name = line[at + len(prefix):].decode(errors="replace")
                if WATCHED.fullmatch(name):
                    found.setdefault(name, set()).add(pid)
    return found


def mapped_by(pids: Iterable[int], folder: Path = SHARED_MEMORY) -> set[Path]:
    """The watched segments that ``pids`` map now (before a test kills them)."""
    return {folder / name for name in mappers(pids, folder)}
