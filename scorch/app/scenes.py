"""Scenes kept in the state directory, recalled and morphed from MCP, the CLI and MIDI.

:class:`SceneDirector` owns the scenes and the morph in progress. A morph starts from
the state when it first moved toward a scene (its origin) and keeps that origin
while it moves toward the same scene in the same rooms, so a CC swept back and
forth moves between the same two states; a recall, or a morph toward another
scene, starts afresh. MIDI cues arrive on the router's callback thread and must
not wait: :meth:`SceneDirector.cue` keeps the newest and a worker thread applies it.
Timed morphs step in the same thread.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorch.app.tree import RESTORE_WAIT, Ready
from scorch.errors import InvalidRequest, SceneNotFound
from scorch.primitives.disk import write_atomically
from scorch.primitives.synthdefs import SynthDefLibrary, Warp
from scorch.state import RoomView, Scene, Values, missing, morph, restrict
from scorch.wire import Limits, OverLimit, check

log = logging.getLogger(__name__)

FILENAME = "scenes.json"
_VERSION = 1
#: Controls a scene never holds: a gate would release the node, buses would move its sound.
LEFT_OUT = frozenset({"gate"})
#: Steps a second of a timed morph.
MORPH_RATE = 30.0
MAX_MORPH_SECONDS = 3600.0

SetValues = Callable[[str, dict[str, dict[str, float]]], list[str]]
"""Set param values of named nodes in one room; return the nodes it did not have."""


#: What a scenes file may hold: scorch writes four levels (scene, room, node, param), and
#: three items a param (its key, a colon, a comma), so 100,000 params (a thousand scenes of
#: ten nodes with ten params), checked and read in some 0.3 s. A save past it is refused.
SCENE_FILE_LIMITS = Limits(size=64 * 1024 * 1024, depth=16, items=300_000)

@dataclass
class _Morph:
    """A morph under way: toward which scene, in which rooms, from where."""

    scene: str
    rooms: tuple[str, ...]
    origin: dict[str, dict[str, dict[str, float]]]
    position: float = 0.0


@dataclass
class Applied:
    """What a recall or a morph step set, and which of the scene's nodes were not there."""

    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


class SceneDirector:
    """Save, recall, morph, list and delete scenes (any thread)."""

    def __init__(self, views: Mapping[str, RoomView], library: SynthDefLibrary,
                 resolve: Callable[[str], list[str]], set_values: SetValues,
                 state_dir: Path, ready: Ready | None = None) -> None:
        self._views = views
        self._ready = ready
        """Waits for booting or restoring rooms before their nodes are read or set."""
        self._library = library
        self._resolve = resolve
        self._set_values = set_values
        self._path = state_dir / FILENAME
        self._lock = threading.RLock()
        self._scenes: dict[str, Scene] = _load(self._path)
        self._morph: _Morph | None = None
        self._generation = 0
        """Bumped by every recall and morph: a timed morph of an older one stops."""
        self._cue: tuple[str, str, str, float] | None = None
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    def stop(self) -> None:
        """Stop the worker and any timed morph (where it is)."""
        self._halt.set()
        self._wake.set()
        with self._lock:
            self._generation += 1
            thread = self._thread
        if thread is not None:
            thread.join(timeout=5.0)

    # --- the scenes -------------------------------------------------------------------

    def names(self) -> list[str]:
        """Saved scene names, sorted."""
        with self._lock:
            return sorted(self._scenes)

    def scenes(self) -> list[Scene]:
        """Every saved scene, by name."""
        with self._lock:
            return [self._scenes[name] for name in sorted(self._scenes)]

    def get(self, name: str) -> Scene:
        """A saved scene; SceneNotFound lists the others."""
        with self._lock:
            scene = self._scenes.get(name)
        if scene is None:
            names = self.names()
            raise SceneNotFound(f"no scene {name!r}; scenes: {', '.join(names) or '(none)'}",
                                name=name, known=names)
        return scene

    def save(self, name: str, selector: str) -> Scene:
        """Keep the params of every named node of the rooms ``selector`` names, as ``name``."""
        rooms = self._resolve(selector)
        self._wait(rooms, "scene save")
        values = {room: nodes for room, nodes in self.current(rooms).items() if nodes}
        if not values:
            raise InvalidRequest(f"no named nodes on {selector!r} to keep in a scene: play "
                                 "some with a name first")
        scene = Scene(name, values, time.time(), tuple(rooms))
        with self._lock:
            before = self._scenes.get(name)
            self._scenes[name] = scene
            try:
                self._write()
            except OverLimit as err:
                if before is None:
                    del self._scenes[name]
                else:
                    self._scenes[name] = before
                raise InvalidRequest(f"scene {name!r} not saved: the scenes file would be "
                                     f"{err}; delete some scenes first") from None
            if self._morph is not None and self._morph.scene == name:
                self._morph = None  # the scene moved: a morph toward it starts afresh
        return scene

    def delete(self, name: str) -> Scene:
        """Forget a scene."""
        scene = self.get(name)
        with self._lock:
            self._scenes.pop(name, None)
            self._write()
        return scene

    # --- recall and morph -------------------------------------------------------------

    def recall(self, name: str, selector: str = "*") -> Applied:
        """Set the scene's values on the nodes that are there now."""
        scene = self.get(name)
        rooms = self._rooms(scene, selector)
        self._wait(rooms, "scene recall")
        with self._lock:
            self._generation += 1
            self._morph = None
        return self._apply(restrict(scene.values, rooms), scene, rooms)

    def morph(self, name: str, position: float, selector: str = "*") -> Applied:
        """Set the values ``position`` (0..1) of the way from the morph's origin to the scene."""
        scene = self.get(name)
        rooms = self._rooms(scene, selector)
        self._wait(rooms, "scene morph")
        with self._lock:
            self._generation += 1
            state = self._start(scene, rooms)
            state.position = position
            values = morph(state.origin, restrict(scene.values, rooms), position, self._spec)
        return self._apply(values, scene, rooms)

    def glide(self, name: str, seconds: float, selector: str = "*") -> Applied:
        """Morph to the scene over ``seconds``, from where things are now; return at once.

        A later recall or morph stops it where it is. Answers the values it ends on.
        """
        if not 0 < seconds <= MAX_MORPH_SECONDS:
            raise InvalidRequest(f"seconds must be within 0..{MAX_MORPH_SECONDS:g}, "
                                 f"found {seconds:g}")
        scene = self.get(name)
        rooms = self._rooms(scene, selector)
        self._wait(rooms, "scene morph")
        with self._lock:
            self._generation += 1
            self._morph = None
            state = self._start(scene, rooms)
            generation = self._generation
        threading.Thread(target=self._glide, args=(scene, rooms, state, seconds, generation),
                         name="scene-glide", daemon=True).start()
        end = restrict(scene.values, rooms)
        return Applied(morph(state.origin, end, 1.0, self._spec),
                       missing(self.current(rooms), end))

    def cue(self, kind: str, name: str, selector: str, value: float) -> None:
        """A MIDI route's cue (``recall`` with seconds, or ``morph`` with a position): queue it.

        Called on the MIDI callback thread: it never waits; a newer cue replaces one
        not yet applied.
        """
        self._cue = (kind, name, selector, value)
        if self._thread is None:
            with self._lock:  # the first cue starts the worker (most installations send none)
                if self._thread is None and not self._halt.is_set():
                    self._thread = threading.Thread(target=self._work, name="scenes",
                                                    daemon=True)
                    self._thread.start()
        self._wake.set()

    def current(self, rooms: list[str]) -> dict[str, dict[str, dict[str, float]]]:
        """Every named node's params now (defaults filled in), without gates."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for room in rooms:
            nodes = out.setdefault(room, {})
            for node in self._views[room].nodes.values():
                params = {}
                if node.synthdef in self._library:
                    params = {p.name: p.default for p in self._library.info(node.synthdef).params
                              if p.units != "bus" and p.name not in LEFT_OUT}
                params.update({k: v for k, v in node.params.items() if k not in LEFT_OUT})
                nodes[node.name] = params
        return out

    # --- inside -----------------------------------------------------------------------

    def _wait(self, rooms: list[str], what: str) -> None:
        if self._ready is not None:
            self._ready(rooms, time.monotonic() + RESTORE_WAIT, what)

    def _rooms(self, scene: Scene, selector: str) -> list[str]:
        return [room for room in self._resolve(selector) if room in scene.values]

    def _start(self, scene: Scene, rooms: list[str]) -> _Morph:
        """The morph toward ``scene`` in ``rooms``: the one under way, or a new one from now."""
        state = self._morph
        if state is None or state.scene != scene.name or state.rooms != tuple(rooms):
            state = self._morph = _Morph(scene.name, tuple(rooms), self.current(rooms))
        return state

    def _spec(self, room: str, node: str, param: str) -> tuple[Warp, float] | None:
        found = self._views[room].nodes.get(node)
        if found is None or found.synthdef not in self._library:
            return None
        for spec in self._library.info(found.synthdef).params:
            if spec.name == param:
                return Warp(spec.warp, spec.minval, spec.maxval), spec.step
        return None

    def _apply(self, values: dict[str, dict[str, dict[str, float]]], scene: Scene,
               rooms: list[str]) -> Applied:
        gone = missing(self.current(rooms), restrict(scene.values, rooms))
        applied = Applied(missing=gone)
        for room, nodes in values.items():
            present = {n: p for n, p in nodes.items() if f"{room}.{n}" not in gone}
            if not present:
                continue
            self._set_values(room, present)
            applied.values[room] = present
        return applied

    def _glide(self, scene: Scene, rooms: list[str], state: _Morph, seconds: float,
               generation: int) -> None:
        start = time.monotonic()
        end = restrict(scene.values, rooms)
        while not self._halt.is_set():
            position = min(1.0, (time.monotonic() - start) / seconds)
            with self._lock:
                if generation != self._generation:
                    return
                values = morph(state.origin, end, position, self._spec)
            try:
                self._apply(values, scene, rooms)
            except Exception:
                log.exception("timed morph toward scene %r failed", scene.name)
                return
            if position >= 1.0 or self._halt.wait(1.0 / MORPH_RATE):
                return

    def _work(self) -> None:
        while not self._halt.is_set():
            self._wake.wait()
            self._wake.clear()
            cue, self._cue = self._cue, None
            if cue is None or self._halt.is_set():
                continue
            kind, name, selector, value = cue
            try:
                if kind == "morph":
                    self.morph(name, value, selector)
                elif value > 0:
                    self.glide(name, value, selector)
                else:
                    self.recall(name, selector)
            except Exception as err:  # a cue for a scene not saved yet, a room restarting
                log.warning("MIDI scene %s %r: %s", kind, name, err)

    def _write(self) -> None:
        """Write every scene; OverLimit, and nothing written, if a start could not read them."""
        text = json.dumps({
            "version": _VERSION,
            "scenes": {s.name: {"saved_at": s.saved_at, "rooms": list(s.rooms),
                                "values": s.values} for s in self._scenes.values()}}, indent=2)
        check(text, SCENE_FILE_LIMITS)
        write_atomically(self._path, text.encode("utf-8"))


def _load(path: Path) -> dict[str, Scene]:
    """The scenes saved at ``path``; a missing file is none, a bad one is set aside."""
    try:
        text = path.read_text(encoding="utf-8")
        try:
            check(text, SCENE_FILE_LIMITS)  # before json.loads can recurse or take minutes
        except OverLimit as err:
            line = text.encode("utf-8", "surrogatepass")[:err.at].count(b"\n") + 1
            raise ValueError(f"line {line}: {err}") from None
        document: Any = json.loads(text)
        scenes = {}
        for name, item in document["scenes"].items():
            values: Values = {
                str(room): {str(node): {str(p): float(v) for p, v in params.items()}
                            for node, params in nodes.items()}
                for room, nodes in item["values"].items()}
            scenes[str(name)] = Scene(str(name), values, float(item.get("saved_at", 0.0)),
                                      tuple(str(r) for r in item.get("rooms", values)))
        return scenes
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        aside = path.with_suffix(".corrupt")
        log.error("scenes in %s unreadable (%s); moved to %s, starting without them",
                  path, err, aside)
        os.replace(path, aside)
        return {}
