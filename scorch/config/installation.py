"""Read and validate ``config.toml`` once, at the edge; the rest of scorch trusts it.

Every error names the file, the line where it can, the key path, what was
expected and what was found. Unknown keys are refused with the nearest valid name.
"""

from __future__ import annotations

import difflib
import hashlib
import tomllib
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import Field, ValidationError, model_validator

from midi import ControlRoute, KeyRoute, MidiConfig
from scorch.config.alerts import AlertsConfig, MetricsConfig
from scorch.config.hosts import HostConfig, RemoteRoom
from scorch.config.lines import fields_at, key_lines, located
from scorch.config.locate import DEFAULT_CONFIG
from scorch.config.osc import OscConfig
from scorch.config.safety import SafetyConfig
from scorch.config.schedule import CueConfig, Cueing, Location, ScheduleEntry, check_hours
from scorch.config.security import FilesConfig, SecurityConfig
from scorch.config.tables import (
    AudioConfig,
    DocsConfig,
    HistoryConfig,
    McpConfig,
    RoomConfig,
    SamplesConfig,
    SessionsConfig,
    TempoConfig,
    WatchdogConfig,
    WebConfig,
)
from scorch.config.watch import WatchConfig
from scorch.errors import ConfigError, RoomNotFound
from scorch.primitives.input import TooDeep, check_toml
from scorch.state import INSTALLATION, Timeline
from scorch.values import HostName, RoomName, StrictModel, describe_errors


class Config(StrictModel):
    """A whole installation."""

    audio: AudioConfig = AudioConfig()
    instances: dict[RoomName, RoomConfig]
    watchdog: WatchdogConfig = WatchdogConfig()
    tempo: TempoConfig = TempoConfig()
    midi: MidiConfig = MidiConfig()
    samples: SamplesConfig = SamplesConfig()
    sessions: SessionsConfig = SessionsConfig()
    history: HistoryConfig = HistoryConfig()
    docs: DocsConfig = DocsConfig()
    web: WebConfig = WebConfig()
    mcp: McpConfig = McpConfig()
    location: Location = Location()
    schedule: tuple[ScheduleEntry, ...] = Field((), description="[[schedule]]: docs/schedule.md")
    cues: tuple[CueConfig, ...] = Field((), description="[[cues]]: the cue list")
    cueing: Cueing = Cueing()
    files: FilesConfig = FilesConfig()
    security: SecurityConfig = SecurityConfig()
    osc: OscConfig | None = Field(None, description="[osc]: the OSC door for phones, tablets "
                                  "and other software (docs/controllers.md)")
    safety: SafetyConfig = SafetyConfig()
    alerts: AlertsConfig = AlertsConfig()
    metrics: MetricsConfig = MetricsConfig()
    watch: WatchConfig = WatchConfig()
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
                        f"rooms {ports[key]!r} and {name!r} both use port {inst.port}"
                        + (f" on {key[0]}" if self.hosts else "")
                    )
                ports[key] = name
        clash = set(self.groups()) & set(self.instances)
        if clash:
            raise ValueError(f"group names clash with room names: {', '.join(sorted(clash))}")
        return self

    def machine(self, host: str | None) -> str:
        """The machine a host (None: this one) is, for what rooms on one machine share."""
        found = self.hosts.get(host) if host is not None else None
        return found.machine() if found is not None else "this machine"

    def groups(self) -> dict[str, list[str]]:
        """Map each group name to its rooms, in config order."""
        groups: dict[str, list[str]] = {}
        for name, inst in self.instances.items():
            if inst.group:
                groups.setdefault(inst.group, []).append(name)
        return groups

    def resolve(self, selector: str) -> list[str]:
        """A room name, a group name or ``"*"`` to room names, in config order."""
        if selector == "*":
            return list(self.instances)
        if selector in self.instances:
            return [selector]
        groups = self.groups()
        if selector in groups:
            return groups[selector]
        raise RoomNotFound(selector, list(self.instances), list(groups))

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
        raise RoomNotFound(selector, list(rooms), list(groups))
    def tempo_scope(self, room_or_group: str | None) -> str:
        """The tempo a room or group plays at: its group's own, else the installation's."""
        if room_or_group is None:
            return INSTALLATION
        group = room_or_group
        if room_or_group in self.instances:
            group = self.instances[room_or_group].group or ""
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
        return default_state_path(self.source)

    def jack_server(self) -> str:
        """The JACK server this installation's rooms use, unless ``auto`` joins a running one.

        ``[audio] jack_server`` when the file names one (and always for the ``jack``
        driver, which joins that server); else a name of the installation's own,
        made from its state folder as that folder is from the config's path: any
        number of installations share a machine, none starts its jackd under
        another's name.
        """
        if "jack_server" in self.audio.model_fields_set or self.audio.driver == "jack":
            return self.audio.jack_server
        folder = str(self.state_path())
        return f"scorch-{hashlib.sha1(folder.encode()).hexdigest()[:8]}"

    # --- several hosts ---------------------------------------------------------

    def host_audio(self, host: str) -> AudioConfig:
        """``[audio]`` with ``[hosts.HOST.audio]`` over it.

        A ``local`` host shares this machine's JACK registry, so unless it names
        its own server it gets ``<jack_server>-<host>`` (this installation's server).
        """
        found = self.hosts[host]
        override = found.audio.model_dump(exclude_none=True)
        if found.via == "local" and "jack_server" not in override:
            override["jack_server"] = f"{self.jack_server()}-{host}"
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
            "keys": tuple(r for r in self.midi.keys if self.route_host(r) == host),
            **self.midi.buttons_on(host)})
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


def default_state_path(source: Path | None) -> Path:
    """The state folder of a config without ``state_dir``: one per config file's path."""
    base = platformdirs.user_state_path("scorch")
    origin = str(source.resolve()) if source else "embedded"
    digest = hashlib.sha1(origin.encode()).hexdigest()[:8]
    return base / f"{source.stem if source else 'config'}-{digest}"


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
        check_toml(text)
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, TooDeep) as err:
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
        except RoomNotFound as err:
            loc: tuple[str, ...] = ("midi", table, str(index), "instance")
            raise ConfigError(f"{located(path, lines, loc)}: {'.'.join(loc)}: {err}") from None
    for index, folder in enumerate(config.samples.paths):
        if not config.resolve_path(folder).is_dir():
            loc = ("samples", "paths")
            raise ConfigError(
                f"{located(path, lines, loc)}: samples.paths.{index}: expected an existing "
                f"folder, found {str(folder)!r} (looked in {config.resolve_path(folder)})")
    groups = config.groups()
    for group in config.tempo.groups:
        if group not in groups:
            loc = ("tempo", "groups", group)
            raise ConfigError(f"{located(path, lines, loc)}: {'.'.join(loc)}: no room is in "
                              f"group {group!r}; groups: {', '.join(groups) or 'none'}")
    for index, clock in enumerate(config.midi.clock_out):
        if clock.group is not None and clock.group not in groups:
            loc = ("midi", "clock_out", str(index), "group")
            raise ConfigError(f"{located(path, lines, loc)}: {'.'.join(loc)}: no room is in "
                              f"group {clock.group!r}; groups: {', '.join(groups) or 'none'}")
    for name, inst in config.instances.items():
        if inst.startup is not None and not config.resolve_path(inst.startup).is_file():
            loc = ("instances", name, "startup")
            raise ConfigError(
                f"{located(path, lines, loc)}: {'.'.join(loc)}: expected an existing .scd file, "
                f"found {str(inst.startup)!r} (looked in {config.resolve_path(inst.startup)})"
            )
    _check_hosts(config, lines, path)
    check_hours(config.location, config.schedule, config.cues, lines, path)


def _check_hosts(config: Config, lines: dict[tuple[str, ...], int], path: Path) -> None:
    """Rooms and routes name hosts that exist; parts of one machine do not share a JACK."""

    def fail(loc: tuple[str, ...], why: str) -> ConfigError:
        return ConfigError(f"{located(path, lines, loc)}: {'.'.join(loc)}: {why}")

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
        server = config.jack_server() if part is None else audio.jack_server
        key = (config.machine(part), server)
        if key in jacks:
            other, other_loc = jacks[key]
            where = loc if part is not None else other_loc  # a host's table, where there is one
            raise fail(where, f"{other} and {label} would both run the JACK server "
                       f"{server!r} on {key[0]}: give one its own jack_server")
        jacks[key] = (label, loc)


def _describe(err: ValidationError, text: str, path: Path) -> str:
    lines = key_lines(text)
    return "\n".join(describe_errors(err, where=lambda loc: located(path, lines, loc),
                                      known=lambda loc: fields_at(Config, loc), noun="key"))


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
            problems.append(f"{located(path, lines, loc)}: {'.'.join(loc)}: {why}")
    if problems:
        raise ConfigError("\n".join(problems))
