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

from midi.schema import ControlRoute, KeyRoute, MidiConfig
from scorch.config_hosts import HostConfig, RemoteRoom
from scorch.errors import ConfigError, InstanceNotFound
from scorch.state.restart_policy import Backoff, RestartIntensity
from scorch.state.tempo import INSTALLATION, MAX_BPM, MIN_BPM, Timeline
from scorch.values import (
    Float32,
    GroupName,
    HostName,
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

    driver: Literal["auto", "dummy", "jack", "alsa"] = Field(
        "auto",
        description="auto: join a running JACK server ($JACK_DEFAULT_SERVER, else 'default'), "
        "else run jackd on the first sound card, else headless; dummy: scorch runs a headless "
        "jackd; jack: use the running JACK server `jack_server`; alsa: scorch runs jackd on "
        "`device`",
    )
    jack_server: str = Field("scorch", pattern=r"^[A-Za-z0-9_.-]+$",
                             description="JACK server name: scorch's own, or the one to join "
                             "with driver = 'jack'")
    sample_rate: int = Field(48000, ge=8000, le=192000)
    period: int = Field(64, ge=16, le=8192, description="JACK frames per period")
    device: str | None = Field(None, description="ALSA device for driver = 'alsa', e.g. 'hw:0' "
                               "(with 'auto': the card to use when no JACK server runs)")
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
    host: HostName | None = Field(None, description="the [hosts.NAME] that runs this room; "
                                  "none: this machine")


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


class SamplesConfig(_Model):
    """The ``[samples]`` table: where sound files are found, and how large one may be."""

    paths: tuple[Path, ...] = Field(
        (), description="folders searched for samples and for relative paths, in order "
        "(relative to the config file)")
    max_mb: float = Field(256.0, gt=0, le=4096,
                          description="largest sound file `buffer load` accepts, megabytes")


class SessionsConfig(_Model):
    """The ``[sessions]`` table: saved states of the whole installation."""

    autosave: float = Field(
        30.0, ge=0, le=86400,
        description="seconds between autosaves (0: only at shutdown); `scorch run --resume` "
        "starts from the last one")


class HistoryConfig(_Model):
    """The ``[history]`` table: how much of the execution history is kept."""

    max_age_days: float = Field(30.0, gt=0, le=36500,
                                description="executions older than this are forgotten, days")
    max_rows: int = Field(100_000, ge=100, le=10_000_000,
                          description="at most this many executions are kept (the newest)")


class DocsConfig(_Model):
    """The ``[docs]`` table: the SuperCollider docs index behind the ``docs`` tool."""

    build: Literal["background", "on-demand"] = Field(
        "background", description="background: check the index (and rebuild it if SuperCollider "
        "or its class library changed) once the rooms are READY; on-demand: at the first "
        "docs call")
    help_dir: Path | None = Field(None, description="the HelpSource folder; default: the one "
                                  "sclang reports, else the usual install locations")
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
    samples: SamplesConfig = SamplesConfig()
    sessions: SessionsConfig = SessionsConfig()
    history: HistoryConfig = HistoryConfig()
    docs: DocsConfig = DocsConfig()
    state_dir: Path | None = Field(None, description="run-time state; default under ~/.local/state")
    hosts: dict[HostName, HostConfig] = Field(
        default_factory=dict, description="the machines of an installation across several "
        "hosts (docs/hosts.md); rooms name theirs with `host`")
    source: Path | None = Field(None, exclude=True, description="the file this was read from")
    digest: str | None = Field(None, exclude=True,
                               description="a digest of the file's text, to compare copies")
    host: str | None = Field(None, exclude=True,
                             description="the host this config runs the rooms of (--host)")
    remote: dict[str, RemoteRoom] = Field(
        default_factory=dict, exclude=True,
        description="rooms other hosts run (set by for_host): MIDI routes may play them")
    whole_state: Path | None = Field(
        None, exclude=True, description="the whole installation's state folder (set by "
        "for_host): every host's folder is found from it")

    @model_validator(mode="after")
    def _cross_checks(self) -> Config:
        if not self.instances:
            raise ValueError("at least one [instances.NAME] table is needed")
        ports: dict[tuple[str, int], str] = {}
        for name, inst in self.instances.items():
            if inst.port is not None:
                key = (self.machine(inst.host), inst.port)
                if key in ports:
                    raise ValueError(
                        f"instances {ports[key]!r} and {name!r} both use port {inst.port}"
                        + (f" on {key[0]}" if self.hosts else "")
                    )
                ports[key] = name
        clash = set(self.groups()) & set(self.instances)
        if clash:
            raise ValueError(f"group names clash with instance names: {', '.join(sorted(clash))}")
        return self

    def machine(self, host: str | None) -> str:
        """The machine a host (None: this one) is, for what rooms on one machine share."""
        found = self.hosts.get(host) if host is not None else None
        return found.machine() if found is not None else "this machine"

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

    def resolve_everywhere(self, selector: str) -> list[str]:
        """Like :meth:`resolve`, over the rooms of every host (this host's first)."""
        if not self.remote:
            return self.resolve(selector)
        groups: dict[str, list[str]] = {}
        rooms = {name: inst.group for name, inst in self.instances.items()}
        rooms.update({name: room.group for name, room in self.remote.items()})
        for name, group in rooms.items():
            if group:
                groups.setdefault(group, []).append(name)
        if selector == "*":
            return list(rooms)
        if selector in rooms:
            return [selector]
        if selector in groups:
            return groups[selector]
        raise InstanceNotFound(selector, list(rooms), list(groups))
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

    def sample_folders(self) -> list[Path]:
        """The ``[samples] paths``, resolved against the config file's folder."""
        return [self.resolve_path(p) for p in self.samples.paths]

    def state_path(self) -> Path:
        """The folder for run-time state (routes, control socket, history, docs index)."""
        if self.state_dir is not None:
            return self.resolve_path(self.state_dir)
        base = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))
        origin = str(self.source.resolve()) if self.source else "embedded"
        digest = hashlib.sha1(origin.encode()).hexdigest()[:8]
        stem = self.source.stem if self.source else "config"
        return base / "scorch" / f"{stem}-{digest}"

    # --- several hosts ---------------------------------------------------------

    def host_audio(self, host: str) -> AudioConfig:
        """``[audio]`` with ``[hosts.HOST.audio]`` over it.

        A ``local`` host shares this machine's JACK registry, so unless it names
        its own server it gets ``<jack_server>-<host>``.
        """
        found = self.hosts[host]
        override = found.audio.model_dump(exclude_none=True)
        if found.transport == "local" and "jack_server" not in override:
            override["jack_server"] = f"{self.audio.jack_server}-{host}"
        return AudioConfig.model_validate({**self.audio.model_dump(), **override})

    def host_state_path(self, host: str | None) -> Path:
        """The state folder of a host's ``scorch run`` (None: the one without ``--host``)."""
        base = self.whole_state if self.whole_state is not None else self.state_path()
        if host is None:
            return base
        found = self.hosts[host]
        if found.state_dir is not None:
            return self.resolve_path(found.state_dir)
        return base / "hosts" / host

    def parts(self) -> list[str | None]:
        """The hosts that run rooms, in config order (None: rooms without a host)."""
        seen: dict[str | None, None] = {}
        for inst in self.instances.values():
            seen.setdefault(inst.host)
        return list(seen)

    def route_host(self, route: ControlRoute | KeyRoute) -> str | None:
        """The host a MIDI route runs on: its own ``host``, else that of the rooms it plays."""
        if route.host is not None:
            return route.host
        hosts = {self.instances[name].host for name in self.resolve(route.instance)}
        return hosts.pop() if len(hosts) == 1 else None

    def for_host(self, host: str | None) -> Config:
        """The part of the installation ``scorch run --host HOST`` runs (None: no ``--host``).

        Its rooms, its MIDI routes, its ``[audio]`` and state folder; the other
        hosts' rooms are kept in ``remote`` (MIDI routes may play them). A
        config without ``[hosts]`` is its own only part.
        """
        if host is None and not self.hosts:
            return self
        where = self.source or "the config"
        if host is not None and host not in self.hosts:
            known = ", ".join(self.hosts) or "none: the config has no [hosts] table"
            raise ConfigError(f"{where}: no [hosts.{host}]; hosts: {known}")
        rooms = {name: inst for name, inst in self.instances.items() if inst.host == host}
        if not rooms:
            if host is None:
                raise ConfigError(
                    f"{where}: every room runs on a host ([hosts]): on each host run "
                    "`scorch run --host NAME`; here, `scorch status` reaches them all")
            raise ConfigError(f"{where}: no room runs on host {host!r}: give rooms "
                              f'`host = "{host}"` in their [instances.NAME] table')
        midi = self.midi.model_copy(update={
            "controls": tuple(r for r in self.midi.controls if self.route_host(r) == host),
            "keys": tuple(r for r in self.midi.keys if self.route_host(r) == host)})
        # A group's own tempo runs where its rooms are: a host without them neither keeps
        # nor saves it.
        local_groups = {inst.group for inst in rooms.values()}
        tempo = self.tempo.model_copy(update={"groups": {
            g: own for g, own in self.tempo.groups.items() if g in local_groups}})
        update: dict[str, Any] = {
            "instances": rooms, "midi": midi, "host": host, "tempo": tempo,
            "whole_state": self.host_state_path(None),
            "remote": {name: RemoteRoom(host=inst.host, group=inst.group)
                       for name, inst in self.instances.items() if inst.host != host}}
        if host is not None:
            update["audio"] = self.host_audio(host)
            update["state_dir"] = self.host_state_path(host)
        return self.model_copy(update=update)

    def voice_slot(self) -> int | None:
        """Which share of MIDI voice ids this part's router takes (None: no [hosts], all)."""
        if not self.hosts:
            return None
        return 0 if self.host is None else 1 + list(self.hosts).index(self.host)

    def listen_address(self) -> str:
        """Where this part's scsynths listen for OSC (loopback unless its host says)."""
        return self.hosts[self.host].listen if self.host is not None else "127.0.0.1"


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
        config = Config.model_validate({
            **data, "source": path.resolve(),
            "digest": hashlib.sha256(text.encode()).hexdigest()[:16]})
    except ValidationError as err:
        raise ConfigError(_describe(err, text, path)) from err
    _check_references(config, text, path)
    return config


def _check_references(config: Config, text: str, path: Path) -> None:
    lines = key_lines(text)
    targets = [("controls", i, r.instance) for i, r in enumerate(config.midi.controls)]
    targets += [("keys", i, r.instance) for i, r in enumerate(config.midi.keys)]
    targets += [("scenes", i, r.instance) for i, r in enumerate(config.midi.scenes)]
    for table, index, selector in targets:
        try:
            config.resolve(selector)
        except InstanceNotFound as err:
            loc: tuple[str, ...] = ("midi", table, str(index), "instance")
            raise ConfigError(f"{_where(path, lines, loc)}: {'.'.join(loc)}: {err}") from None
    for index, folder in enumerate(config.samples.paths):
        if not config.resolve_path(folder).is_dir():
            loc = ("samples", "paths")
            raise ConfigError(
                f"{_where(path, lines, loc)}: samples.paths.{index}: expected an existing "
                f"folder, found {str(folder)!r} (looked in {config.resolve_path(folder)})")
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
    _check_hosts(config, lines, path)


def _check_hosts(config: Config, lines: dict[tuple[str, ...], int], path: Path) -> None:
    """Rooms and routes name hosts that exist; parts of one machine do not share a JACK."""

    def fail(loc: tuple[str, ...], why: str) -> ConfigError:
        return ConfigError(f"{_where(path, lines, loc)}: {'.'.join(loc)}: {why}")

    def unknown(host: str) -> str:
        near = difflib.get_close_matches(host, list(config.hosts), n=1)
        hint = (f"did you mean {near[0]!r}?" if near else
                f"hosts: {', '.join(config.hosts)}" if config.hosts else
                "the config has no [hosts] table")
        return f"no [hosts.{host}]; {hint}"

    for name, inst in config.instances.items():
        if inst.host is not None and inst.host not in config.hosts:
            raise fail(("instances", name, "host"), unknown(inst.host))
    routes: list[tuple[str, int, ControlRoute | KeyRoute]] = [
        ("controls", i, r) for i, r in enumerate(config.midi.controls)]
    routes += [("keys", i, r) for i, r in enumerate(config.midi.keys)]
    for table, index, route in routes:
        loc: tuple[str, ...] = ("midi", table, str(index))
        if route.host is not None:
            if route.host not in config.hosts:
                raise fail((*loc, "host"), unknown(route.host))
            continue
        rooms: dict[str, list[str]] = {}
        for room in config.resolve(route.instance):
            rooms.setdefault(config.instances[room].host or "(no host)", []).append(room)
        if len(rooms) > 1:
            found = "; ".join(f"{host}: {', '.join(names)}" for host, names in rooms.items())
            raise fail((*loc, "instance"), f"{route.instance!r} plays rooms on several hosts "
                       f"({found}): say which host the controller is plugged into with "
                       "`host = \"NAME\"`")
    jacks: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
    for part in config.parts():
        label = "the rooms without a host" if part is None else f"host {part!r}"
        loc = ("hosts", part, "audio") if part is not None else ("audio",)
        if part is None:
            audio = config.audio
        else:
            try:
                audio = config.host_audio(part)
            except ValidationError as err:
                why = "; ".join(describe_errors(err, noun="key"))
                raise fail(loc, f"with [audio] under it: {why}") from None
        if audio.driver == "jack":
            continue  # a server scorch joins, not one it runs
        key = (config.machine(part), audio.jack_server)
        if key in jacks:
            other, other_loc = jacks[key]
            where = loc if part is not None else other_loc  # a host's table, where there is one
            raise fail(where, f"{other} and {label} would both run the JACK server "
                       f"{audio.jack_server!r} on {key[0]}: give one its own jack_server")
        jacks[key] = (label, loc)


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
