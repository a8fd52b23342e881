"""What an installation knows besides its rooms: the docs index, the history, the snippets.

The history and the snippets live in the installation's state directory; the
docs index is one per SuperCollider installation, in the user cache folder,
shared by every config on the machine (:mod:`scorch.knowledge.shared`). It is kept
current by a child process (``python -m scorch.knowledge.build``), started by a
thread of this object's own once the rooms are READY (``[docs] build =
"background"``) or at the first ``docs`` call (``"on-demand"``): the rooms and
their interpreters are never asked, and nothing here blocks a room. A cheap
stamp of the files the index was made from (:mod:`scorch.knowledge.sources`)
decides whether the child is needed at all; a child that waited for another
installation's builder finds the index current and ends. Every method may be called from any
thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorch.app.tree import Ready
from scorch.config import Config
from scorch.errors import DocsUnavailable, HistoryUnavailable
from scorch.knowledge import INDEX_SCHEMA, DocsIndex, History, SnippetStore, build, shared
from scorch.primitives.system import spawn

log = logging.getLogger(__name__)

#: Seconds a refresh (class dump plus index build) may take before it is killed.
BUILD_TIMEOUT = 180.0
#: After a refresh that could not read the class library, seconds before another try.
RETRY_AFTER = 60.0


@dataclass
class _Refresh:
    """One refresh under way: its thread, its child process once started, and its end."""

    started: float = field(default_factory=time.monotonic)
    started_at: float = field(default_factory=time.time)
    """Unix time it began, for the status."""
    done: threading.Event = field(default_factory=threading.Event)
    proc: subprocess.Popen[bytes] | None = None
    thread: threading.Thread | None = None


@dataclass(frozen=True)
class DocsState:
    """The docs index as a ``docs`` call finds it."""

    index: DocsIndex
    note: str
    """What the index lacks and why (runtime classes only, help only), or empty."""
    version: str
    """The SuperCollider version it was made from, empty when sclang could not be run."""
    refreshing: bool
    """The builder is running (the sources changed); this index answers meanwhile."""


class Knowledge:
    """The docs index, the execution history and the snippets of one installation."""

    def __init__(self, config: Config, sclang: str = "sclang", ready: Ready | None = None) -> None:
        state = config.state_path()
        self.history_path = state / "history.sqlite"
        self.snippets = SnippetStore(state / "snippets")
        self._sclang = sclang
        self._ready = ready
        """Waits while scorch starts, before a first index is built (None: never waits)."""
        self._history_config = config.history
        self._build_mode = config.docs.build
        self._help_dir = (config.resolve_path(config.docs.help_dir)
                          if config.docs.help_dir is not None else None)
        self.docs_path = shared.index_path(sclang, self._help_dir)
        self._lock = threading.Lock()
        self._history: History | None = None
        self._history_error = "scorch is not started"
        self._index: DocsIndex | None = None
        self._refresh: _Refresh | None = None
        self._checked = False
        """A refresh was started in this run (on-demand mode starts one at the first call)."""
        self._failure = ""
        self._failed_at = 0.0
        self._finished_at = -RETRY_AFTER
        self._last: dict[str, Any] = {}
        """The last refresh's report (see :class:`scorch.knowledge.build.Report`)."""
        self._closed = True
        self._started = False
        """:meth:`start` ran: the rooms are up, a refresh may run."""
        self._stopped = False
        """:meth:`stop` ran (and no :meth:`open` since)."""

    # --- lifecycle (the Orchestra calls these) --------------------------------------

    def open(self) -> None:
        """Open the history and the cached index: both answer while the rooms boot."""
        with self._lock:
            if not self._closed:
                return
            self._closed, self._stopped = False, False
            self._checked = False
        self._open_history()
        self._open_index()

    def start(self) -> None:
        """Once the rooms are up (or given up): in background mode, check the index."""
        self.open()
        with self._lock:
            self._started = True
        if self._build_mode == "background":
            self.refresh_docs()

    def stop(self, timeout: float = 5.0) -> None:
        """End a refresh under way (its child, by pid) and close the databases."""
        with self._lock:
            self._closed, self._started, self._stopped = True, False, True
            refresh, history = self._refresh, self._history
            self._history, self._history_error = None, "scorch is stopped"
            self._index = None
        if refresh is not None:
            _kill(refresh.proc)
            if refresh.thread is not None:
                refresh.thread.join(timeout)
        if history is not None:
            history.close()

    # --- history -------------------------------------------------------------------

    def _open_history(self) -> None:
        config = self._history_config
        try:
            history = History(self.history_path, config.max_age_days, config.max_rows)
        except Exception as err:  # a corrupt or unwritable file must not stop the rooms
            log.error("the execution history %s cannot be opened: %s", self.history_path, err)
            with self._lock:
                self._history_error = (f"the execution history {self.history_path} cannot be "
                                       f"opened ({err}); move it aside and restart scorch to "
                                       "begin a new one")
            return
        with self._lock:
            self._history = history

    def history(self) -> History:
        """Return the history; HistoryUnavailable says why there is none."""
        with self._lock:
            if self._history is None:
                raise HistoryUnavailable(self._history_error)
            return self._history

    def record(self, when: float, room: str, code: str, value: str, posted: str,
               error: str | None, duration_ms: float) -> int | None:
        """Keep one execution in the history and return its id; a failure is logged, never
        raised (None)."""
        with self._lock:
            history = self._history
        if history is None:
            return None
        try:
            return history.record(when, room, code, value, posted, error, duration_ms)
        except Exception as err:
            log.warning("execution on %s not kept in the history: %s", room, err)
            return None

    # --- docs ----------------------------------------------------------------------

    def docs(self, timeout: float) -> DocsState:
        """Return the index; wait up to ``timeout`` while the first one is built.

        DocsUnavailable says it is still being built (and for how long), or why it
        could not be.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            index, refresh, started = self._index, self._refresh, self._started
        if index is None and not started and self._ready is not None:
            # A first index is built once the rooms are up, so it never slows their boot.
            self._ready(None, deadline, "docs (a first docs index is built once the rooms "
                        "are up)")
        with self._lock:
            index, refresh = self._index, self._refresh
            gave_up = index is None and bool(self._failure) and (
                time.monotonic() - self._failed_at < RETRY_AFTER)
            # A cached index answers while the rooms boot; its check waits for them.
            check = not self._checked and (self._started or self._ready is None)
            start = not gave_up and ((index is None and refresh is None) or check)
        if start:
            refresh = self.refresh_docs()
        if index is None and refresh is not None:
            refresh.done.wait(max(0.0, deadline - time.monotonic()))
        with self._lock:
            index, refresh = self._index, self._refresh
            if index is None:
                raise DocsUnavailable(self._unavailable(refresh))
        meta = index.meta()
        # A stamp check alone is no rebuild: only a running builder makes a newer index.
        return DocsState(index, meta.get(build.NOTE, ""), meta.get("version", ""),
                         refresh is not None and refresh.proc is not None)

    def _unavailable(self, refresh: _Refresh | None) -> str:
        if refresh is not None:
            took = self._last.get("introspection_seconds", 0) + self._last.get(
                "build_seconds", 0)
            before = f" (the last build took {took:.1f} s)" if took else ""
            return (f"the SuperCollider docs index is being built, for "
                    f"{time.monotonic() - refresh.started:.1f} s so far{before}; ask again in "
                    "a few seconds")
        if self._closed:
            return "scorch is stopped" if self._stopped else "scorch is not started"
        return f"the SuperCollider docs index could not be built: {self._failure or 'no reason'}"

    def docs_changed(self, timeout: float) -> bool:
        """Bring the index up to date if its sources changed; say whether it was refreshed.

        A name the index does not know may be a class added since it was built: this
        waits for a refresh under way, or starts one when the stamp differs.
        """
        with self._lock:
            refresh = self._refresh
        if refresh is None:
            if self._fresh():
                return False
            refresh = self.refresh_docs()
        if not refresh.done.wait(timeout):
            raise DocsUnavailable(
                "the class library or the help changed and the docs index is being rebuilt; "
                "ask again in a few seconds")
        return True

    def refresh_docs(self, force: bool = False) -> _Refresh:
        """Start bringing the index up to date in the background, unless that is under way."""
        with self._lock:
            if self._refresh is not None:
                return self._refresh
            refresh = self._refresh = _Refresh()
            self._checked = True
            if self._closed:
                self._refresh = None
                refresh.done.set()
                return refresh
            refresh.thread = threading.Thread(target=self._run_refresh, args=(refresh, force),
                                              name="docs-refresh", daemon=True)
        refresh.thread.start()
        return refresh

    def status(self) -> dict[str, Any]:
        """Where the docs index is: its file, whether it is built or building, the last report."""
        with self._lock:
            refresh = self._refresh
            return {"path": str(self.docs_path), "ready": self._index is not None,
                    "building": refresh is not None,
                    "building_since": refresh.started_at if refresh is not None else None,
                    "builder_pid": refresh.proc.pid if refresh and refresh.proc else None,
                    "last": dict(self._last), "failure": self._failure}

    def _run_refresh(self, refresh: _Refresh, force: bool) -> None:
        """Check the stamp, then run the builder if needed (runs in the refresh thread)."""
        try:
            if force or not self._fresh():
                self._build(refresh, force)
        except Exception as err:
            log.error("the docs index could not be refreshed: %s", err)
            with self._lock:
                self._failure, self._failed_at = str(err), time.monotonic()
        finally:
            with self._lock:
                self._refresh = None
            refresh.done.set()

    def _build(self, refresh: _Refresh, force: bool) -> None:
        argv = [sys.executable, "-m", "scorch.knowledge.build", str(self.docs_path),
                "--sclang", self._sclang]
        if self._help_dir is not None:
            argv += ["--help-dir", str(self._help_dir)]
        if force:
            argv.append("--force")
        with self._lock:
            if self._closed:
                return
            # Forked by this thread, which waits for it: it dies with scorch.
            refresh.proc = proc = spawn(argv, env=_python_path())
        try:
            out, _ = proc.communicate(timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, _ = proc.communicate()
            raise DocsUnavailable(f"the docs build did not finish within {BUILD_TIMEOUT:g} s"
                                  ) from None
        report = _report(out.decode("utf-8", errors="replace"), proc.returncode)
        with self._lock:
            if self._closed:
                return
        if "error" in report:
            raise DocsUnavailable(report["error"])
        log.info("docs index %s in %.1f s: %s documents (SuperCollider %s)%s",
                 "rebuilt" if report["rebuilt"] else "checked, unchanged,",
                 report["introspection_seconds"] + report["build_seconds"],
                 report["documents"], report["version"] or "?",
                 f"; {report['note']}" if report["note"] else "")
        index = DocsIndex(self.docs_path, published=True)
        with self._lock:
            self._last, self._failure = report, ""
            self._finished_at = time.monotonic()
            # A call holding the old index keeps it until it is done; it closes when dropped.
            self._index = None if self._closed else index

    def _open_index(self) -> None:
        """Open the cached index, if there is a usable one."""
        if not self.docs_path.exists():
            return
        try:
            index = DocsIndex(self.docs_path, published=True)
            usable = index.meta().get("schema") == INDEX_SCHEMA
        except Exception as err:
            log.warning("the cached docs index %s cannot be read (%s): it will be rebuilt",
                        self.docs_path, err)
            return
        with self._lock:
            if usable and self._index is None:
                self._index = index

    def _fresh(self) -> bool:
        """Say whether the index's sources are as they were when it was built."""
        with self._lock:
            index = self._index
            tried_recently = time.monotonic() - self._finished_at < RETRY_AFTER
        if index is None:
            return False
        meta = index.meta()
        if meta.get("schema") == INDEX_SCHEMA and not meta.get(build.STAMP):
            # The class library could not be read last time: try again, not on every call.
            return tried_recently
        return build.is_current(meta)


def _report(output: str, returncode: int | None) -> dict[str, Any]:
    """The builder's JSON line (its last), or an error naming what it printed instead."""
    for line in reversed(output.strip().splitlines()):
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                return dict(json.loads(line))
    tail = " / ".join(output.strip().splitlines()[-5:])
    return {"error": f"the docs builder exited ({returncode}) without a report: {tail}"}


def _kill(proc: subprocess.Popen[bytes] | None) -> None:
    """Kill the builder's process group (its sclang dies with it), unless it was reaped."""
    # returncode, not poll(): the refresh thread is waiting on the process, and reaps it.
    if proc is not None and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _python_path() -> dict[str, str]:
    """The child imports this very scorch, wherever it was imported from."""
    root = str(Path(__file__).resolve().parent.parent.parent)
    paths = [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
