"""The ``[hosts.NAME]`` tables: the machines of an installation, and how to reach each.

An installation may span several machines. Each runs its own ``scorch run
--host NAME`` (under systemd) with its own rooms, supervision and JACK server;
a coordinator (``scorch status``, ``scorch mcp`` on the technician's laptop)
reaches each over ssh (``ssh HOST scorch bridge``) or, for ``via = "local"``,
over the control socket of another ``scorch run`` on this machine.

Validated once at the edge with the rest of ``config.toml`` (:mod:`scorch.config.installation`).
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    Field,
    field_validator,
    model_validator,
)

from scorch.values import StrictModel, no_nul

#: A user name ssh accepts without quoting: no spaces, no shell or option characters.
_SSH_USER = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"
#: An ssh ``-o`` option's name, and a value that is one plain line.
_SSH_OPTION = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,63}$")
#: An address ssh and UDP accept: a host name or an IP address, never an option.
_ADDRESS = re.compile(r"^[A-Za-z0-9_.:%-]{1,253}$")


class AudioOverride(StrictModel):
    """``[hosts.NAME.audio]``: keys of ``[audio]`` that differ on that host."""

    driver: Literal["auto", "dummy", "jack", "alsa"] | None = None
    jack_server: str | None = Field(None, pattern=r"^[A-Za-z0-9_.-]+$")
    sample_rate: int | None = Field(None, ge=8000, le=192000)
    period: int | None = Field(None, ge=16, le=8192)
    device: str | None = None


def _address(value: str) -> str:
    if value.startswith("-") or not _ADDRESS.fullmatch(value):
        raise ValueError(f"expected a host name or an IP address, found {value[:80]!r}")
    return value


def _ip(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"expected an IP address of this host (127.0.0.1, 0.0.0.0, "
                         f"192.168.1.20...), found {value[:80]!r}") from None
    return value


class HostConfig(StrictModel):
    """One ``[hosts.NAME]`` table: a machine that runs some rooms under its own ``scorch run``."""

    address: Annotated[str, AfterValidator(_address)] = Field(
        "127.0.0.1", description="host name or IP address: ssh connects to it, and MIDI "
        "routes on other hosts send OSC to its rooms there")
    via: Literal["ssh", "local"] = Field(
        "ssh", validation_alias=AliasChoices("via", "transport"),
        description="how the coordinator reaches the host: ssh: it runs `ssh HOST scorch "
        "bridge`; local: another `scorch run` on this machine (its own state directory and "
        "control socket). The key `transport` is read as `via` (older configs)")
    ssh_user: str | None = Field(None, pattern=_SSH_USER, description="ssh's login user")
    ssh_port: int = Field(22, ge=1, le=65535)
    identity: Path | None = Field(None, description="ssh private key (ssh -i)")
    known_hosts: Path | None = Field(
        None, description="a known_hosts file for this host's key (strict checking); "
        "default: the user's own")
    ssh_options: dict[str, str] = Field(
        default_factory=dict, description="more ssh -o options, e.g. { ConnectTimeout = \"2\" }")
    config_path: Path | None = Field(
        None, description="where this config file lives on that host; default: the same "
        "path as here")
    scorch: str = Field("scorch", min_length=1, max_length=500, pattern=r"^[^\s'\"`$;&|<>]+$",
                        description="the scorch command on that host (e.g. "
                        "/opt/scorch/.venv/bin/scorch)")
    state_dir: Path | None = Field(
        None, description="that host's run-time state; default: hosts/NAME in the state "
        "directory")
    listen: Annotated[str, AfterValidator(_ip)] = Field(
        "127.0.0.1", description="the address this host's scsynths listen on for OSC: "
        "loopback only unless a MIDI route on another host plays them (then its LAN address)")
    audio: AudioOverride = Field(default_factory=AudioOverride,
                                 description="[audio] keys that differ on this host")

    @model_validator(mode="before")
    @classmethod
    def _one_via(cls, data: Any) -> Any:
        if isinstance(data, dict) and "via" in data and "transport" in data:
            raise ValueError("transport is the older name of via: keep one of them")
        return data

    @field_validator("ssh_options")
    @classmethod
    def _options(cls, options: dict[str, str]) -> dict[str, str]:
        for key, value in options.items():
            if not _SSH_OPTION.fullmatch(key):
                raise ValueError(f"an ssh option name is letters and digits "
                                 f"(ConnectTimeout), found {key[:80]!r}")
            no_nul(value)
            if "\n" in value or "\r" in value or len(value) > 500:
                raise ValueError(f"ssh option {key}: the value must be one line "
                                 "(at most 500 characters)")
        return options

    def machine(self) -> str:
        """Which machine the host is: rooms on one machine share its UDP ports and JACK."""
        return "this machine" if self.via == "local" else self.address.lower()


class RemoteRoom(StrictModel):
    """A room of the installation that another host runs (what this host needs of it)."""

    host: str | None
    """Its host (None: the machine without a ``--host``, the coordinator's)."""
    group: str | None
