"""Render offline with ``scsynth -N``: a library SynthDef with params, or an sclang Score.

Nothing needs a running room. Each render is cached under the state directory
by the hash of everything that makes its sound (the SynthDef's bytes, the
params, the length, the format; for a Score its code and the library's bytes),
so asking again costs a file read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorch.app.studio.hearing import hear
from scorch.errors import InvalidRequest
from scorch.primitives.disk import Folders, write_atomically
from scorch.primitives.sclang import guard_env, guard_path, write_guard
from scorch.primitives.scsynth import AddAction, commands, nrt
from scorch.primitives.synthdefs import SynthDefInfo, SynthDefLibrary

#: Bump when a render's inputs or its cached record change shape.
_CACHE_VERSION = 2
#: The node a SynthDef is rendered as, and the longest release tail waited for.
_NODE = 1000
_MAX_TAIL = 10.0
_AFTER_RELEASE = 0.1
#: The longest render, in seconds of sound.
MAX_RENDER = 600.0
#: How many renders the cache keeps (the newest; each is a sound file, a PNG and a record).
KEEP_RENDERS = 100


@dataclass(frozen=True)
class Rendered:
    """A rendered file, its picture and what is in it."""

    path: Path
    picture: Path
    label: str
    report: Any
    """The :class:`~scorch.audio.report.SoundReport`."""
    cached: bool
    render_seconds: float
    """How long scsynth took (0 when the render came from the cache)."""
    warnings: list[str] = field(default_factory=list)


class Renderer:
    """Renders into ``folder``, one file set per distinct request; thread-safe."""

    def __init__(self, folder: Path, library: SynthDefLibrary, sample_rate: int) -> None:
        self.folder = folder.resolve()
        self.library = library
        self.sample_rate = sample_rate

    def synthdef(self, name: str, params: Mapping[str, float], duration: float, fmt: str,
                 channels: int) -> Rendered:
        """Play library SynthDef ``name`` for ``duration`` s (then release it, if it holds)."""
        info = self.library.info(name)
        compiled = self.library.compiled(name)
        length = duration + (_tail(info, params) if info.sustained else 0.0)
        key = _key({"synthdef": hashlib.sha256(compiled).hexdigest(), "params": dict(params),
                    "duration": duration}, fmt, channels, self.sample_rate)
        shown = " ".join(f"{k}={v:g}" for k, v in params.items())
        label = f"render {name}{' ' + shown if shown else ''}, {length:g} s"

        def score() -> tuple[list[nrt.Bundle], list[str]]:
            bundles = [nrt.bundle(0.0, commands.d_recv(compiled), commands.s_new(
                name, _NODE, AddAction.HEAD, commands.ROOT_NODE, commands.controls(params)))]
            if info.sustained:
                bundles.append(nrt.bundle(duration, commands.n_set(_NODE, {"gate": 0.0})))
            return [*bundles, nrt.end_marker(length)], []

        return self._render(key, label, fmt, channels, score)

    def code(self, code: str, duration: float | None, fmt: str, channels: int,
             guard: Mapping[str, str] | None = None) -> Rendered:
        """Render the Score sclang ``code`` evaluates to; the library's SynthDefs are loaded.

        ``guard``: the environment naming sclang's guard file, as a room's sclang has it
        (default: one that lets the code write in this folder alone, where the score goes).
        """
        if guard is None:
            guard = guard_env(self.folder, "render")
            write_guard(guard_path(self.folder, "render"), False, Folders.of([self.folder], [], []))
        library = hashlib.sha256(b"".join(
            self.library.compiled(n) for n in self.library.names())).hexdigest()
        key = _key({"code": code, "library": library, "duration": duration}, fmt, channels,
                   self.sample_rate)
        label = "render of a Score"

        def score() -> tuple[list[nrt.Bundle], list[str]]:
            written = self.folder / f".{key}.{os.getpid()}.{threading.get_ident()}.osc"
            try:
                end = nrt.score_from_code(code, written, timeout=60.0, guard=guard)
                bundles = nrt.decode_score(written.read_bytes())
            finally:
                written.unlink(missing_ok=True)
            length = duration if duration is not None else end
            if not 0 < length <= MAX_RENDER:
                raise InvalidRequest(
                    f"the score ends at {end:g} s: give `duration` (0 to {MAX_RENDER:g} s)"
                    if duration is None else f"duration {length:g} is out of range")
            kept = [b for b in bundles if b.time <= length]
            left_out = len(bundles) - len(kept)
            warnings = ([f"{left_out} bundle{'s' if left_out > 1 else ''} after {length:g} s "
                         "left out"] if left_out else [])
            defs = [commands.d_recv(self.library.compiled(n)) for n in self.library.names()]
            return [nrt.bundle(0.0, *defs), *kept, nrt.end_marker(length)], warnings

        return self._render(key, label, fmt, channels, score)

    def _render(self, key: str, label: str, fmt: str, channels: int,
                score: Any) -> Rendered:
        from scorch.audio import SoundReport

        audio = self.folder / f"{key}.{fmt}"
        picture = self.folder / f"{key}.png"
        record = self.folder / f"{key}.json"
        try:
            cached = json.loads(record.read_text(encoding="utf-8"))
            if audio.exists() and picture.exists():
                return Rendered(audio, picture, cached["label"],
                                SoundReport.model_validate(cached["report"]), True, 0.0,
                                cached.get("warnings", []))
        except (OSError, ValueError, KeyError):
            pass
        self.folder.mkdir(parents=True, exist_ok=True)
        bundles, warnings = score()
        own = f"{os.getpid()}.{threading.get_ident()}"
        score_path = self.folder / f".{key}.{own}.osc"
        partial = self.folder / f".{key}.{own}.{fmt}"
        try:
            score_path.write_bytes(nrt.encode_score(bundles))
            started = time.perf_counter()
            nrt.render(score_path, partial, sample_rate=self.sample_rate, channels=channels,
                       fmt=fmt, timeout=120.0)
            elapsed = time.perf_counter() - started
            os.replace(partial, audio)
        finally:
            score_path.unlink(missing_ok=True)
            partial.unlink(missing_ok=True)
        report = hear(audio, picture, label)
        write_atomically(record, json.dumps({"label": label, "report": report.model_dump(),
                                             "warnings": warnings}).encode(), durable=False)
        self._prune()
        return Rendered(audio, picture, label, report, False, elapsed, warnings)

    def _prune(self) -> None:
        """Forget all but the newest :data:`KEEP_RENDERS` renders."""
        def age(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        records = sorted(self.folder.glob("*.json"), key=age, reverse=True)
        for old in records[KEEP_RENDERS:]:
            for path in self.folder.glob(f"{old.stem}.*"):
                path.unlink(missing_ok=True)


def _tail(info: SynthDefInfo, params: Mapping[str, float]) -> float:
    """How long a released sound takes to fade: its ``rel``, else a second."""
    release = params.get("rel")
    if release is None:
        release = next((p.default for p in info.params if p.name == "rel"), 1.0)
    return min(_MAX_TAIL, max(0.0, float(release))) + _AFTER_RELEASE


def _key(request: dict[str, Any], fmt: str, channels: int, sample_rate: int) -> str:
    """The cache key: a hash of everything that makes the sound."""
    text = json.dumps({**request, "format": fmt, "channels": channels, "rate": sample_rate,
                       "v": _CACHE_VERSION}, sort_keys=True, default=_finite)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    raise TypeError(f"cannot hash {type(value).__name__}")
