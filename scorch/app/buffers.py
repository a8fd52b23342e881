"""Sample buffers: sound files read into the rooms' scsynths, one bufnum across rooms."""

from __future__ import annotations

import re
import time
from pathlib import Path

from actors.room import load_timeout
from scorch.app.models import BufferInfo, SampleInfo
from scorch.app.tree import ASK, RESTORE_WAIT, Tree
from scorch.config import folders
from scorch.errors import BufferNotFound, InvalidRequest
from scorch.primitives.disk import MB, resolve_sample, search_samples
from scorch.state import SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_COUNT, BufferState


class Buffers:
    """Load, free, list and search sample buffers (any thread)."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree

    def load(self, selector: str, path: str, name: str | None = None,
             bufnum: int | None = None) -> list[BufferInfo]:
        """Read a sound file into a buffer on each room, under one bufnum on all of them.

        ``path``: relative to the ``[samples]`` folders, or absolute; either way inside the
        folders the installation allows (PathRefused naming ``path`` else). ``name``: the
        file's stem by default. A name already loaded keeps its bufnum.
        """
        config = self._tree.config
        if path.strip():  # an empty one is resolve_sample's to refuse, saying what to give
            checked = folders(config).file("path", path, config.sample_folders())
            # one that is not there is too, saying where it looked
            path = str(checked) if checked.exists() else path
        found = resolve_sample(path, config.sample_folders(), int(config.samples.max_mb * MB))
        name = name or buffer_name(found)
        names = self._tree.resolve(selector)
        if bufnum is None:
            bufnum = self._common_bufnum(names, name)
        loaded = []
        for room in names:
            self._tree.await_ready([room], time.monotonic() + RESTORE_WAIT, "buffer load")
            state = self._tree.ask(room, lambda p: p.buffers.load(name, str(found), bufnum),
                                   timeout=load_timeout([str(found)]) + ASK)
            loaded.append(buffer_row(room, state))
        return loaded

    def _common_bufnum(self, names: list[str], name: str) -> int | None:
        """A bufnum free on every room (or the one they all give ``name``), else None."""
        views = self._tree.views
        held = {views[n].buffers[name].bufnum for n in names if name in views[n].buffers}
        if len(held) == 1 and all(name in views[n].buffers for n in names):
            return held.pop()
        used = {b.bufnum for n in names for b in views[n].buffers.values() if b.name != name}
        free = [b for b in range(SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_BASE + SAMPLE_BUFFER_COUNT)
                if b not in used]
        return free[0] if free else None

    def free(self, selector: str, name: str) -> list[BufferInfo]:
        """Free buffer ``name`` on every room of ``selector`` that holds it."""
        views = self._tree.views
        rooms = self._tree.resolve(selector)
        self._tree.await_ready(rooms, time.monotonic() + RESTORE_WAIT, "buffer free")
        names = [n for n in rooms if name in views[n].buffers]
        if not names:
            known = sorted({b for n in self._tree.resolve(selector) for b in views[n].buffers})
            raise BufferNotFound(f"no buffer {name!r} on {selector!r}; buffers: "
                                 f"{', '.join(known) or '(none)'}", name=name, known=known)
        return [buffer_row(room, self._tree.ask(room, lambda p: p.buffers.free(name)))
                for room in names]

    def loaded(self, selector: str = "*") -> list[BufferInfo]:
        """Every loaded buffer of the rooms ``selector`` names, by room then bufnum."""
        views = self._tree.views
        return [buffer_row(room, buf) for room in self._tree.resolve(selector)
                for buf in sorted(views[room].buffers.values(), key=lambda b: b.bufnum)]

    def search(self, query: str, limit: int = 50) -> list[SampleInfo]:
        """Sound files in the ``[samples]`` folders whose path holds every word of ``query``."""
        folders = self._tree.config.sample_folders()
        if not folders:
            raise InvalidRequest("the config has no [samples] paths to search: add "
                                 '`[samples] paths = ["/folder/of/samples"]`')
        return [SampleInfo(path=str(f.path), relative=f.relative, folder=str(f.folder),
                           megabytes=round(f.size / MB, 3))
                for f in search_samples(query, folders, limit)]


def buffer_name(path: Path) -> str:
    """A buffer name from a file's stem: letters, digits, _ and - only, starting with a letter."""
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", path.stem)[:64]
    return stem if stem[:1].isalpha() else f"s{stem}"[:64]


def buffer_row(room: str, buf: BufferState) -> BufferInfo:
    """One buffer as the API shows it."""
    return BufferInfo(instance=room, name=buf.name, bufnum=buf.bufnum, frames=buf.frames,
                      channels=buf.channels, sample_rate=buf.sample_rate,
                      seconds=round(buf.seconds, 6), path=buf.path)
