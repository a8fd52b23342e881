"""What leaves the machine (docs/alerts.md): ``[alerts]`` messages and ``[metrics]``.

Each entry of ``urls`` is an apprise URL (``json://``, ``mailto://``, ``ntfys://``...)
or a table ``{ url = "...", kinds = ["SOUND_*"] }`` that narrows which events go there.
Kinds are shell patterns over event kind names (``CRASHED``, ``SOUND_*``), so kinds
that other parts add later are chosen without a change here.

The ``[metrics]`` table: a Prometheus endpoint, read-only (docs/alerts.md).

Every door asks who calls (:mod:`scorch.wire.access`): a scrape bears the state
folder's read-only token (``authorization: credentials`` in Prometheus's config)
unless ``open_loopback`` opens a loopback listener to every local account.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from scorch.config.tables import _open_on_loopback_only, parse_listen
from scorch.values import StrictModel

#: Events worth a message unless ``[alerts] kinds`` says otherwise.
DEFAULT_KINDS = ("CRASHED", "HUNG", "FAILED", "DEGRADED", "BOOT_FAILED", "SOUND_*")

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_PATTERN = re.compile(r"^[A-Z0-9_*?]+$")

KindPattern = Annotated[str, Field(min_length=1, max_length=64, pattern=_PATTERN.pattern)]


def _check_url(url: str) -> str:
    """Refuse what is no URL, naming only its scheme (the rest may hold a secret)."""
    if not _SCHEME.match(url):
        raise ValueError("an alert URL begins with its scheme, e.g. json:// or mailto:// "
                         "(the URL itself is not repeated here: it may hold a password)")
    return url


class AlertTarget(StrictModel):
    """One place alerts go, and which kinds of event go there."""

    url: str = Field(min_length=4, max_length=2000, repr=False,
                     description="an apprise URL (may hold a token: never logged)")
    kinds: tuple[KindPattern, ...] | None = Field(
        None, description="patterns of event kinds sent here; none: [alerts] kinds")

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return _check_url(url)


class AlertsConfig(StrictModel):
    """``[alerts]``: where messages go, which events make them and how often."""

    urls: tuple[AlertTarget | str, ...] = Field(
        (), max_length=32, description="apprise URLs, or tables with url and kinds")
    kinds: tuple[KindPattern, ...] = Field(
        DEFAULT_KINDS, description="patterns of the event kinds that make a message")
    rate_s: float = Field(300.0, ge=0.0, le=86400.0, description="the least time between "
                          "two messages of one room and kind (those between are counted)")
    remind_s: float = Field(3600.0, ge=0.0, le=7 * 86400.0, description="a reminder this "
                            "often while a fault lasts; 0: none")
    retries: int = Field(4, ge=0, le=20, description="tries again after a failed delivery")
    backoff_s: float = Field(2.0, gt=0.0, le=600.0,
                             description="the first wait before trying again (doubles)")
    queue: int = Field(200, ge=1, le=10000,
                       description="messages waiting to go out; more are dropped and counted")

    @field_validator("urls")
    @classmethod
    def _urls(cls, urls: tuple[AlertTarget | str, ...]) -> tuple[AlertTarget | str, ...]:
        for url in urls:
            if isinstance(url, str):
                _check_url(url)
        return urls

    def targets(self) -> tuple[AlertTarget, ...]:
        """Every target with its kinds filled in from ``kinds``."""
        return tuple(AlertTarget(url=t, kinds=self.kinds) if isinstance(t, str)
                     else t if t.kinds is not None else AlertTarget(url=t.url, kinds=self.kinds)
                     for t in self.urls)


#: Prometheus's port for exporters of this kind (its wiki's allocation list).
METRICS_PORT = 9464


class MetricsConfig(StrictModel):
    """``[metrics]``: where ``/metrics`` is served; unset: nowhere."""

    listen: str | None = Field(None, description="ADDR:PORT of /metrics (unset: none; "
                               "127.0.0.1:9464 keeps it on this machine)")
    open_loopback: bool = Field(False, description="no token on a loopback listener (every "
                                "local account then reads the metrics)")

    @field_validator("listen")
    @classmethod
    def _check_listen(cls, value: str | None) -> str | None:
        if value is not None:
            parse_listen(value, METRICS_PORT)
        return value

    @model_validator(mode="after")
    def _open_on_loopback_only(self) -> MetricsConfig:
        _open_on_loopback_only(self.open_loopback, self.address(), "listen", self.listen)
        return self

    def address(self) -> tuple[str, int] | None:
        """The host (without IPv6 brackets) and port to listen on, or None."""
        return parse_listen(self.listen, METRICS_PORT) if self.listen is not None else None
