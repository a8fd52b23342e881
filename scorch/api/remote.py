"""Reach a running ``scorch run`` through its control socket: the generic remote proxy.

:class:`RemoteService` runs any operation remotely by name: it validates the
arguments with the operation's own model, sends them, and validates the answer
with its result model. There is no forwarder per method. A call that is not
idempotent carries a request key (``scorch.wire.once``): sent again after its
connection dropped, it runs once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scorch.api.operation import Args, Result
from scorch.api.ops import lookup
from scorch.wire import EVICTIONS, IDLE_CONNECTIONS, ControlClient, new_key

__all__ = ["EVICTIONS", "IDLE_CONNECTIONS", "ControlClient", "RemoteService"]


class RemoteService:
    """The API of a running ``scorch run``, reached over its control socket."""

    mode = "attached"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.client = ControlClient(path)

    def call(self, name: str, args: Mapping[str, Any] | Args, key: str | None = None) -> Result:
        """Run operation ``name`` on the installation; its errors are raised here.

        A call that is not idempotent carries ``key`` (a new one when None), so that
        the client may send it again after a dropped connection and it still runs once.
        """
        op = lookup(name)
        parsed = op.parse(args)
        if key is None and not op.access_of(parsed).idempotent:
            key = new_key()
        reply = self.client.call(name, parsed.model_dump(mode="json"),
                                 timeout=op.answer_within(parsed), key=key)
        result: Result = op.result.model_validate(reply)
        return result

    def close(self) -> None:
        """Close the idle connections."""
        self.client.close()
