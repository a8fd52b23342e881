"""Session files: the whole installation's desired state as readable, versioned TOML.

A session lives in the state directory's ``sessions/NAME.toml``. It is written
atomically (a crash leaves the old file or the new, never half), read back with
every error located (``file:line: key.path: what``) before anything is applied,
and kept current as ``sessions/autosave.toml`` (``scorch.app.session_keeper``).
"""

from __future__ import annotations

import logging
import math
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import tomlkit
from pydantic import Field, ValidationError
from tomlkit.items import Item, Table

from midi import ControlRoute, CueRoute, KeyRoute, PageRoute
from scorch.config import Config, key_lines, located
from scorch.errors import SampleNotFound, SessionFileError, SessionNotFound, UnknownSynthDef
from scorch.primitives.disk import MB, resolve_sample, write_atomically
from scorch.primitives.input import TooDeep, check_toml
from scorch.primitives.sclang import pattern_key
from scorch.primitives.synthdefs import GAIN_FLOOR_DB, GAIN_MAX_DB, SynthDefLibrary
from scorch.state import (
    INSTALLATION,
    MAX_BPM,
    MIN_BPM,
    SAMPLE_BUFFER_BASE,
    SAMPLE_BUFFER_COUNT,
    SESSION_VERSION,
    BufferSpec,
    NodeSpec,
    PatternSpec,
    RoomSpec,
    Session,
    placement_problems,
)
from scorch.values import (
    BufferName,
    Float32,
    GroupName,
    NodeName,
    ParamName,
    RoomName,
    StrictModel,
    SynthDefName,
    Text,
    describe_errors,
)

log = logging.getLogger(__name__)

FOLDER = "sessions"
AUTOSAVE = "autosave"
SUFFIX = ".toml"
#: A session file larger than this is not one scorch wrote or a person edited.
MAX_FILE = 8 * MB


class NodeDoc(StrictModel):
    """``[rooms.ROOM.nodes.NAME]``: with its place (version 3; left out: the default group's
    tail, or after its target)."""

    synthdef: SynthDefName
    params: dict[ParamName, Float32] = Field(default_factory=dict)
    target: NodeName | None = None
    add_action: Literal["head", "tail", "before", "after"] | None = None


class BufferDoc(StrictModel):
    """``[rooms.ROOM.buffers.NAME]``."""

    path: Annotated[Text, Field(min_length=1, max_length=4096)]
    bufnum: Annotated[int, Field(ge=SAMPLE_BUFFER_BASE,
                                 le=SAMPLE_BUFFER_BASE + SAMPLE_BUFFER_COUNT - 1)]


class PatternDoc(StrictModel):
    """``[rooms.ROOM.patterns."KIND NAME"]``: the code that defines it, and whether it plays."""

    kind: Literal["Pdef", "Pbindef", "Tdef", "Ndef"]
    name: Annotated[Text, Field(min_length=1, max_length=64)]
    playing: bool
    text: Annotated[Text, Field(min_length=1, max_length=256 * 1024)]
    mute: Literal["", "muted", "solo"] = ""


class RoomDoc(StrictModel):
    """``[rooms.ROOM]`` (without ``patterns``: the room's patterns are left alone)."""

    nodes: dict[NodeName, NodeDoc] = Field(default_factory=dict)
    buffers: dict[BufferName, BufferDoc] = Field(default_factory=dict)
    patterns: dict[Annotated[str, Field(max_length=80)], PatternDoc] | None = None
    gain_db: float | None = Field(None, ge=GAIN_FLOOR_DB, le=GAIN_MAX_DB,
                                  description="the master gain in the room's safety stage")


class MidiDoc(StrictModel):
    """``[midi]``: ``[[midi.routes]]``, each a route as in config.toml with ``id`` and ``type``."""

    routes: list[dict[str, Any]] = Field(default_factory=list)


class GroupTempoDoc(StrictModel):
    """``[tempo.groups.GROUP]``: a group with a tempo of its own."""

    bpm: Annotated[float, Field(ge=MIN_BPM, le=MAX_BPM)]


class TempoDoc(StrictModel):
    """``[tempo]``: the installation's bpm (left out: left alone) and the groups' own."""

    bpm: Annotated[float | None, Field(ge=MIN_BPM, le=MAX_BPM)] = None
    groups: dict[GroupName, GroupTempoDoc] = Field(default_factory=dict)


class SessionDoc(StrictModel):
    """A whole session file (version 1 has no tempo, 1 and 2 no places; they still read)."""

    version: Literal[1, 2, 3]
    saved_at: str | None = None
    tempo: TempoDoc = TempoDoc()
    rooms: dict[RoomName, RoomDoc] = Field(default_factory=dict)
    midi: MidiDoc = MidiDoc()


# --- writing ---------------------------------------------------------------------------


def canonical_route(route_id: str, kind: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A route as sessions hold it: id and type first, then its fields without empty ones."""
    model: type[KeyRoute | ControlRoute | PageRoute | CueRoute] = (
        KeyRoute if kind == "key" else PageRoute if kind == "page" else
        CueRoute if kind == "cue" else ControlRoute)
    body = {k: v for k, v in fields.items() if k not in ("id", "type")}
    dumped = model.model_validate({**body, "id": route_id}).model_dump(mode="json",
                                                                      exclude_none=True)
    dumped.pop("id", None)
    return {"id": route_id, "type": kind, **dumped}


def render(session: Session, name: str, saved_at: float | None = None) -> str:
    """The TOML text of a session, with a header saying what it is."""
    when = time.time() if saved_at is None else saved_at
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"scorch session {name!r}: the desired state of every room."))
    doc.add(tomlkit.comment("Edit it by hand if you like: `scorch session diff NAME` shows "
                            "what loading it"))
    doc.add(tomlkit.comment("would change, and a mistake is reported with its line before "
                            "anything changes."))
    doc.add("version", SESSION_VERSION)
    doc.add("saved_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)))
    tempos = dict(session.tempos)
    if tempos:
        bpm = tempos.pop(INSTALLATION, None)
        tempo = _table({"bpm": bpm}) if bpm is not None else tomlkit.table(is_super_table=True)
        if tempos:
            tempo.add("groups", _tables({group: {"bpm": bpm} for group, bpm in tempos.items()}))
        doc.add("tempo", tempo)
    if session.rooms:
        rooms = tomlkit.table(is_super_table=True)
        for room, spec in session.rooms.items():
            if not spec.nodes and not spec.buffers and not spec.patterns_known:
                rooms.add(room, _table({"gain_db": spec.gain_db}))
                continue
            parts = tomlkit.table(is_super_table=spec.gain_db is None)
            if spec.gain_db is not None:
                parts.add("gain_db", spec.gain_db)
            if spec.buffers:
                parts.add("buffers", _tables({b: {"path": buf.path, "bufnum": buf.bufnum}
                                              for b, buf in spec.buffers.items()}))
            if spec.nodes:
                parts.add("nodes", _tables({n: {
                    "synthdef": node.synthdef, "params": dict(node.params),
                    "target": node.target, "add_action": _unless_default(node)}
                    for n, node in spec.nodes.items()}))
            if spec.patterns_known:  # an empty table too: none play, which loading restores
                parts.add("patterns", _tables({k: {"kind": p.kind, "name": p.name,
                                                   "playing": p.playing, "text": p.text,
                                                   **({"mute": p.mute} if p.mute else {})}
                                               for k, p in spec.patterns.items()})
                          if spec.patterns else tomlkit.table())
            rooms.add(room, parts)
        doc.add("rooms", rooms)
    if session.routes:
        routes = tomlkit.aot()
        for route in session.routes:
            routes.append(_table(route))
        midi = tomlkit.table(is_super_table=True)
        midi.add("routes", routes)
        doc.add("midi", midi)
    return tomlkit.dumps(doc)


def _unless_default(node: NodeSpec) -> str | None:
    """The node's add action, unless it is what reading leaves out: after its target, or
    the default group's tail."""
    default = "after" if node.target is not None else "tail"
    return None if node.add_action in (default, None) else node.add_action


def _tables(tables: Mapping[str, Mapping[str, Any]]) -> Table:
    """``[prefix.NAME]`` for each name: one table per thing, no header of their own."""
    outer = tomlkit.table(is_super_table=True)
    for name, values in tables.items():
        outer.add(name, _table(values))
    return outer


def _table(values: Mapping[str, Any]) -> Table:
    """A table of keys, one per line, their values inline; None values left out."""
    table = tomlkit.table()
    for key, value in values.items():
        if value is not None:
            table.add(key, toml_inline(value))
    return table


def toml_inline(value: Any) -> Item:
    """One value as TOML writes it inline (lists and tables on one line), finite numbers only."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"a session holds finite numbers only, found {value!r}")
    if isinstance(value, Mapping):
        table = tomlkit.inline_table()
        for key, item in value.items():
            table.append(str(key), toml_inline(item))
        return table
    if isinstance(value, list | tuple):
        array = tomlkit.array()
        array.extend(toml_inline(item) for item in value)
        return array
    return tomlkit.item(value)


# --- reading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """What a session file needs checked against: the installation and its library."""

    config: Config
    library: SynthDefLibrary
    resume: bool = False
    """For --resume: sound files are not checked (what fails to load is reported with
    the other failures), and what this installation cannot take (a room, group,
    SynthDef or param it no longer has) is left out with a warning instead of refusing
    the file."""


def parse(text: str, path: Path, reading: Reading) -> Session:
    """Read a session file; SessionFileError lists every problem with its line."""
    try:
        check_toml(text)
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, TooDeep) as err:
        raise SessionFileError(f"{path}: invalid TOML: {err}") from err
    lines = key_lines(text)

    def where(loc: tuple[str, ...]) -> str:
        return located(path, lines, loc)

    try:
        doc = SessionDoc.model_validate(data)
    except ValidationError as err:
        raise SessionFileError("\n".join(describe_errors(err, where=where, noun="key"))) from err
    problems: list[str] = []

    def problem(loc: tuple[str, ...], message: str) -> None:
        problems.append(f"{where(loc)}: {'.'.join(loc)}: {message}")

    config = reading.config
    rooms: dict[str, RoomSpec] = {}
    loc: tuple[str, ...]
    for room, rdoc in doc.rooms.items():
        if room not in config.instances:
            problem(("rooms", room), f"no room {room!r} in this installation; rooms: "
                    f"{', '.join(config.instances)}")
            continue
        bufnums: dict[int, str] = {}
        buffers: dict[str, BufferSpec] = {}
        for bname, bdoc in rdoc.buffers.items():
            loc = ("rooms", room, "buffers", bname)
            if bdoc.bufnum in bufnums:
                problem((*loc, "bufnum"), f"bufnum {bdoc.bufnum} is also buffer "
                        f"{bufnums[bdoc.bufnum]!r}'s")
                continue
            bufnums[bdoc.bufnum] = bname
            if not reading.resume:
                try:
                    resolve_sample(bdoc.path, config.sample_folders(),
                                   int(config.samples.max_mb * MB))
                except (SampleNotFound, SessionFileError, ValueError) as err:
                    problem((*loc, "path"), str(err))
                    continue
            buffers[bname] = BufferSpec(bdoc.path, bdoc.bufnum)
        nodes: dict[str, NodeSpec] = {}
        for nname, ndoc in rdoc.nodes.items():
            loc = ("rooms", room, "nodes", nname)
            try:
                info = reading.library.info(ndoc.synthdef)
            except UnknownSynthDef as err:
                problem((*loc, "synthdef"), str(err))
                continue
            known = [p.name for p in info.params]
            for param in ndoc.params:
                if param not in known:
                    problem((*loc, "params", param), f"SynthDef {ndoc.synthdef!r} has no param "
                            f"{param!r}; its params: {', '.join(known)}")
            placed = ndoc.add_action or ("after" if ndoc.target is not None else "tail")
            nodes[nname] = NodeSpec(ndoc.synthdef, {p: v for p, v in ndoc.params.items()
                                                    if p in known}, ndoc.target,
                                    placed if doc.version >= 3 or ndoc.target else None)
        for nname, why in placement_problems(nodes).items():
            problem(("rooms", room, "nodes", nname, "target"), why)
            nodes[nname] = replace(nodes[nname], target=None, add_action=None)
        patterns = {}
        for key, pdoc in (rdoc.patterns or {}).items():
            if key != pattern_key(pdoc.kind, pdoc.name):
                problem(("rooms", room, "patterns", key), "the key must be its kind and name, "
                        f"{pattern_key(pdoc.kind, pdoc.name)!r}")
                continue
            patterns[key] = PatternSpec(pdoc.kind, pdoc.name, pdoc.playing, pdoc.text,
                                        pdoc.mute)
        rooms[room] = RoomSpec(nodes=nodes, buffers=buffers, patterns=patterns,
                               patterns_known=rdoc.patterns is not None,
                               gain_db=rdoc.gain_db)
    routes = []
    for index, raw in enumerate(doc.midi.routes):
        loc = ("midi", "routes", str(index))
        kind, rid = raw.get("type"), raw.get("id")
        if kind not in ("control", "key", "page", "cue"):
            problem((*loc, "type"), f"expected 'control', 'key', 'page' or 'cue', found {kind!r}")
            continue
        if not isinstance(rid, str):
            problem((*loc, "id"), "every route needs its id (a name)")
            continue
        try:
            route = canonical_route(rid, kind, raw)
        except ValidationError as err:
            problems += describe_errors(_located(err, loc), where=where, noun="key")
            continue
        try:
            config.resolve(route["instance"])
        except KeyError as err:
            problem((*loc, "instance"), str(err))
            continue
        routes.append(route)
    ids = [r["id"] for r in routes]
    for rid in sorted({i for i in ids if ids.count(i) > 1}):
        problem(("midi", "routes"), f"route id {rid!r} appears more than once")
    routes = [r for index, r in enumerate(routes) if ids.index(r["id"]) == index]  # the first
    tempos = {INSTALLATION: doc.tempo.bpm} if doc.tempo.bpm is not None else {}
    for group, gdoc in doc.tempo.groups.items():
        if group not in config.tempo.groups:
            problem(("tempo", "groups", group), f"group {group!r} has no tempo of its own in "
                    f"this installation; groups with one: "
                    f"{', '.join(config.tempo.groups) or '(none)'}")
            continue
        tempos[group] = gdoc.bpm
    if problems and not reading.resume:
        raise SessionFileError("\n".join(problems))
    for left_out in problems:
        log.warning("left out of the session: %s", left_out)
    return Session(rooms=rooms, routes=tuple(routes), tempos=tempos)


def _located(err: ValidationError, prefix: tuple[str, ...]) -> ValidationError:
    """The same errors with ``prefix`` in front of every location."""
    items = [{**item, "loc": (*prefix, *item["loc"])} for item in err.errors(include_url=False)]
    return ValidationError.from_exception_data(err.title, items)  # type: ignore[arg-type]


# --- the folder ------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionFile:
    """A saved session as the folder lists it."""

    name: str
    path: Path
    modified: float
    size: int


class SessionStore:
    """The sessions folder: one TOML file per session name."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, name: str) -> Path:
        """Where session ``name`` is kept (names are checked: no path can escape)."""
        return self.folder / f"{name}{SUFFIX}"

    def write(self, name: str, text: str) -> Path:
        """Save session text atomically; return its path."""
        path = self.path(name)
        write_atomically(path, text.encode("utf-8"))
        return path

    def read(self, name: str) -> tuple[str, Path]:
        """A session's text and path; SessionNotFound lists the saved ones."""
        path = self.path(name)
        try:
            if path.stat().st_size > MAX_FILE:
                raise SessionFileError(f"{path} is over {MAX_FILE // MB} MB: not a session file")
            return path.read_text(encoding="utf-8"), path
        except FileNotFoundError:
            saved = [f.name for f in self.list()]
            raise SessionNotFound(f"no session {name!r}; saved sessions: "
                                  f"{', '.join(saved) or '(none)'}", name=name, known=saved
                                  ) from None
        except UnicodeDecodeError as err:
            raise SessionFileError(f"{path}: not UTF-8 text ({err.reason} at byte "
                                   f"{err.start})") from None

    def list(self) -> list[SessionFile]:
        """Every saved session, newest first."""
        found = []
        for path in self.folder.glob(f"*{SUFFIX}"):
            try:
                st = path.stat()
            except OSError:
                continue
            found.append(SessionFile(path.stem, path, st.st_mtime, st.st_size))
        return sorted(found, key=lambda f: f.modified, reverse=True)

    def delete(self, name: str) -> Path:
        """Remove a saved session."""
        path = self.path(name)
        try:
            path.unlink()
        except FileNotFoundError:
            self.read(name)  # raises SessionNotFound with the list
        return path
