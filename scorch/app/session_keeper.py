"""The installation's session: captured, compared, applied, autosaved and resumed.

A session file (``scorch.app.sessions``) holds the rooms' named nodes and
buffers, the run-time MIDI routes and the tempos; this component reads them off
the running installation and brings it to one, through the other components.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from scorch.app.buffers import Buffers
from scorch.app.midi import Midi
from scorch.app.rooms import Rooms
from scorch.app.sessions import (
    AUTOSAVE,
    FOLDER,
    Reading,
    SessionStore,
    canonical_route,
    parse,
    render,
)
from scorch.app.tempo import Tempo
from scorch.app.tree import RESTORE_WAIT, Tree
from scorch.errors import PatternFailed, ScorchError, SessionFileError, SessionNotFound
from scorch.primitives.sclang import pattern_ops
from scorch.state import INSTALLATION, BufferSpec, NodeSpec, PatternSpec, RoomSpec, Session, diff
from scorch.state.session import Change

log = logging.getLogger(__name__)

#: Seconds sclang may take to define a pattern again.
PATTERN_TIMEOUT = 10.0
#: Seconds a master gain that a session load, an undo or a redo changes fades over.
GAIN_FADE = 0.5


class Sessions:
    """Capture the installation as a session and bring it to one (any thread)."""

    def __init__(self, tree: Tree, rooms: Rooms, buffers: Buffers, midi: Midi,
                 tempo: Tempo) -> None:
        self._tree = tree
        self._rooms = rooms
        self._buffers = buffers
        self._midi = midi
        self._tempo = tempo
        self.store = SessionStore(tree.config.state_path() / FOLDER)
        """The session files in the state folder."""
        self._autosaver: Autosaver | None = None
        self._autosaved: Session | None = None
        """What the last autosave held (unchanged: not written again)."""

    # --- autosave ------------------------------------------------------------

    def start_autosave(self) -> None:
        """Save the session ``autosave`` every ``[sessions] autosave`` seconds, and at stop.

        Started once the installation holds what it should (after a resume), so a
        start that fails never overwrites the last good autosave.
        """
        if self._autosaver is not None:
            return
        interval = self._tree.config.sessions.autosave
        self._autosaver = Autosaver(interval or float("inf"), self.autosave)
        if interval:
            self._autosaver.start()

    def autosave(self) -> bool:
        """Write the autosave session if the state changed since the last; True if written."""
        session = self.capture()
        if session == self._autosaved:
            return False
        self.store.write(AUTOSAVE, render(session, AUTOSAVE))
        self._autosaved = session
        return True

    def stop(self) -> None:
        """Stop the autosave, writing the session a last time when it ran."""
        autosaver, self._autosaver = self._autosaver, None
        if autosaver is None:
            return
        autosaver.stop()
        try:
            self.autosave()
        except Exception:
            log.exception("the autosave at shutdown failed")

    def autosaved(self) -> Session | None:
        """The last autosave, read leniently; None if there is none or it cannot be read.

        Sound files are not checked, and what this installation no longer has (a
        room, a group, a SynthDef or param taken out of the config since) is left
        out with a warning: an installation always comes back. A file that cannot
        be read at all is set aside as ``autosave-unreadable.toml`` (``session diff``
        of it names its mistakes), with an error in the log, so the next autosave
        does not destroy it. Boot with the session as
        ``Orchestra.start(seed=...)``, then :meth:`resume` for what a seed cannot carry
        (MIDI routes, the tempo, and anything that failed).
        """
        try:
            text, path = self.store.read(AUTOSAVE)
            return parse(text, path, Reading(self._tree.config, self._tree.library, resume=True))
        except SessionNotFound:
            return None
        except SessionFileError as err:
            aside = self.store.path(f"{AUTOSAVE}-unreadable")
            self.store.path(AUTOSAVE).replace(aside)
            log.error("--resume: the autosave cannot be read; set aside as %s; starting from "
                      "the config: %s", aside, err)
            return None

    def resume(self, target: Session | None = None) -> list[tuple[Change, str]] | None:
        """Bring the installation to ``target`` (default: the last autosave); None if none.

        Sound files that are gone are skipped (reported with the other failures),
        so one missing sample does not keep an installation from coming back.
        """
        target = target if target is not None else self.autosaved()
        if target is None:
            return None
        changes = self.diff(target)
        if self._tree.config.tempo.link:
            # The Link session's tempo is its peers' too: coming back must not pull it to
            # what it was here before the stop (a `session load` does set it).
            changes = [c for c in changes if not (c.action == "tempo" and c.scope == INSTALLATION)]
        failed = self.apply(changes)
        log.info("resumed from the autosave: %d changes left after boot, %d failed",
                 len(changes), len(failed))
        for change, error in failed:
            log.error("resume: %s: %s", change.detail, error)
        return failed

    # --- capture, compare, apply ---------------------------------------------

    def capture(self) -> Session:
        """Every room's named nodes and buffers, and the run-time MIDI routes, as they are now.

        While scorch starts, once its rooms are up: a session saved meanwhile would
        lack what they restore.
        """
        self._tree.await_ready(None, time.monotonic() + RESTORE_WAIT, "session")
        return self.capture_now(list(self._tree.views), tempo=True, routes=True, patterns=True)

    def capture_now(self, rooms: list[str], tempo: bool, routes: bool,
                    patterns: bool = False) -> Session:
        """What ``rooms`` hold now, and their patterns, the tempo and the routes if asked."""
        specs = {
            name: RoomSpec(
                nodes={n.name: NodeSpec(n.synthdef, dict(n.params), n.target, n.add_action)
                       for n in view.nodes.values()},
                buffers={b.name: BufferSpec(b.path, b.bufnum) for b in view.buffers.values()},
                patterns={key: PatternSpec(p.kind, p.name, p.playing, p.text, p.mute)
                          for key, p in view.patterns.items()} if patterns else {},
                patterns_known=patterns, gain_db=view.stage.gain_db)
            for name, view in ((n, self._tree.view(n)) for n in rooms)}
        tempos = self._tempo.bpms() if tempo else {}
        if not routes or self._tree.router is None:
            return Session(rooms=specs, routes_known=False, tempos=tempos)
        found = tuple(canonical_route(r["id"], r["type"], r["route"])
                      for r in self._midi.routes() if r["origin"] == "runtime")
        return Session(rooms=specs, routes=found, tempos=tempos)

    def _param_defaults(self, synthdef: str) -> dict[str, float]:
        """A library SynthDef's params at their defaults (none for a SynthDef it lacks)."""
        library = self._tree.library
        if synthdef not in library:
            return {}
        return {p.name: p.default for p in library.info(synthdef).params}

    def diff(self, target: Session) -> list[Change]:
        """What loading ``target`` would change, in order."""
        current = self.capture()
        if not current.routes_known:
            target = Session(rooms=target.rooms, routes_known=False, tempos=target.tempos)
        return diff(current, target, self._param_defaults)

    def diff_to(self, current: Session, target: Session) -> list[Change]:
        """What turns ``current`` (a capture) into ``target``, in order."""
        return diff(current, target, self._param_defaults)

    def apply(self, changes: list[Change], by: str = "session") -> list[tuple[Change, str]]:
        """Carry out ``changes`` in order; return those that failed, with why (the rest apply).
        ``by``: which way they came (``session``, ``undo``), as their announcements say."""
        failed = []
        for change in changes:
            try:
                self._apply(change, by)
            except ScorchError as err:
                failed.append((change, str(err)))
        return failed

    def _apply(self, change: Change, by: str) -> None:
        room, target = change.room, change.target
        if change.action == "free":
            assert room is not None
            self._tree.ask(room, lambda p: p.buffers.free(target))
        elif change.action == "load":
            assert room is not None and change.path is not None
            self._buffers.load(room, change.path, target, change.bufnum)
        elif change.action == "release":
            assert room is not None
            self._rooms.release(room, target, by=by)
        elif change.action == "play":
            assert room is not None and change.synthdef is not None
            self._rooms.play(room, change.synthdef, dict(change.params), target,
                             target=change.placed, add_action=change.add_action, by=by)
        elif change.action == "move":
            assert room is not None
            self._rooms.place(room, target, change.placed, change.add_action, by=by)
        elif change.action == "set":
            assert room is not None
            self._rooms.set(room, target, dict(change.params), by=by)
        elif change.action == "gain":
            assert room is not None
            self._rooms.set_gain(room, change.params["db"], GAIN_FADE)
        elif change.action == "tempo":
            assert change.bpm is not None and change.scope is not None
            self._tempo.set(change.scope or None, bpm=change.bpm)
        elif change.action == "unmap":
            self._midi.unmap(target)
        elif change.action == "map":
            assert change.route is not None
            self._midi.restore(change.route)
        elif change.action in ("pattern", "clear", "mute"):
            assert room is not None and change.pattern is not None
            spec = change.pattern
            code = (pattern_ops.define_code(spec.kind, spec.name, spec.text, spec.playing,
                                            spec.mute) if change.action == "pattern"
                    else pattern_ops.mute_code(spec.kind, spec.name, spec.mute)
                    if change.action == "mute" else pattern_ops.clear_code(spec.kind, spec.name))
            result = self._rooms.execute_one(room, code, timeout=PATTERN_TIMEOUT)
            if not result.ok:
                raise PatternFailed(result.error.describe() if result.error is not None
                                    else f"{change.detail} failed")


class Autosaver:
    """Call ``save()`` every ``interval`` seconds in its own thread until stopped."""

    def __init__(self, interval: float, save: Callable[[], object]) -> None:
        self._interval = interval
        self._save = save
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="session-autosave", daemon=True)

    def start(self) -> Autosaver:
        """Start the thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (a save in progress finishes first)."""
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10.0)

    def _run(self) -> None:
        while not self._halt.wait(self._interval):
            try:
                self._save()
            except Exception:
                # A full disk or a busy actor must not end autosaving: the next tick retries.
                log.exception("autosave failed")
