"""One docs index per SuperCollider installation, shared by every config on the machine.

The index depends only on SuperCollider (the sclang binary, its class library
and its help) and on scorch's index format, never on a config: it lives in the
user cache folder (``$XDG_CACHE_HOME/scorch/docs``), in a file named after what
decides its sources (:func:`index_path`). The stamp in its meta says whether
those sources changed since (:mod:`scorch.knowledge.sources`).

A published index is never written in place: a builder holds the lock file
beside it (:func:`build_lock`), writes a new file and renames it over the old
one (:func:`publish`), so a reader, in this process or in another installation's,
keeps the file it opened, whole, until it opens the new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import platformdirs

from scorch.knowledge.docs_index import INDEX_SCHEMA
from scorch.knowledge.sources import resolve_binary
from scorch.primitives.disk import cache_folder
from scorch.primitives.sclang import user_conf_path


def default_cache_dir() -> Path:
    """Return where docs indexes are kept (``$XDG_CACHE_HOME/scorch/docs``)."""
    return cache_folder("docs")


def index_path(sclang: str, help_dir: Path | None, cache_dir: Path | None = None) -> Path:
    """Return the index file of the SuperCollider that ``sclang`` runs, with ``help_dir``.

    The name hashes what decides the index's sources: the resolved binary (its
    library folders and help are beside it), the help folder a config names, the
    person's ``sclang_conf.yaml`` and Extensions folder (where quarks and their own
    classes come from), and the index format.
    """
    key = "\0".join((
        INDEX_SCHEMA, resolve_binary(sclang), str(help_dir) if help_dir is not None else "",
        str(user_conf_path()), str(platformdirs.user_data_path("SuperCollider"))))
    name = hashlib.sha256(key.encode()).hexdigest()[:24]
    return (cache_dir if cache_dir is not None else default_cache_dir()) / f"{name}.sqlite"


@contextlib.contextmanager
def build_lock(index: Path, timeout: float) -> Iterator[None]:
    """Hold the index's lock file: one builder at a time, across processes.

    The lock is an ``flock``, so a builder that dies releases it. Raises
    TimeoutError when another builder holds it longer than ``timeout`` seconds.
    """
    index.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(index.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"another docs build holds {index}'s lock") from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)


def scratch_path(index: Path) -> Path:
    """Return the file a builder (this process) writes the next index to.

    Those of builders killed on the way (scorch stopped) are removed first: the
    caller holds the build lock, so no other builder is writing one.
    """
    for abandoned in index.parent.glob(f".{index.stem}.*.building"):
        abandoned.unlink(missing_ok=True)
    return index.with_name(f".{index.stem}.{os.getpid()}.building")


def publish(scratch: Path, index: Path) -> None:
    """Rename ``scratch`` over ``index`` in one step (the caller holds the build lock)."""
    with open(scratch, "rb") as written:
        os.fsync(written.fileno())
    os.replace(scratch, index)
