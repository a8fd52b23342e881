"""The buffer operation: sound files loaded into scsynth, kept across restarts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from scorch.api.fields import Selector
from scorch.api.operation import CHANGE, Args, Result, operation
from scorch.app.models import BufferInfo, SampleInfo
from scorch.errors import InvalidRequest
from scorch.values import BufferName, Text

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra

#: A path longer than this is no path (Linux's PATH_MAX is 4096).
MAX_PATH = 4096


class BufferArgs(Args):
    """One buffer action and what it needs."""

    action: Annotated[Literal["load", "list", "free", "search"], Field(
        description="load: read a sound file into a buffer (kept across crashes, same "
        "bufnum); list: loaded buffers; free: unload one; search: find sample files by name")
    ] = "list"
    instance: Annotated[Selector | None, Field(
        description='load, free: where (a name, a group or "*"); list: default all')] = None
    path: Annotated[Text | None, Field(
        max_length=MAX_PATH, description="load: a sound file (WAV, AIFF, FLAC...), absolute "
        "or relative to the configured sample folders")] = None
    name: Annotated[BufferName | None, Field(
        description="load: the buffer's name (default: the file's name); free: which")] = None
    query: Annotated[Text | None, Field(
        max_length=200, description="search: words the sample's path must hold, e.g. "
        '"kick 808" (default: the name)')] = None


class BufferOutput(Result):
    """The answer of the buffer tool."""

    action: str
    buffers: list[BufferInfo] = Field(default_factory=list,
                                      description="loaded, listed or freed buffers")
    samples: list[SampleInfo] = Field(default_factory=list, description="search: files found")


@operation(access=CHANGE, command="buffer", positional=("action", "instance", "path"))
def buffer(orch: Orchestra, args: BufferArgs) -> BufferOutput:
    """Sound files in buffers, for the sampler SynthDef: load a sample into instances (it is
    loaded again under the same bufnum after any crash), list them, free one, or search the
    configured sample folders by name. Play one with play(synthdef="sampler",
    params={"bufnum": N}) ("sampler_stereo" for 2-channel files)."""
    if args.action == "search":
        query = args.query if args.query is not None else args.name
        if not query:
            raise InvalidRequest("buffer action 'search' needs `query` (or `name`)")
        return BufferOutput(action="search", samples=orch.buffers.search(query))
    if args.action == "list":
        return BufferOutput(action="list", buffers=orch.buffers.loaded(args.instance or "*"))
    if args.instance is None:
        raise InvalidRequest(f"buffer action {args.action!r} needs `instance` "
                             "(a name, group or *)")
    if args.action == "load":
        if args.path is None:
            raise InvalidRequest("buffer action 'load' needs `path` (see action 'search')")
        rows = orch.buffers.load(args.instance, args.path, args.name)
    else:
        if args.name is None:
            raise InvalidRequest("buffer action 'free' needs `name` (see action 'list')")
        rows = orch.buffers.free(args.instance, args.name)
    return BufferOutput(action=args.action, buffers=rows)
