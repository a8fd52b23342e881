"""Sound files on disk: resolve a path against the sample folders, check it, search by name.

Whether a file is audio is scsynth's to say (its ``/b_allocRead`` answers ``/fail``
for anything libsndfile cannot read); this module checks what scsynth cannot say
well: that the file exists, is a regular file, and is not over the size limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scorch.errors import InvalidRequest, SampleNotFound, SampleRejected

#: Extensions of the formats scsynth's libsndfile reads, for search (loading tries any file).
AUDIO_EXTENSIONS = frozenset({
    ".wav", ".wave", ".aif", ".aiff", ".aifc", ".flac", ".ogg", ".oga", ".caf", ".w64",
    ".rf64", ".au", ".snd", ".opus", ".mp3",
})
#: Entries a search looks at before it stops: a home folder given as a sample folder
#: must not keep a call busy for minutes.
SEARCH_SCAN_LIMIT = 200_000
MB = 1024 * 1024


@dataclass(frozen=True)
class SampleFile:
    """A sound file found in a sample folder."""

    path: Path
    folder: Path
    size: int

    @property
    def relative(self) -> str:
        """The path relative to its sample folder (what `buffer load` accepts)."""
        return str(self.path.relative_to(self.folder))


def resolve_sample(text: str, folders: list[Path], max_bytes: int) -> Path:
    """The file ``text`` names: absolute, or relative to the first sample folder holding it.

    SampleNotFound says where it looked; SampleRejected says why a file is refused.
    """
    if not text.strip():
        raise InvalidRequest("path is empty: give a sound file's path (absolute, or relative "
                             "to a [samples] folder)")
    given = Path(text).expanduser()
    if given.is_absolute():
        candidates = [given]
    elif folders:
        candidates = [folder / given for folder in folders]
    else:
        raise SampleNotFound(f"{text!r} is relative and the config has no [samples] paths: "
                             "give an absolute path, or add sample folders to the config")
    found = next((c for c in candidates if c.exists()), None)
    if found is None:
        where = ", ".join(str(c.parent) for c in candidates)
        raise SampleNotFound(f"no sound file {text!r} (looked in {where}); "
                             "`buffer search` finds samples by name")
    if not found.is_file():
        raise SampleRejected(f"{found} is not a regular file (a folder?): give a sound file")
    if not os.access(found, os.R_OK):
        raise SampleRejected(f"{found} is not readable (permissions)")
    size = found.stat().st_size
    if size > max_bytes:
        raise SampleRejected(f"{found} is {size / MB:.1f} MB, over the limit of "
                             f"{max_bytes / MB:.3g} MB ([samples] max_mb in the config)")
    return found.resolve()


def search_samples(query: str, folders: list[Path], limit: int = 50) -> list[SampleFile]:
    """Sound files whose path (relative to its folder) holds every word of ``query``.

    Case-insensitive; folders in order, in each a folder's files (sorted) before its
    subfolders'; at most ``limit`` files.
    """
    words = query.lower().split()
    found: list[SampleFile] = []
    scanned = 0
    for folder in folders:
        if not folder.is_dir():
            continue
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                scanned += 1
                if scanned > SEARCH_SCAN_LIMIT:
                    return found
                path = Path(root) / name
                if path.suffix.lower() not in AUDIO_EXTENSIONS:
                    continue
                relative = str(path.relative_to(folder)).lower()
                if all(word in relative for word in words):
                    try:
                        size = path.stat().st_size
                    except OSError:
                        continue
                    found.append(SampleFile(path, folder, size))
                    if len(found) >= limit:
                        return found
    return found
