"""The cue list of a running installation: its cues as edited, standby, GO, what waits to fire.

The config's ``[[cues]]`` are the list at first; edits (the ``cue`` operation) are
kept in the state folder (``cues.json``) with the standby cue, so a restart comes
back to the list and the place in it. A config whose ``[[cues]]`` changed since
wins over the edits (the file was changed by hand). A GO hands its cues to the
hours' thread (:meth:`due`), which fires each at its time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from scorch.errors import InvalidRequest
from scorch.primitives.disk import write_atomically
from scorch.schedule import Call, Cue, CueList, Firing
from scorch.wire import Limits, OverLimit, check

log = logging.getLogger(__name__)

FILE = "cues.json"
_VERSION = 1
#: What a cues file may hold (a thousand cues of many calls), checked before it is parsed.
CUE_FILE_LIMITS = Limits(size=16 * 1024 * 1024, depth=16, items=500_000)


def fingerprint(cues: tuple[Cue, ...]) -> str:
    """A digest of a list of cues (the config's, to tell whether it changed)."""
    text = json.dumps([_cue_json(c) for c in cues], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cue_json(cue: Cue) -> dict[str, Any]:
    out = asdict(cue)
    out["do"] = [{"op": c.op, **c.args} for c in cue.do]
    return out


def cue_of(data: Mapping[str, Any]) -> Cue:
    """A cue from :func:`_cue_json`'s values (ValueError, KeyError or TypeError if not one)."""
    then = str(data.get("then", "stop"))
    if then not in ("stop", "continue", "follow"):
        raise ValueError(f"then {then!r}")
    calls = tuple(Call(str(item["op"]), {k: v for k, v in item.items() if k != "op"})
                  for item in data.get("do", []))
    return Cue(str(data["number"]), str(data.get("name", "")), calls,
               float(data.get("pre_wait", 0.0)), then,  # type: ignore[arg-type]
               float(data.get("post_wait", 0.0)))


class Cues:
    """The cue list (any thread: one lock around it)."""

    def __init__(self, configured: tuple[Cue, ...], double_go: float, lead: float,
                 state_dir: Path, wake: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._path = state_dir / FILE
        self._wake = wake
        self.lead = lead
        """Seconds from a GO to the moment its rooms fire it."""
        self._pending: list[Firing] = []
        """Cues a GO fired whose time has not come."""
        self._dirty = False
        self._source = fingerprint(configured)
        self.list = CueList(list(configured), double_go=double_go)
        self._load()

    def _load(self) -> None:
        try:
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except OSError as err:
            log.warning("cues in %s not read (%s): the config's cue list", self._path, err)
            return
        try:
            check(text, CUE_FILE_LIMITS)
            saved = json.loads(text)
            cues = [cue_of(item) for item in saved["cues"]]
            standby = saved.get("standby")
        except (OverLimit, ValueError, KeyError, TypeError, AttributeError) as err:
            aside = self._path.with_suffix(".corrupt")
            log.error("cues in %s unreadable (%s); moved to %s, the config's cue list is used",
                      self._path, err, aside)
            os.replace(self._path, aside)
            return
        if saved.get("config") != self._source:
            log.warning("[[cues]] changed in the config since the cue list was edited: the "
                        "config's list is used (the edited one was %s)", self._path)
            return
        self.list.cues = cues
        self.list.standby = len(cues)
        if standby is not None:
            self.list.standby = next((i for i, c in enumerate(cues) if c.number == standby),
                                     len(cues))

    def replace(self, configured: tuple[Cue, ...], double_go: float, lead: float) -> None:
        """A reloaded config: its cue list, when its ``[[cues]]`` changed."""
        with self._lock:
            self.lead = lead
            self.list.double_go = double_go
            source = fingerprint(configured)
            if source != self._source:
                self._source = source
                self.list.cues = list(configured)
                self.list.standby = 0
                self._dirty = True

    # --- GO and what waits ------------------------------------------------------------

    def go(self, number: str | None = None, at: float | None = None) -> tuple[float,
                                                                             list[Firing] | None]:
        """GO: the standby cue (or cue ``number``) at ``at`` (None: ``lead`` from now).

        The GO entry point of every front (the tool, the CLI, later MIDI, OSC and the
        page): cheap, never waits. Returns the GO's time and what it fires (None: a
        double GO, which counts once).
        """
        when = at if at is not None else time.time() + self.lead
        with self._lock:
            fired = self.list.go(when, number)
            if fired:
                self._pending.extend(fired)
                self._pending.sort(key=lambda f: f.time)
                self._dirty = True
        self._wake()
        return when, fired

    def due(self, horizon: float) -> list[Firing]:
        """The cues to fire by ``horizon`` (taken: each is handed out once)."""
        with self._lock:
            taken = [f for f in self._pending if f.time <= horizon]
            self._pending = [f for f in self._pending if f.time > horizon]
            return taken

    def next_time(self) -> float | None:
        """When the next cue waiting fires (None: none waits)."""
        with self._lock:
            return self._pending[0].time if self._pending else None

    def listed(self) -> tuple[list[Cue], Cue | None]:
        """The cues in order, and the one on standby (None: the list is done)."""
        with self._lock:
            return list(self.list.cues), self.list.on_standby()

    def running(self) -> list[Firing]:
        """The cues a GO fired that wait for their time (a wait, a follow)."""
        with self._lock:
            return list(self._pending)

    def stop(self) -> list[Firing]:
        """Cancel every cue waiting to fire; standby stays."""
        with self._lock:
            gone, self._pending = self._pending, []
            return gone

    # --- editing ----------------------------------------------------------------------

    def edit(self, change: Callable[[CueList], Cue]) -> Cue:
        """Apply ``change`` to the list and keep the result on disk."""
        with self._lock:
            done = change(self.list)
            self._dirty = True
        self.flush()
        return done

    def flush(self) -> None:
        """Write the list and its standby if they changed (the hours' thread, and edits)."""
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            standby = self.list.on_standby()
            text = json.dumps({"version": _VERSION, "config": self._source,
                               "standby": standby.number if standby else None,
                               "cues": [_cue_json(c) for c in self.list.cues]}, indent=1)
        try:
            check(text, CUE_FILE_LIMITS)
            write_atomically(self._path, text.encode("utf-8"))
        except OverLimit as err:
            raise InvalidRequest(f"the cue list would be {err}; delete some cues") from None
        except OSError as err:  # the list is kept in memory; only the file is behind
            log.warning("cues not written to %s: %s", self._path, err)
