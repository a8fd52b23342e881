"""Run operations on an Orchestra in this process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scorch.api import journaled
from scorch.api.operation import Args, Result
from scorch.api.ops import lookup
from scorch.errors import InvalidRequest, RoomNotReady
from scorch.state import ParamsChanged, decode
from scorch.wire import PUBLISH


class Taken(Result):
    """How many changes another host handed this one were published on its bus."""

    taken: int

if TYPE_CHECKING:
    from scorch.app import Orchestra


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
        if name == PUBLISH:
            return self.publish(args if isinstance(args, Mapping) else {})
        op = lookup(name)  # before counting: an unknown name is no label of /metrics
        orchestra = self.orchestra
        try:
            parsed = op.parse(args)
            if orchestra is None or (self.unavailable and not op.unstarted):
                raise RoomNotReady(self.unavailable or "scorch is not started yet")
            result = journaled.perform(orchestra, op, parsed)
        except BaseException:
            if orchestra is not None:
                orchestra.calls.add(op.name, ok=False)
            raise
        orchestra.calls.add(op.name, ok=True)
        return result

    def publish(self, args: Mapping[str, Any]) -> Taken:
        """Publish the values another host's MIDI router sent to rooms here (``changes``:
        :class:`~scorch.state.changes.ParamsChanged` by ``midi@HOST``): the rooms keep them
        for their restores, and every reader of this host's bus sees them."""
        orch = self.orchestra
        if orch is None:
            raise RoomNotReady(self.unavailable or "scorch is not started yet")
        given = args.get("changes")
        if not isinstance(given, list) or set(args) != {"changes"}:
            raise InvalidRequest("publish takes one argument, changes: a list of changes")
        changes = [decode(item, (ParamsChanged,)) for item in given]
        for change in changes:
            assert isinstance(change, ParamsChanged)
            if not change.by.startswith("midi@"):
                raise InvalidRequest(f"publish takes values another host's MIDI router sent "
                                     f"(by 'midi@HOST'), not {change.by[:40]!r}")
            orch.rooms.view(change.room)  # RoomNotFound: not a room of this host
        for change in changes:
            orch.bus.publish(change)
        return Taken(taken=len(changes))

    def idempotent(self, name: str, args: Mapping[str, Any]) -> bool:
        """Whether this call may run twice to the same effect (its action's access says;
        values published again are the same values)."""
        if name == PUBLISH:
            return True
        op = lookup(name)
        return op.access_of(op.parse(args)).idempotent
