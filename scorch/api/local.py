"""Run operations on an Orchestra in this process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scorch.api import journaled
from scorch.api.operation import Args, Result
from scorch.api.ops import lookup
from scorch.errors import InstanceNotReady

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


class LocalService:
    """The API over an orchestra in this process; thread-safe as the facade is."""

    mode = "hosted"

    def __init__(self, orchestra: Orchestra | None = None) -> None:
        self.orchestra = orchestra
        self.unavailable: str | None = None
        """Why the orchestra is not there or could not start, told to every caller but those
        of operations that need only the machine and the config (``Operation.unstarted``)."""

    def call(self, name: str, args: Mapping[str, Any] | Args, key: str | None = None) -> Result:
        """Validate ``args`` and run operation ``name`` on the orchestra.

        ``key`` is the request's id; in this process nothing is sent twice, so it is
        not needed here (the control server keeps the keys of what it serves).
        """
        op = lookup(name)  # before counting: an unknown name is no label of /metrics
        orchestra = self.orchestra
        try:
            parsed = op.parse(args)
            if orchestra is None or (self.unavailable and not op.unstarted):
                raise InstanceNotReady(self.unavailable or "scorch is not started yet")
            result = journaled.perform(orchestra, op, parsed)
        except BaseException:
            if orchestra is not None:
                orchestra.calls.add(op.name, ok=False)
            raise
        orchestra.calls.add(op.name, ok=True)
        return result

    def idempotent(self, name: str, args: Mapping[str, Any]) -> bool:
        """Whether this call may run twice to the same effect (its action's access says)."""
        op = lookup(name)
        return op.access_of(op.parse(args)).idempotent
