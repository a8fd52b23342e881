"""Reach a running ``scorch run`` through its control socket: the generic remote proxy.

:class:`RemoteService` runs any operation remotely by name: it validates the
arguments with the operation's own model, sends them, and validates the answer
with its result model. There is no forwarder per method.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scorch.api.operation import Args, Result
from scorch.api.ops import lookup
from scorch.wire.client import EVICTIONS, IDLE_CONNECTIONS, ControlClient

__all__ = ["EVICTIONS", "IDLE_CONNECTIONS", "ControlClient", "RemoteService"]


class RemoteService:
    """The API of a running ``scorch run``, reached over its control socket."""

    mode = "attached"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.client = ControlClient(path)

    def call(self, name: str, args: Mapping[str, Any] | Args) -> Result:
        """Run operation ``name`` on the installation; its errors are raised here."""
        op = lookup(name)
        parsed = op.parse(args)
        reply = self.client.call(name, parsed.model_dump(mode="json"),
                                 timeout=op.answer_within(parsed))
        result: Result = op.result.model_validate(reply)
        return result

    def close(self) -> None:
        """Close the idle connections."""
        self.client.close()
