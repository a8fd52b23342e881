"""How an sclang of a room is launched: its command line, its environment, its class
library's config; and the first sclang of each room, launched early.

A room's boot waits mostly for its sclang to compile the class library (seconds
on a loaded machine), while ``scorch run`` spends most of a second importing its
own modules before the first room boots. :class:`EarlySclang` starts each room's
first sclang as soon as the config is read, so that the two overlap: the room
takes the process when its boot comes to start sclang, and one that no room took
is stopped.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import platformdirs

from scorch import bundled
from scorch.primitives.disk import write_atomically
from scorch.primitives.system import Console, ManagedProcess, free_udp_port, spawn

log = logging.getLogger(__name__)

#: sclang as root crashes in QtWebEngine without these, even with no window.
SCLANG_ENV = {"QTWEBENGINE_DISABLE_SANDBOX": "1", "QT_QPA_PLATFORM": "offscreen",
              # Two QtWebEngineProc helpers of ~45 MB each per sclang otherwise.
              "QTWEBENGINE_CHROMIUM_FLAGS": "--single-process"}
#: The classes scorch adds to every sclang's class library.
CLASSES = bundled.folder("scorch.primitives.sclang", "classes")
#: The guard among them (sclang's ways out closed), alone for a headless sclang that runs
#: code a front end sent (a render's Score).
GUARD_CLASSES = CLASSES / "guard"


def user_conf_path() -> Path:
    """Where sclang reads the person's ``sclang_conf.yaml`` (``$XDG_CONFIG_HOME/SuperCollider``)."""
    return platformdirs.user_config_path("SuperCollider") / "sclang_conf.yaml"


def user_class_paths(conf: Path | None = None) -> tuple[list[str], list[str]]:
    """The include and exclude paths of the user's own ``sclang_conf.yaml`` (quarks live there)."""
    if conf is None:
        conf = user_conf_path()
    try:
        text = conf.read_text(encoding="utf-8")
    except OSError:
        return [], []
    found: dict[str, list[str]] = {"includePaths": [], "excludePaths": []}
    section = None
    for line in text.splitlines():
        key = re.match(r"^(\w+):", line)
        if key:
            section = key.group(1) if key.group(1) in found else None
            continue
        item = re.match(r"^\s*-\s*(.+?)\s*$", line)
        if section and item:
            found[section].append(item.group(1).strip("'\""))
    return found["includePaths"], found["excludePaths"]


def class_library_conf(scorch_classes: bool = True) -> Path:
    """An ``sclang_conf.yaml`` with the user's include paths, plus scorch's classes.

    ``-l`` replaces the user's own file, so its paths are copied in. Named after
    its content, so every sclang of this process (and the next) shares one file.
    Without ``scorch_classes`` it is the user's class library as it is (a headless
    script must be free to ``0.exit``, which scorch's classes refuse in a room).
    """
    include, exclude = user_class_paths()
    if scorch_classes:
        include = [*include, str(CLASSES)]
    return conf_file(include, exclude)


def guard_library_conf() -> Path:
    """An ``sclang_conf.yaml`` of the standard class library and scorch's guard alone."""
    return conf_file([str(GUARD_CLASSES)], [])


def conf_folder() -> Path:
    """Where the class library configurations are written (this user's, in the temp folder)."""
    return Path(tempfile.gettempdir()) / f"scorch-{os.getuid()}"


def conf_file(include: list[str], exclude: list[str]) -> Path:
    """An ``sclang_conf.yaml`` with these include and exclude paths, named after its content."""
    lines = ["includePaths:" if include else "includePaths: []", *(f"  - {p}" for p in include),
             "excludePaths:" if exclude else "excludePaths: []", *(f"  - {p}" for p in exclude),
             "postInlineWarnings: false"]
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    path = conf_folder() / f"sclang_conf-{digest}.yaml"
    if not path.exists():
        write_atomically(path, text.encode(), durable=False)
    return path


def sclang_argv(binary: str, lang_port: int) -> list[str]:
    """The command line of a room's sclang listening on ``lang_port``."""
    return [binary, "-i", "scorch", "-u", str(lang_port), "-l", str(class_library_conf())]


def sclang_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a room's sclang gets on top of scorch's own environment."""
    return {**SCLANG_ENV, **(extra or {})}


class EarlySclang:
    """A room's first sclang, started before scorch's own start-up was done.

    The room's boot takes it (:meth:`take`, in the room's actor thread) when it would
    start the same command line with the same environment; :meth:`discard` stops it
    when no room took it. Start it from a thread that lives as long as scorch: the
    process dies with the thread that forked it.
    """

    def __init__(self, binary: str = "sclang", extra_env: Mapping[str, str] | None = None) -> None:
        self.lang_port = free_udp_port()
        self.argv = sclang_argv(binary, self.lang_port)
        self.env = sclang_env(extra_env)
        self.process = spawn(self.argv, env=self.env, stdin=True, stderr_apart=True)
        self.started_at = time.monotonic()
        self._lock = threading.Lock()
        self._done = False

    def waiting(self) -> bool:
        """True while the process runs and nobody took or discarded it."""
        return not self._done and self.process.poll() is None

    def take(self, argv: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes] | None:
        """The process, once, if it still runs and is what ``argv`` and ``env`` would start."""
        with self._lock:
            if self._done:
                return None
            self._done = True
        if argv == self.argv and dict(env) == self.env and self.process.poll() is None:
            return self.process
        self._stop()
        return None

    def discard(self) -> None:
        """Stop the process unless a room took it."""
        with self._lock:
            if self._done:
                return
            self._done = True
        self._stop()

    def _stop(self) -> None:
        """Stop it as every process of scorch's is stopped (its group, signal by signal),
        what it printed read to nowhere; its pipes closed."""
        watched = ManagedProcess("sclang", self.argv, Console(), env=self.env, stdin=True,
                                 on_output=lambda chunk: [])
        watched.start(adopt=self.process)
        watched.stop(polite=watched.close_stdin, grace=0.5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def start_early(rooms: Iterable[str], extra_env: Mapping[str, str] | None = None,
                ) -> dict[str, EarlySclang]:
    """Each room's first sclang, started now (its class library takes seconds to compile),
    with ``extra_env`` as the room will give it (its guard's file: ``guard.guard_env``).

    Call it from the thread that lives as long as scorch (the main thread).
    """
    early = {}
    for name in rooms:
        try:
            early[name] = EarlySclang(extra_env=extra_env)
        except OSError as err:  # the room's boot starts one again, and says what failed
            log.debug("could not start %s's sclang early: %s", name, err)
    return early
