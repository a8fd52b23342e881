"""Read the SynthDef library: one ``.scd`` per sound, with param specs in its metadata.

Each ``synthdefs/NAME.scd`` evaluates to ``SynthDef(\\NAME, {...}, metadata: (...))``.
The metadata convention (documented in ``synthdefs/README.md``)::

    metadata: (
        description: "one line",
        category: \\drums,                       // drums, bass, pad, lead or fx
        specs: (freq: ControlSpec(20, 2000, \\exp, 0, 220, "Hz"), ...),
        descriptions: (freq: "Pitch of the body", ...),
    )

Metadata is read without a running server: one headless ``sclang`` run compiles
every changed file, writes its ``.scsyndef`` bytes and dumps its metadata as
JSON. Results are cached by a hash of each file's contents, so a second load of
an unchanged library does not start ``sclang`` at all. A file that fails (syntax
error, runtime error, missing specs or descriptions) is reported by name in
:attr:`SynthDefLibrary.errors` and does not stop the others.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorch import bundled
from scorch.errors import SynthDefError, UnknownSynthDef
from scorch.primitives.disk import cache_folder, write_json_atomically
from scorch.primitives.synthdefs.compiler import compile_with_sclang
from scorch.primitives.synthdefs.descs import write_descs
from scorch.primitives.synthdefs.warps import WARP_ALIASES

#: The categories a SynthDef may declare in ``metadata.category``.
CATEGORIES = ("drums", "bass", "pad", "lead", "fx", "sampler")

#: Controls that are bus numbers: a spec and a description are optional for these.
BUS_CONTROLS = ("out", "in")

#: The built-in SynthDefs (package data; in a checkout, its own synthdefs/).
DEFAULT_DIRECTORY = bundled.synthdefs()

# Bump when the generated sclang script or the cached record changes shape.
_CACHE_SCHEMA = "2"


_BUS_SPEC = {"minval": 0, "maxval": 1023, "warp": "lin", "default": 0, "step": 1, "units": "bus"}



@dataclass(frozen=True)
class ParamSpec:
    """One control of a SynthDef with the range MIDI and MCP may use."""

    name: str
    default: float
    """The SynthDef's own default for this control (what a bare ``/s_new`` plays)."""
    minval: float
    maxval: float
    warp: str
    """``lin``, ``exp``, ``db``, ``amp``, ``cos``, ``sin``, or a curve number as a string."""
    step: float
    units: str
    description: str


@dataclass(frozen=True)
class SynthDefInfo:
    """What the library knows about one SynthDef, read without a running server."""

    name: str
    description: str
    category: str
    sustained: bool
    """Has a ``gate`` control: plays until ``gate`` is set to 0, then frees after release."""
    pitched: bool
    """Has a ``freq`` control that sets its pitch in Hz."""
    params: tuple[ParamSpec, ...]
    source: Path

    def param(self, name: str) -> ParamSpec:
        """Return the param called ``name``; raise KeyError if there is none."""
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(f"SynthDef {self.name!r} has no param {name!r}")


def default_cache_dir() -> Path:
    """Return where compiled SynthDefs are cached (``$XDG_CACHE_HOME/scorch/synthdefs``)."""
    return cache_folder("synthdefs")


class SynthDefLibrary:
    """The SynthDefs of one directory: their metadata, compiled bytes and load errors.

    Loading compiles what is not cached yet with one ``sclang`` run (no server is
    booted). Nothing raises for a bad file: it is listed in :attr:`errors`.
    """

    def __init__(
        self,
        directory: Path | str | None = None,
        *,
        cache_dir: Path | str | None = None,
        sclang: str = "sclang",
        timeout: float = 60.0,
    ) -> None:
        self.directory = Path(directory) if directory is not None else DEFAULT_DIRECTORY
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._sclang = sclang
        self._timeout = timeout
        self._infos: dict[str, SynthDefInfo] = {}
        self._bytes: dict[str, bytes] = {}
        self._errors: dict[str, str] = {}
        self._metadata: dict[str, str] = {}
        self._descs: Path | None = None
        self._load()

    def names(self) -> list[str]:
        """Return the names of the SynthDefs that loaded, sorted."""
        return sorted(self._infos)

    def all(self) -> list[SynthDefInfo]:
        """Return every SynthDef that loaded, sorted by name."""
        return [self._infos[name] for name in self.names()]

    def info(self, name: str) -> SynthDefInfo:
        """Return the metadata of ``name``; raise UnknownSynthDef if it did not load."""
        return self._infos[self._check(name)]

    def compiled(self, name: str) -> bytes:
        """Return the ``.scsyndef`` bytes of ``name``, ready for ``/d_recv``."""
        return self._bytes[self._check(name)]

    def synthdescs(self) -> Path:
        """Return the directory sclang reads every SynthDesc from (written on first use)."""
        if self._descs is None:
            self._descs = write_descs(self.cache_dir, {
                name: (self._bytes[name], self._metadata.get(name, "")) for name in self.names()})
        return self._descs

    @property
    def errors(self) -> dict[str, str]:
        """Return the SynthDefs that failed to load, by name, with the reason."""
        return dict(self._errors)

    def __contains__(self, name: object) -> bool:
        return name in self._infos

    def __len__(self) -> int:
        return len(self._infos)

    def _check(self, name: str) -> str:
        if name in self._infos:
            return name
        if name in self._errors:
            raise UnknownSynthDef(f"SynthDef {name!r} failed to load: {self._errors[name]}")
        known = self.names()
        raise UnknownSynthDef(f"unknown SynthDef {name!r}; known: {', '.join(known) or 'none'}",
                              name=name, known=known)

    def _load(self) -> None:
        if not self.directory.is_dir():
            raise SynthDefError(f"SynthDef directory not found: {self.directory}")
        sources = sorted(self.directory.glob("*.scd"))
        records: dict[Path, dict[str, Any]] = {}
        missing: list[tuple[Path, Path]] = []
        for path in sources:
            cached = self.cache_dir / f"{_cache_key(path)}.json"
            try:
                records[path] = json.loads(cached.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                missing.append((path, cached))
        if missing:
            fresh = compile_with_sclang(
                [path for path, _ in missing], self.cache_dir, self._sclang, self._timeout
            )
            for path, cached in missing:
                record = fresh[path]
                records[path] = record
                if not record.get("transient"):
                    write_json_atomically(cached, record, durable=False)
        for path in sources:
            name = path.stem
            try:
                info, data = _parse_record(name, path, records[path])
            except SynthDefError as err:
                self._errors[name] = str(err)
                continue
            self._infos[name] = info
            self._bytes[name] = data
            self._metadata[name] = str(records[path]["raw"].get("metadata") or "")


def _cache_key(path: Path) -> str:
    digest = hashlib.sha256()
    digest.update(f"scorch-synthdef-v{_CACHE_SCHEMA}\0{path.stem}\0".encode())
    digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SynthDefError(f"{what} is not a finite number: {value!r}")
    return float(value)


def _warp(value: Any, control: str) -> str:
    text = str(value)
    if text in WARP_ALIASES:
        return WARP_ALIASES[text]
    try:
        return repr(float(text)) if float(text) != int(float(text)) else str(int(float(text)))
    except ValueError:
        raise SynthDefError(f"spec for {control!r} has an unknown warp {text!r}") from None


def _parse_record(name: str, source: Path, record: Mapping[str, Any]) -> tuple[SynthDefInfo, bytes]:
    """Validate one compiled record against the metadata convention."""
    if "error" in record:
        raise SynthDefError(str(record["error"]))
    raw = record["raw"]
    problems: list[str] = []
    if raw.get("name") != name:
        problems.append(f"the SynthDef is named {raw.get('name')!r}; the file must be {name}.scd")
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("metadata has no description")
    category = raw.get("category")
    if category not in CATEGORIES:
        problems.append(f"metadata category {category!r} is not one of {', '.join(CATEGORIES)}")
    specs = raw.get("specs")
    descriptions = raw.get("descriptions") or {}
    if specs is None:
        problems.append("metadata has no specs")
        specs = {}
    controls = [c["name"] for c in raw.get("controls", [])]
    params: list[ParamSpec] = []
    for control in raw.get("controls", []):
        cname = control["name"]
        spec = specs.get(cname)
        text = descriptions.get(cname)
        if cname in BUS_CONTROLS:
            spec = spec if spec is not None else _BUS_SPEC
            text = text or f"Bus index for {cname}"
        if spec is None:
            problems.append(f"control {cname!r} has no spec")
            continue
        if isinstance(spec, str):
            problems.append(f"spec for {cname!r} is {spec}")
            continue
        if not isinstance(text, str) or not text.strip():
            problems.append(f"control {cname!r} has no description")
            continue
        try:
            default = _number(control["default"], f"default of {cname!r}")
            minval = _number(spec["minval"], f"minval of {cname!r}")
            maxval = _number(spec["maxval"], f"maxval of {cname!r}")
            param = ParamSpec(
                name=cname, default=default, minval=minval, maxval=maxval,
                warp=_warp(spec["warp"], cname), step=_number(spec["step"], f"step of {cname!r}"),
                units=str(spec.get("units") or ""), description=text.strip(),
            )
        except SynthDefError as err:
            problems.append(str(err))
            continue
        low, high = sorted((param.minval, param.maxval))
        if not low <= param.default <= high:
            problems.append(f"default {param.default:g} of {cname!r} is outside its spec "
                            f"[{param.minval:g}, {param.maxval:g}]")
        params.append(param)
    for orphan in sorted(set(specs) - set(controls)):
        problems.append(f"spec for {orphan!r} names no control")
    for orphan in sorted(set(descriptions) - set(controls)):
        problems.append(f"description for {orphan!r} names no control")
    if problems:
        raise SynthDefError("; ".join(problems))
    info = SynthDefInfo(
        name=name, description=str(description).strip(), category=str(category),
        sustained="gate" in controls, pitched="freq" in controls,
        params=tuple(params), source=source,
    )
    return info, base64.b64decode(record["scsyndef"])
