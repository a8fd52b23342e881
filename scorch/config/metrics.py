"""The ``[metrics]`` table: a Prometheus endpoint, read-only (docs/alerts.md).

Every door asks who calls (:mod:`scorch.wire.access`): a scrape bears the state
folder's read-only token (``authorization: credentials`` in Prometheus's config)
unless ``open_loopback`` opens a loopback listener to every local account.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from scorch.config.tables import _open_on_loopback_only, parse_listen
from scorch.values import StrictModel

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
