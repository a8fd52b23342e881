"""The reference operation: keep a named sound's figures, list them, forget one.

A reference is captured from an audio file, a recording, or what a room plays now;
``listen`` and ``render`` then compare what they hear with one (their ``reference``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from scorch.api.fields import NodeName, RoomName
from scorch.api.operation import CHANGE, READ, Action, CliForm, Patience, Result, operation
from scorch.api.ops.audio import (
    Bus,
    Channels,
    ReferenceName,
    audio_path,
    live_source,
    reference_named,
    refused,
)
from scorch.audio import Reference
from scorch.errors import InvalidRequest
from scorch.values import Seconds, Text

if TYPE_CHECKING:
    from scorch.app import Orchestra


class ReferenceCapture(Action):
    """Keep a sound's figures as `name`: from `path`, or `instance` for `seconds`."""

    access = CHANGE
    action: Literal["capture"]
    name: Annotated[Text, Field(max_length=64, description="The reference's name")]
    path: Annotated[Text | None, Field(
        max_length=4096, description="An audio file or recording, as listen's")] = None
    instance: Annotated[RoomName | None, Field(
        description="A room to hear instead")] = None
    seconds: Annotated[Seconds, Field(ge=0.5, le=30, description=(
        "Seconds to hear the room"))] = 5.0
    bus: Annotated[Bus | None, Field(description="A bus, not its outputs")
                   ] = None
    node: Annotated[NodeName | None, Field(description="A named node alone")
                    ] = None
    channels: Channels = 2


class ReferenceList(Action):
    """List the references kept, with their main figures."""

    access = READ
    action: Literal["list"] = "list"


class ReferenceForget(Action):
    """Forget a reference."""

    access = CHANGE
    action: Literal["forget"]
    name: ReferenceName


ReferenceArgs = Annotated[ReferenceCapture | ReferenceList | ReferenceForget,
                          Field(discriminator="action")]


class ReferenceOutput(Result):
    """The references captured, listed or forgotten."""

    action: str
    folder: str = Field(description="where references are kept")
    references: list[Reference]

    def text(self) -> str:
        """One line per reference."""
        if not self.references:
            return f"no references yet in {self.folder} (reference action='capture' keeps one)"
        verb = {"capture": "kept", "forget": "forgot"}.get(self.action)
        head = f"{verb}:\n" if verb else ""
        return head + "\n".join(r.line() for r in self.references)


@operation(cli=CliForm("reference", ("action", "name")), patience=Patience(seconds=100.0))
def reference(orch: Orchestra, args: ReferenceArgs) -> ReferenceOutput:
    """Keep named reference sounds (loudness, band balance, width, tilt, brightness, tempo,
    key) from a file, a recording or a room; list or forget them. listen and render
    compare with one (their `reference`)."""
    store = orch.studio.references
    if args.action == "list":
        return ReferenceOutput(action="list", folder=str(store.folder), references=store.list())
    if args.action == "forget":
        reference_named(orch, args.name, "name")  # one that is not there: the name's fault
        return ReferenceOutput(action="forget", folder=str(store.folder),
                               references=[store.forget(args.name)])
    if (args.path is None) == (args.instance is None):
        raise refused("reference capture needs `path` (a file or a recording) or `instance` "
                      "(a room), one of them", "path")
    try:
        store.check_name(args.name)  # before listening, not after
    except InvalidRequest as err:
        err.argument = "name"
        raise
    if args.path is not None:
        if args.node is not None or args.bus is not None:
            raise refused("reference capture: `bus` and `node` go with `instance`",
                          "node" if args.node is not None else "bus")
        path = audio_path(orch, args.path)
        report = orch.studio.listen_file(path, orch.tempo.grid()).report
        source = f"file {path}"
    else:
        assert args.instance is not None
        if args.node is not None and args.bus is not None:
            raise refused("reference capture: give `bus` or `node`, not both", "bus")
        what = args.node if args.node is not None else args.bus
        heard = orch.studio.listen(args.instance, orch.rooms.view(args.instance),
                                   live_source(orch, args.instance, what, args.channels),
                                   args.seconds, draw=False)
        report, source = heard.report, heard.label
    kept = Reference.of(args.name, source, time.time(), report)
    store.save(kept)
    return ReferenceOutput(action="capture", folder=str(store.folder), references=[kept])
