"""Read and validate ``config.toml`` once, at the edge; the rest of scorch trusts it.

Every error names the file, the line where it can, the key path, what was
expected and what was found. Unknown keys are refused with the nearest valid name.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from midi.schema import MidiConfig
from scorch.errors import ConfigError, InstanceNotFound
from scorch.state.restart_policy import Backoff, RestartIntensity
from scorch.state.tempo import INSTALLATION, MAX_BPM, MIN_BPM, Timeline
from scorch.values import (
    Float32,
    GroupName,
    InstanceName,
    NodeName,
    ParamName,
    describe_errors,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = REPO_ROOT / "config.toml"

Port = Annotated[int, Field(ge=1024, le=65535)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AudioConfig(_Model):
    """The ``[audio]`` table: where the instances' sound goes."""

    driver: Literal["dummy", "jack", "alsa"] = Field(
        "dummy",
        description="dummy: scorch runs a headless jackd; jack: use a running JACK server; "
        "alsa: scorch runs jackd on a sound card",
    )
    jack_server: str = Field("scorch", pattern=r"^[A-Za-z0-9_.-]+$", description="JACK server name")
    sample_rate: int = Field(48000, ge=8000, le=192000)
    period: int = Field(64, ge=16, le=8192, description="JACK frames per period")
    device: str | None = Field(None, description="ALSA device for driver = 'alsa', e.g. 'hw:0'")
    realtime: bool = Field(
        False, description="run scorch's jackd with realtime scheduling (-R; needs realtime "
        "rights): on a loaded machine a JACK client without it misses cycles, and JACK drops "
        "the MIDI of the cycles it missed")

    @field_validator("period")
    @classmethod
    def _power_of_two(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError(f"period must be a power of two (64, 128, 256...), found {value}")
        return value

    @model_validator(mode="after")
    def _device_for_alsa(self) -> AudioConfig:
        if self.driver == "alsa" and not self.device:
            raise ValueError("driver = 'alsa' needs device = 'hw:N' (see `aplay -l`)")
        return self


class NodeConfig(_Model):
    """A named persistent synth that the instance plays from boot."""

    synthdef: str
    params: dict[ParamName, Float32] = Field(default_factory=dict)


class InstanceConfig(_Model):
    """One ``[instances.NAME]`` table: a scsynth plus its sclang."""

    port: Port | None = Field(None, description="scsynth UDP port; omitted picks a free one")
    outputs: int = Field(2, ge=0, le=128)
    inputs: int = Field(0, ge=0, le=128)
    group: GroupName | None = None
    connect: tuple[str, ...] = Field((), description="JACK playback ports for the outputs")
    synthdefs: tuple[str, ...] | Literal["all"] = ()
    startup: Path | None = Field(None, description=".scd file run after boot")
    nodes: dict[NodeName, NodeConfig] = Field(default_factory=dict)


class WatchdogConfig(_Model):
    """The ``[watchdog]`` table: health checks and restart policy."""

    interval: float = Field(0.5, gt=0, le=60, description="seconds between health pings")
    missed: int = Field(4, ge=1, le=100, description="missed replies before a process is hung")
    busy_limit: float = Field(
        30.0, gt=0, description="silence allowed from a process still using CPU (scsynth "
        "computing a large buffer answers nothing until done), seconds",
    )
    max_restarts: int = Field(5, ge=0, description="restarts allowed within `period`")
    period: float = Field(60.0, gt=0, description="restart intensity window, seconds")
    backoff_min: float = Field(0.05, ge=0, description="first retry delay, seconds")
    backoff_max: float = Field(10.0, gt=0, description="longest retry delay, seconds")
    stable_after: float = Field(30.0, ge=0, description="READY this long resets the backoff")

    def backoff(self) -> Backoff:
        """The waits between restarts this table describes."""
        return Backoff(self.backoff_min, self.backoff_max, self.stable_after)

    def intensity(self) -> RestartIntensity:
        """A fresh restart count under this table's limit (each supervised thing has its own)."""
        return RestartIntensity(self.max_restarts, self.period)

    @model_validator(mode="after")
    def _bounds(self) -> WatchdogConfig:
        if self.backoff_min > self.backoff_max:
            raise ValueError(
                f"backoff_min ({self.backoff_min}) is larger than backoff_max ({self.backoff_max})"
            )
        return self


class GroupTempo(_Model):
    """A ``[tempo.groups.NAME]`` table: a group that plays at its own tempo."""

    bpm: float = Field(ge=MIN_BPM, le=MAX_BPM, description="beats per minute")
    beats_per_bar: int = Field(4, ge=1, le=64, description="beats in a bar (the bar phase)")


class TempoConfig(_Model):
    """The ``[tempo]`` table: one beat grid for every room, MIDI clock and Link."""

    bpm: float = Field(120.0, ge=MIN_BPM, le=MAX_BPM, description="beats per minute at start")
    beats_per_bar: int = Field(4, ge=1, le=64, description="beats in a bar: the bar phase "
                               "and Link's quantum")
    link: bool = Field(False, description="join an Ableton Link session through the rooms' "
                       "sclang LinkClock: tempo and phase shared with every Link peer")
    groups: dict[GroupName, GroupTempo] = Field(
        default_factory=dict, description="groups with a tempo of their own (not on Link)")


class Config(_Model):
    """A whole installation."""

    audio: AudioConfig = AudioConfig()
    instances: dict[InstanceName, InstanceConfig]
    watchdog: WatchdogConfig = WatchdogConfig()
    tempo: TempoConfig = TempoConfig()
    midi: MidiConfig = MidiConfig()
    state_dir: Path | None = Field(None, description="run-time state; default under ~/.local/state")
    source: Path | None = Field(None, exclude=True, description="the file this was read from")

    @model_validator(mode="after")
    def _cross_checks(self) -> Config:
        if not self.instances:
            raise ValueError("at least one [instances.NAME] table is needed")
        ports: dict[int, str] = {}
        for name, inst in self.instances.items():
            if inst.port is not None:
                if inst.port in ports:
                    raise ValueError(
                        f"instances {ports[inst.port]!r} and {name!r} both use port {inst.port}"
                    )
                ports[inst.port] = name
        clash = set(self.groups()) & set(self.instances)
        if clash:
            raise ValueError(f"group names clash with instance names: {', '.join(sorted(clash))}")
        return self

    def groups(self) -> dict[str, list[str]]:
        """Map each group name to its instances, in config order."""
        groups: dict[str, list[str]] = {}
        for name, inst in self.instances.items():
            if inst.group:
                groups.setdefault(inst.group, []).append(name)
        return groups

    def resolve(self, selector: str) -> list[str]:
        """An instance name, a group name or ``"*"`` to instance names, in config order."""
        if selector == "*":
            return list(self.instances)
        if selector in self.instances:
            return [selector]
        groups = self.groups()
        if selector in groups:
            return groups[selector]
        raise InstanceNotFound(selector, list(self.instances), list(groups))

    def tempo_scope(self, instance_or_group: str | None) -> str:
        """The tempo an instance or group plays at: its group's own, else the installation's."""
        if instance_or_group is None:
            return INSTALLATION
        group = instance_or_group
        if instance_or_group in self.instances:
            group = self.instances[instance_or_group].group or ""
        return group if group in self.tempo.groups else INSTALLATION

    def timelines(self, now: float) -> dict[str, Timeline]:
        """The beat grids at start: the installation's and each group's own, beat 0 now."""
        out = {INSTALLATION: Timeline(self.tempo.bpm, self.tempo.beats_per_bar, 0.0, now)}
        for group, own in self.tempo.groups.items():
            out[group] = Timeline(own.bpm, own.beats_per_bar, 0.0, now)
        return out

    def resolve_path(self, path: Path) -> Path:
        """Resolve a path from the config relative to the config file's folder."""
        path = path.expanduser()
        if path.is_absolute() or self.source is None:
            return path
        return self.source.parent / path

    def state_path(self) -> Path:
        """The folder for run-time state (routes, control socket)."""
        if self.state_dir is not None:
            return self.resolve_path(self.state_dir)
        base = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))
        origin = str(self.source.resolve()) if self.source else "embedded"
        digest = hashlib.sha1(origin.encode()).hexdigest()[:8]
        stem = self.source.stem if self.source else "config"
        return base / "scorch" / f"{stem}-{digest}"


# --- reading -----------------------------------------------------------------


def find_config(arg: str | Path | None) -> Path:
    """The config ``--config`` names: that file, else ./config.toml, else the embedded one."""
    if arg:
        return Path(arg)
    local = Path("config.toml")
    return local if local.is_file() else DEFAULT_CONFIG


def load_config(path: Path | str | None = None) -> Config:
    """Read and validate a config file (default: the embedded ``config.toml``)."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        text = path.read_text()
    except FileNotFoundError as err:
        raise ConfigError(f"{path}: no such config file") from err
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from err
    return parse_config(text, path)


def parse_config(text: str, path: Path | str = "config.toml") -> Config:
    """Parse and validate TOML text; errors name ``path``, the line and the key path."""
    path = Path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from err
    try:
        config = Config.model_validate({**data, "source": path.resolve()})
    except ValidationError as err:
        raise ConfigError(_describe(err, text, path)) from err
    _check_references(config, text, path)
    return config


def _check_references(config: Config, text: str, path: Path) -> None:
    lines = key_lines(text)
    targets = [("controls", i, r.instance) for i, r in enumerate(config.midi.controls)]
    targets += [("keys", i, r.instance) for i, r in enumerate(config.midi.keys)]
    for table, index, selector in targets:
        try:
            config.resolve(selector)
        except InstanceNotFound as err:
            loc: tuple[str, ...] = ("midi", table, str(index), "instance")
            raise ConfigError(f"{_where(path, lines, loc)}: {'.'.join(loc)}: {err}") from None
    groups = config.groups()
    for group in config.tempo.groups:
        if group not in groups:
            loc = ("tempo", "groups", group)
            raise ConfigError(f"{_where(path, lines, loc)}: {'.'.join(loc)}: no instance is in "
                              f"group {group!r}; groups: {', '.join(groups) or 'none'}")
    for index, clock in enumerate(config.midi.clock_out):
        if clock.group is not None and clock.group not in groups:
            loc = ("midi", "clock_out", str(index), "group")
            raise ConfigError(f"{_where(path, lines, loc)}: {'.'.join(loc)}: no instance is in "
                              f"group {clock.group!r}; groups: {', '.join(groups) or 'none'}")
    for name, inst in config.instances.items():
        if inst.startup is not None and not config.resolve_path(inst.startup).is_file():
            loc = ("instances", name, "startup")
            raise ConfigError(
                f"{_where(path, lines, loc)}: {'.'.join(loc)}: expected an existing .scd file, "
                f"found {str(inst.startup)!r} (looked in {config.resolve_path(inst.startup)})"
            )


def _where(path: Path, lines: dict[tuple[str, ...], int], loc: tuple[str, ...]) -> str:
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return f"{path}:{lines[loc[:end]]}"
    return str(path)


def _describe(err: ValidationError, text: str, path: Path) -> str:
    lines = key_lines(text)
    return "\n".join(describe_errors(err, where=lambda loc: _where(path, lines, loc),
                                      known=_fields_at, noun="key"))


def _unwrap(annotation: Any) -> Any:
    """Find the model class inside Optional/Union/Annotated/containers, if any."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _unwrap(arg)
            if found is not None:
                return found
    is_model = isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation if is_model else None


def _fields_at(loc: tuple[str, ...]) -> list[str]:
    """The valid keys of the table at ``loc`` (walking models, dicts and lists)."""
    annotation: Any = Config
    for part in loc:
        model = _unwrap(annotation)
        if model is not None and part in model.model_fields:
            annotation = model.model_fields[part].annotation
            continue
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is dict:
            annotation = args[1]
        elif origin in (tuple, list):
            annotation = args[0]
        else:
            model = _unwrap(annotation)
            if model is None:
                return []
            annotation = model
    model = _unwrap(annotation)
    if model is None:
        return []
    return [name for name, field in model.model_fields.items() if not field.exclude]


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map key paths to the 1-based line that defines them (tables and keys)."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    array_counts: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            parts = tuple(p.strip().strip('"') for p in header.group(2).split("."))
            if header.group(1) == "[[":
                index = array_counts.get(parts, 0)
                array_counts[parts] = index + 1
                table = (*parts, str(index))
            else:
                table = parts
            lines.setdefault(table, number)
            for end in range(1, len(table)):
                lines.setdefault(table[:end], number)
            continue
        key = _KEY.match(line)
        if key:
            lines.setdefault((*table, key.group(1).strip('"')), number)
    return lines


def check_synthdefs(config: Config, known: set[str], failed: dict[str, str]) -> None:
    """Check every SynthDef the config names against the library; errors give the line."""
    text = config.source.read_text() if config.source and config.source.is_file() else ""
    path = config.source or Path("config.toml")
    lines = key_lines(text)
    problems = []
    for name, inst in config.instances.items():
        wanted: list[tuple[tuple[str, ...], str]] = [] if inst.synthdefs == "all" else [
            (("instances", name, "synthdefs"), d) for d in inst.synthdefs]
        wanted += [(("instances", name, "nodes", node, "synthdef"), n.synthdef)
                   for node, n in inst.nodes.items()]
        for loc, synthdef in wanted:
            if synthdef in known:
                continue
            if synthdef in failed:
                why = f"SynthDef {synthdef!r} failed to load: {failed[synthdef]}"
            else:
                near = difflib.get_close_matches(synthdef, sorted(known), n=1)
                hint = (f"did you mean {near[0]!r}?" if near
                        else f"known: {', '.join(sorted(known))}")
                why = f"no SynthDef {synthdef!r} in synthdefs/; {hint}"
            problems.append(f"{_where(path, lines, loc)}: {'.'.join(loc)}: {why}")
    if problems:
        raise ConfigError("\n".join(problems))
