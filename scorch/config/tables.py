"""The tables of ``config.toml`` below an installation: audio, rooms, watchdog, tempo...

One pydantic model per table; :class:`scorch.config.installation.Config` puts them together
with the installation-wide checks.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from scorch.config.safety import RoomSafety
from scorch.config.tools import ALL, PROFILES, Choice, valid
from scorch.config.watch import RoomWatch
from scorch.state import MAX_BPM, MIN_BPM, Backoff, RestartIntensity
from scorch.values import Float32, GroupName, HostName, NodeName, ParamName, StrictModel

Port = Annotated[int, Field(ge=1024, le=65535)]

#: Where MCP's streamable HTTP listens unless told: loopback, and a port near SuperCollider's.
HTTP_HOST = "127.0.0.1"
HTTP_PORT = 57180
_HOSTNAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


class AudioConfig(StrictModel):
    """The ``[audio]`` table: where the rooms' sound goes."""

    driver: Literal["auto", "dummy", "jack", "alsa"] = Field(
        "auto",
        description="auto: join a running JACK server ($JACK_DEFAULT_SERVER, else 'default'), "
        "else run jackd on the first sound card, else headless; dummy: scorch runs a headless "
        "jackd; jack: use the running JACK server `jack_server`; alsa: scorch runs jackd on "
        "`device`",
    )
    jack_server: str = Field("scorch", pattern=r"^[A-Za-z0-9_.-]+$",
                             description="JACK server name: scorch's own (unset: one of this "
                             "installation's own, from its state folder), or the one to join "
                             "with driver = 'jack'")
    sample_rate: int = Field(48000, ge=8000, le=192000)
    period: int | None = Field(
        None, ge=16, le=8192, description="JACK frames per period (unset: 64 where this "
        "machine grants realtime scheduling, 512 where it refuses it: without it, JACK "
        "clients miss cycles of 1.3 ms under load and JACK drops their MIDI)")
    device: str | None = Field(None, description="ALSA device for driver = 'alsa', e.g. 'hw:0' "
                               "(with 'auto': the card to use when no JACK server runs)")
    realtime: bool = Field(
        False, description="run scorch's jackd with realtime scheduling (-R; needs realtime "
        "rights): on a loaded machine a JACK client without it misses cycles, and JACK drops "
        "the MIDI of the cycles it missed")

    @field_validator("period")
    @classmethod
    def _power_of_two(cls, value: int | None) -> int | None:
        if value is not None and value & (value - 1):
            raise ValueError(f"period must be a power of two (64, 128, 256...), found {value}")
        return value

    @model_validator(mode="after")
    def _device_for_alsa(self) -> AudioConfig:
        if self.driver == "alsa" and not self.device:
            raise ValueError("driver = 'alsa' needs device = 'hw:N' (see `aplay -l`)")
        return self


class NodeConfig(StrictModel):
    """A named persistent synth that the room plays from boot."""

    synthdef: str
    params: dict[ParamName, Float32] = Field(default_factory=dict)


class RoomConfig(StrictModel):
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
    safety: RoomSafety = RoomSafety()
    watch: RoomWatch = RoomWatch()


class WatchdogConfig(StrictModel):
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


class SamplesConfig(StrictModel):
    """The ``[samples]`` table: where sound files are found, and how large one may be."""

    paths: tuple[Path, ...] = Field(
        (), description="folders searched for samples and for relative paths, in order "
        "(relative to the config file)")
    max_mb: float = Field(256.0, gt=0, le=4096,
                          description="largest sound file `buffer load` accepts, megabytes")


class SessionsConfig(StrictModel):
    """The ``[sessions]`` table: saved states of the whole installation."""

    autosave: float = Field(
        30.0, ge=0, le=86400,
        description="seconds between autosaves (0: only at shutdown); `scorch run --resume` "
        "starts from the last one")


class HistoryConfig(StrictModel):
    """The ``[history]`` table: how much of the execution history is kept."""

    max_age_days: float = Field(30.0, gt=0, le=36500,
                                description="executions older than this are forgotten, days")
    max_rows: int = Field(100_000, ge=100, le=10_000_000,
                          description="at most this many executions are kept (the newest)")


#: The page's port when ``[web] listen`` gives none (MCP over HTTP has :data:`HTTP_PORT`).
WEB_PORT = 8470


class WebConfig(StrictModel):
    """The ``[web]`` table: the technician's page, served by ``scorch run``."""

    listen: str | None = Field(
        None, description="ADDR:PORT the page listens on (unset: no page; no address: "
        "loopback, no port: 8470, IPv6 in brackets); every address asks for the state "
        "folder's token (http-token, or http-token-readonly: a page that only shows)")
    meter_hz: float = Field(15.0, ge=1.0, le=50.0,
                            description="level meters' reports a second while the page is open")
    open_loopback: bool = Field(
        False, description="a page on a loopback address asks no token: every account on "
        "this machine may then see and act (off by default; refused off loopback)")

    @field_validator("listen")
    @classmethod
    def _check_listen(cls, value: str | None) -> str | None:
        if value is not None:
            parse_listen(value, WEB_PORT)
        return value

    @model_validator(mode="after")
    def _open_on_loopback_only(self) -> WebConfig:
        _open_on_loopback_only(self.open_loopback, self.address(), "listen", self.listen)
        return self

    def address(self) -> tuple[str, int] | None:
        """The host (without IPv6 brackets) and port to listen on, or None."""
        return parse_listen(self.listen, WEB_PORT) if self.listen is not None else None


class DocsConfig(StrictModel):
    """The ``[docs]`` table: the SuperCollider docs index behind the ``docs`` tool."""

    build: Literal["background", "on-demand"] = Field(
        "background", description="background: check the index (and rebuild it if SuperCollider "
        "or its class library changed) once the rooms are READY; on-demand: at the first "
        "docs call")
    help_dir: Path | None = Field(None, description="the HelpSource folder; default: the one "
                                  "sclang reports, else the usual install locations")


class GroupTempo(StrictModel):
    """A ``[tempo.groups.NAME]`` table: a group that plays at its own tempo."""

    bpm: float = Field(ge=MIN_BPM, le=MAX_BPM, description="beats per minute")
    beats_per_bar: int = Field(4, ge=1, le=64, description="beats in a bar (the bar phase)")


class TempoConfig(StrictModel):
    """The ``[tempo]`` table: one beat grid for every room, MIDI clock and Link."""

    bpm: float = Field(120.0, ge=MIN_BPM, le=MAX_BPM, description="beats per minute at start")
    beats_per_bar: int = Field(4, ge=1, le=64, description="beats in a bar: the bar phase "
                               "and Link's quantum")
    link: bool = Field(False, description="join an Ableton Link session through the rooms' "
                       "sclang LinkClock: tempo and phase shared with every Link peer")
    groups: dict[GroupName, GroupTempo] = Field(
        default_factory=dict, description="groups with a tempo of their own (not on Link)")


#: Host names that are this machine's loopback whatever the resolver says.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    bare = host.strip().strip("[]").lower()
    if bare in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def _open_on_loopback_only(opened: bool, where: tuple[str, int] | None, key: str,
                           text: str | None) -> None:
    """Refuse ``open_loopback = true`` beside a listener ``key = text`` that is not loopback."""
    if opened and where is not None and not is_loopback(where[0]):
        raise ValueError(f"open_loopback = true opens a loopback listener only; {key} = "
                         f"{text!r} is not loopback (it asks for the token)")


def parse_listen(text: str, default_port: int | None = None) -> tuple[str, int]:
    """``ADDR:PORT`` (``[V6]:PORT``, ``ADDR``, ``:PORT``) as (host, port); ValueError says why.

    A missing address is loopback (:data:`HTTP_HOST`), a missing port ``default_port``
    (:data:`HTTP_PORT` unless told).
    """
    spec = text.strip()
    if not spec or len(spec) > 300:
        raise ValueError(f"expected ADDR:PORT (e.g. \"{HTTP_HOST}:{HTTP_PORT}\"), found {text!r}")
    host, port = spec, ""
    if spec.startswith("["):
        inside, bracket, rest = spec[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"expected [IPV6]:PORT, found {text!r}")
        host, port = inside, rest[1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"{host!r} in brackets is not an IPv6 address") from None
    elif spec.count(":") == 1:
        host, _, port = spec.partition(":")
    elif spec.isdigit():
        host, port = "", spec
    host = host or HTTP_HOST
    if ":" not in host and not _HOSTNAME.fullmatch(host):
        raise ValueError(f"{host!r} is not an address or a host name (in {text!r})")
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv6 address (in {text!r})") from None
    if not port:
        return host, HTTP_PORT if default_port is None else default_port
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"the port must be a number from 1 to 65535, found {port!r} (in {text!r})")
    return host, int(port)


class McpConfig(StrictModel):
    """The ``[mcp]`` table: the MCP tools beside stdio."""

    http: str | None = Field(
        None, description="`scorch run` also serves the MCP tools over streamable HTTP at "
        f"\"ADDR:PORT\" (path /mcp; default port {HTTP_PORT}); every request, on every "
        "address, needs the token in the state folder's http-token file (Authorization: Bearer)")
    open_loopback: bool = Field(
        False, description="MCP over HTTP on a loopback address asks no token: every account "
        "on this machine may then run code as scorch's user (off by default; refused off "
        "loopback)")
    tools: Annotated[Choice, AfterValidator(valid)] = Field(
        ALL, description="the MCP tools a conversation carries: \"all\", a profile "
        f"({', '.join(PROFILES)}: scorch/config/tools.py) or a list of tool names")

    @field_validator("http")
    @classmethod
    def _listen(cls, value: str | None) -> str | None:
        if value is not None:
            parse_listen(value)
        return value

    @model_validator(mode="after")
    def _open_on_loopback_only(self) -> McpConfig:
        _open_on_loopback_only(self.open_loopback, self.listen(), "http", self.http)
        return self

    def listen(self) -> tuple[str, int] | None:
        """Where to serve HTTP (host, port), or None: stdio and the control socket only."""
        return parse_listen(self.http) if self.http is not None else None
