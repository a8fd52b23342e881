"""The panel's operations: the live view and a fader, for the MCP Apps panel (issue 28).

``live`` answers the whole live view (``scorch.api.live``) and keeps the rooms'
level meters running a few seconds more, so a panel that looks sees levels and one
that vanishes costs nothing soon after. With ``since`` it waits for the change bus
(:mod:`scorch.state.bus`) to have a change after that seq and answers those changes
with the view: the panel follows the changes as they are published, not by polling.
``meters_only`` answers the last whole view with fresh meters, the light call a
visible panel makes several times a second between two whole ones. ``fader`` moves one
param of a named node, as ``set`` does (the value is kept for restarts), one value at a
time as a fader sends them. Both are tools only the panel sees
(``_meta.ui.visibility = ["app"]``); every other front end has ``status`` and ``set``.
"""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from scorch.api import ops
from scorch.api.live import Here, LiveView, live_view, meters_now
from scorch.api.operation import (
    READ,
    SET,
    Args,
    CliForm,
    Patience,
    Result,
    Spread,
    Tool,
    operation,
)
from scorch.state import as_json
from scorch.values import Float32, NodeName, ParamName, RoomName

if TYPE_CHECKING:
    from scorch.app import Orchestra

#: Seconds the meters run on after a ``live`` call.
METER_LEASE = 5.0
#: Seconds a whole view may be reused by a ``meters_only`` call; older, it is built anew.
REUSE_VIEW = 2.0
#: The last whole view built for each orchestra, and when (monotonic).
_LAST: weakref.WeakKeyDictionary[Orchestra, tuple[float, LiveView]] = (
    weakref.WeakKeyDictionary())


class LiveArgs(Args):
    """How much of the view to build, and after which change."""

    meters_only: bool = Field(False, description="only the level meters are new; the rest "
                              "is the last whole view (at most 2 s old)")
    since: int | None = Field(None, ge=0, description="the last view's seq: answer at the "
                              "next change (or after wait s)")
    wait: float = Field(5.0, ge=0.0, le=8.0, description="seconds to wait after `since`")


@operation(access=READ, cli=CliForm("live"), spread=Spread(rooms=None),
           patience=Patience(seconds=10.0), tool=Tool(panel="only"))
def live(orch: Orchestra, args: LiveArgs) -> LiveView:
    """The live view the panel shows: rooms, level meters, named nodes, patterns, MIDI,
    tempo and recent events. Keeps the level meters running a few seconds. With since:
    once a later change is published."""
    orch.meters.lease(METER_LEASE)
    taken = []
    if args.since is not None:
        orch.bus.wait(args.since, args.wait)
        taken = orch.bus.since(args.since)
    now = time.monotonic()
    built, last = _LAST.get(orch, (0.0, None))
    if args.meters_only and not taken and last is not None and now - built < REUSE_VIEW:
        meters = meters_now(orch)
        return last.model_copy(update={"time": time.time(), "rooms": [
            room.model_copy(update={"meter": meters.get(room.name)}) for room in last.rooms],
            **({} if args.since is None else {"seq": args.since, "changes": []})})
    view = live_view(Here(orch, ops.lookup), orch)
    _LAST[orch] = (now, view)
    if args.since is None:
        return view
    return view.model_copy(update={"seq": taken[-1].seq if taken else args.since,
                                   "changes": [as_json(p) for p in taken]})


class FaderArgs(Args):
    """One param of a named node, and its new value."""

    instance: RoomName
    node: NodeName
    param: ParamName
    value: Annotated[Float32, Field(description="the param's new value")]


class FaderOutput(Result):
    """The value set."""

    instance: str
    node: str
    param: str
    value: float

    def text(self) -> str:
        return f"{self.instance}/{self.node}: {self.param} = {self.value:g}"


@operation(access=SET, cli=CliForm("fader", ("instance", "node", "param", "value")),
           patience=Patience(seconds=5.0), tool=Tool(panel="only"))
def fader(orch: Orchestra, args: FaderArgs) -> FaderOutput:
    """Move one param of a named node (a fader of the panel), as set does."""
    values = orch.rooms.set(args.instance, args.node, {args.param: args.value}, by="fader")
    return FaderOutput(instance=args.instance, node=args.node, param=args.param,
                       value=values.get(args.param, args.value))
