"""The buffer operation: sound files loaded into scsynth, kept across restarts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from scorch.api import budget
from scorch.api.fields import Selector
from scorch.api.operation import (
    CHANGE,
    DESTROY,
    READ,
    ROOMS_NAMED,
    Action,
    CliForm,
    Result,
    operation,
)
from scorch.app import BufferInfo, SampleInfo
from scorch.errors import InvalidRequest
from scorch.values import BufferName, Flag, Text

if TYPE_CHECKING:
    from scorch.app import Orchestra

#: A path longer than this is no path (Linux's PATH_MAX is 4096).
MAX_PATH = 4096
#: The rooms an action acts on (every room's buffers, for a list that names none).
Rooms = Annotated[Selector, Field(description='Rooms: a name, a group or "*" (list: default all)')]


class BufferList(Action):
    """List the loaded buffers."""

    access = READ
    action: Literal["list"] = "list"
    instance: Rooms | None = None
    full: Annotated[Flag, Field(description="Every buffer, however many (by default the "
                                "first that fit the answer's size budget)")] = False


class BufferLoad(Action):
    """Read a sound file into a buffer of rooms (kept across crashes, same bufnum)."""

    access = CHANGE
    journal = ROOMS_NAMED
    action: Literal["load"]
    instance: Rooms
    path: Annotated[Text, Field(
        max_length=MAX_PATH, description="A sound file (WAV, AIFF, FLAC...), absolute "
        "or relative to the configured sample folders")]
    name: Annotated[BufferName | None, Field(
        description="Its name (default: the file's)")] = None


class BufferFree(Action):
    """Unload a buffer from rooms."""

    access = DESTROY
    journal = ROOMS_NAMED
    action: Literal["free"]
    instance: Rooms
    name: Annotated[BufferName, Field(description="Which buffer")]
    dry_run: Annotated[bool, Field(strict=True, description=(
        "List the buffers it would free, free nothing"))] = False


class BufferSearch(Action):
    """Find sample files by name in the configured sample folders."""

    access = READ
    action: Literal["search"]
    query: Annotated[Text | None, Field(
        max_length=200, description="Words the sample's path must hold, e.g. "
        '"kick 808" (default: the name)')] = None
    name: Annotated[BufferName | None, Field(description="A name to search for")] = None


BufferArgs = Annotated[BufferList | BufferLoad | BufferFree | BufferSearch,
                       Field(discriminator="action")]


class BufferOutput(Result):
    """The answer of the buffer tool."""

    action: str
    dry_run: bool = False
    buffers: list[BufferInfo] = Field(default_factory=list,
                                      description="loaded, listed or freed buffers")
    samples: list[SampleInfo] = Field(default_factory=list, description="search: files found")
    more: int = Field(0, description="list: buffers left out (the size budget): full=true "
                      "returns them")

    def text(self) -> str:
        if self.action != "list":
            return super().text()
        return budget.lines([f"{b.instance} {b.name}: bufnum {b.bufnum}, {b.seconds:g} s, "
                             f"{b.channels} ch, {b.path}" for b in self.buffers], self.more,
                            "buffers", "buffer(action='list', full=true)", "no buffers")


@operation(cli=CliForm("buffer", ("action", "instance", "path")))
def buffer(orch: Orchestra, args: BufferArgs) -> BufferOutput:
    """Sound files in buffers, kept across crashes under their bufnum: play one with
    play(synthdef="sampler", params={"bufnum": N}) ("sampler_stereo" for 2 channels)."""
    if args.action == "search":
        query = args.query if args.query is not None else args.name
        if not query:
            raise InvalidRequest("buffer action 'search' needs `query` (or `name`)")
        return BufferOutput(action="search", samples=orch.buffers.search(query))
    if args.action == "list":
        kept, more = budget.listing(orch.buffers.loaded(args.instance or "*"),
                                    budget.json_size, args.full)
        return BufferOutput(action="list", buffers=kept, more=more)
    if args.action == "load":
        rows = orch.buffers.load(args.instance, args.path, args.name)
    elif args.dry_run:
        rows = [b for b in orch.buffers.loaded(args.instance) if b.name == args.name]
        return BufferOutput(action="free", dry_run=True, buffers=rows)
    else:
        rows = orch.buffers.free(args.instance, args.name)
    return BufferOutput(action=args.action, buffers=rows)
