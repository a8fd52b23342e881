"""Write files so that a crash leaves the old content or the new, never half of either."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_folder(kind: str) -> Path:
    """Where scorch caches ``kind`` (``$XDG_CACHE_HOME/scorch/KIND`` or the platform's own):
    what can be built again from what is installed (SynthDefs, docs indexes, native code)."""
    import platformdirs

    return platformdirs.user_cache_path("scorch") / kind


def write_atomically(path: Path, data: bytes, durable: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``.

    ``durable`` also fsyncs the file and its directory, so the new content
    survives a power cut too (caches can skip that).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            with contextlib.suppress(OSError):  # some file systems refuse a directory fsync
                os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_json_atomically(path: Path, document: Any, durable: bool = True) -> None:
    """Write ``document`` as indented JSON with :func:`write_atomically`."""
    write_atomically(path, json.dumps(document, indent=2).encode("utf-8"), durable)
