"""The MCP tools: thin typed adapters from Claude's calls to a backend's method table.

Every failure a person can act on becomes a ``ToolError`` whose text says what
went wrong and what is known (the instance names, the state and since when, the
argument at fault); anything else is logged with its traceback and reported
without taking the server down.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from mcp_server.results import (
    ConsoleOutput,
    EventsOutput,
    ExecuteOutput,
    InstanceList,
    MidiOutput,
    PlayOutput,
    ReleaseOutput,
    SetOutput,
    StatusOutput,
    StopOutput,
    SynthDefsOutput,
    WaitOutput,
)
from scorch.backend import Backend
from scorch.errors import ScorchError, SynthDefError

log = logging.getLogger(__name__)

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)


def _writes(destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


Selector = Annotated[str, Field(
    min_length=1, description='An instance name, a group name, or "*" for every instance')]
Name = Annotated[str, Field(min_length=1, description="One instance's name")]
Params = Annotated[dict[str, float], Field(
    description="Control values by param name, e.g. {\"freq\": 220, \"amp\": 0.2}; "
    "see synthdefs for each SynthDef's params and ranges")]


@contextlib.contextmanager
def _reported(tool: str) -> Iterator[None]:
    """Turn any failure into a ToolError a person understands; the server lives on."""
    try:
        yield
    except ToolError:
        raise
    except (ScorchError, SynthDefError, KeyError, ValueError, TimeoutError) as err:
        text = str(err)
        if isinstance(err, KeyError) and not isinstance(err, ScorchError | SynthDefError):
            text = f"not found: {text}"
        raise ToolError(text) from err
    except Exception as err:
        log.exception("tool %s failed", tool)
        raise ToolError(f"internal error in {tool} ({type(err).__name__}: {err}); "
                        "scorch keeps running, the server log has the details") from err


def execute_failure(results: list[dict[str, Any]]) -> str:
    """The text of a failed execute: each instance's error with line, char and source."""
    blocks = []
    for result in results:
        error = result["error"]
        if result["ok"]:
            blocks.append(f"{result['instance']}: ok -> {result['value']}")
            continue
        text = f"{result['instance']}: {error['text'] if error else 'failed'}"
        if result["posted"]:
            text += "\nposted before the error:\n" + "\n".join(result["posted"])
        blocks.append(text)
    return "\n\n".join(blocks)


def register(server: MCPServer, backend: Backend) -> None:
    """Add every scorch tool to ``server``, each calling ``backend``."""
    mode = getattr(backend, "mode", "hosted")

    @server.tool(annotations=READ)
    def list_instances() -> InstanceList:
        """List every SuperCollider instance: name, group, state, port, CPU, synths, uptime
        and restarts. Call this first to learn the names; only READY instances run code."""
        with _reported("list_instances"):
            return InstanceList.model_validate({"mode": mode, "instances": backend.instances()})

    @server.tool(annotations=_writes(destructive=True, idempotent=False))
    def execute(
        instance: Selector,
        code: Annotated[str, Field(description="SuperCollider code, as in the IDE; wrap several "
                                   "statements in ( ... ). `s` is this instance's server.")],
        timeout_s: Annotated[float, Field(gt=0, le=300, description="Seconds to wait; longer "
                                          "running code is stopped and sclang restarted")] = 10.0,
    ) -> ExecuteOutput:
        """Run SuperCollider code in an instance's sclang and return the value of the last
        expression and what it posted. With a group or "*", the code runs on each instance
        and there is one result per instance. An error comes back as a tool error with the
        line, character and source context of the problem in your code."""
        with _reported("execute"):
            results = backend.execute(instance, code, timeout_s)
        if not all(r["ok"] for r in results):
            raise ToolError(execute_failure(results))
        return ExecuteOutput.model_validate({"results": results})

    @server.tool(annotations=_writes(destructive=True, idempotent=True))
    def stop(instance: Selector) -> StopOutput:
        """Silence instances like Cmd-Period: stop routines and free every synth. Named
        nodes are forgotten (play them again to bring them back)."""
        with _reported("stop"):
            return StopOutput(stopped=backend.stop(instance))

    @server.tool(annotations=READ)
    def status(instance: Selector) -> StatusOutput:
        """Full status of instances: state and since when, scsynth's live CPU and counts,
        process ids, restart budget, last crash, and named nodes with their values."""
        with _reported("status"):
            return StatusOutput(instances=backend.status(instance))

    @server.tool(name="instance", annotations=_writes(destructive=True, idempotent=False))
    def instance_tool(
        name: Name,
        action: Annotated[Literal["boot", "quit", "restart"], Field(
            description="boot a STOPPED or FAILED instance, quit it, or restart it")],
    ) -> StatusOutput:
        """Boot, quit or restart one instance. Restoring after a restart is automatic:
        loaded SynthDefs and named nodes come back with their last values."""
        with _reported("instance"):
            return StatusOutput(instances=[backend.instance_action(name, action)])

    @server.tool(annotations=_writes(destructive=False, idempotent=False))
    def console(
        instance: Name,
        lines: Annotated[int, Field(ge=0, le=1000, description="How many recent lines")] = 50,
        clear: Annotated[bool, Field(description="Forget the lines after reading them")] = False,
    ) -> ConsoleOutput:
        """Read an instance's console: what sclang and scsynth printed, including output of
        routines and errors that happened after execute returned."""
        with _reported("console"):
            found = backend.console(instance, lines, clear)
        return ConsoleOutput.model_validate({"instance": instance, "lines": found})

    @server.tool(annotations=READ)
    def wait_for(
        instance: Name,
        pattern: Annotated[str, Field(min_length=1, description="A Python regular expression")],
        timeout_s: Annotated[float, Field(gt=0, le=120, description="Seconds to wait")] = 10.0,
        since: Annotated[int | None, Field(description="Only lines after this console seq; "
                                           "default: lines printed from now on")] = None,
    ) -> WaitOutput:
        """Wait until the instance's console shows a line matching a regex, e.g. a message a
        routine posts later. matched is false when no line came in time."""
        with _reported("wait_for"):
            line = backend.wait_for(instance, pattern, timeout_s, since)
        return WaitOutput.model_validate({"matched": line is not None, "line": line})

    @server.tool(annotations=_writes(destructive=False, idempotent=True))
    def synthdefs(
        action: Annotated[Literal["list", "describe", "load"], Field(
            description="list the library, describe one SynthDef, or load one into instances")
        ] = "list",
        name: Annotated[str | None, Field(description="The SynthDef (describe, load)")] = None,
        instance: Annotated[str | None, Field(
            description='Where to load it: a name, a group or "*" (load)')] = None,
    ) -> SynthDefsOutput:
        """The SynthDef library: ready-made sounds with descriptions and param specs (range,
        units, default). Load one to use it from your own code; play loads it by itself."""
        with _reported("synthdefs"):
            if action == "list":
                return SynthDefsOutput.model_validate(
                    {"action": action, "synthdefs": backend.synthdefs()})
            if not name:
                raise ToolError(f"synthdefs action {action!r} needs `name` (see action 'list')")
            if action == "describe":
                return SynthDefsOutput.model_validate(
                    {"action": action, "synthdefs": [backend.describe_synthdef(name)]})
            if not instance:
                raise ToolError("synthdefs action 'load' needs `instance` (a name, group or *)")
            loaded = backend.load_synthdef(instance, name)
            return SynthDefsOutput.model_validate(
                {"action": action, "synthdefs": [backend.describe_synthdef(name)],
                 "loaded_on": loaded})

    @server.tool(annotations=_writes(destructive=False, idempotent=False))
    def play(
        instance: Name,
        synthdef: Annotated[str, Field(min_length=1, description="A library SynthDef name")],
        params: Params | None = None,
        name: Annotated[str | None, Field(description="Name the node to tweak it later with set; "
                                          "it survives restarts. Reusing a name replaces it.")
                        ] = None,
    ) -> PlayOutput:
        """Start a synth from the library on one instance. Give it a name for anything you
        will adjust later (set) or stop (release); unnamed synths are fire-and-forget."""
        with _reported("play"):
            return PlayOutput.model_validate(backend.play(instance, synthdef, params or {}, name))

    @server.tool(name="set", annotations=_writes(destructive=False, idempotent=True))
    def set_tool(
        instance: Name,
        node: Annotated[str, Field(min_length=1, description="The named node (from play)")],
        params: Params,
    ) -> SetOutput:
        """Change params of a named node while it plays; the values are kept for restarts."""
        with _reported("set"):
            return SetOutput.model_validate(backend.set(instance, node, params))

    @server.tool(annotations=_writes(destructive=True, idempotent=False))
    def release(
        instance: Name,
        node: Annotated[str, Field(min_length=1, description="The named node (from play)")],
    ) -> ReleaseOutput:
        """Release a named node: it fades out over its release time and is forgotten."""
        with _reported("release"):
            return ReleaseOutput.model_validate(backend.release(instance, node))

    @server.tool(annotations=_writes(destructive=False, idempotent=False))
    def midi(
        action: Annotated[Literal["ports", "routes", "map", "unmap", "learn", "send", "panic"],
                          Field(description="ports: list devices; routes: list mappings; map: "
                                "add a route; unmap: remove one; learn: wait for the next "
                                "control moved; send: send a message; panic: all notes off")],
        spec: Annotated[dict[str, Any] | None, Field(
            description="map: the route, as in config.toml's [[midi.controls]] or [[midi.keys]]"
            ", e.g. {\"port\": \"nanoKONTROL\", \"cc\": 74, \"instance\": \"lobby\", "
            "\"node\": \"pad\", \"param\": \"cutoff\", \"range\": [200, 4000], "
            "\"curve\": \"exp\", \"takeover\": \"pickup\"}; keys: {\"port\": ..., "
            "\"instance\": ..., \"synthdef\": \"pluck\"}")] = None,
        route_id: Annotated[str | None, Field(description="unmap: the route's id")] = None,
        port: Annotated[str | None, Field(description="send: the output port")] = None,
        message: Annotated[dict[str, Any] | None, Field(
            description="send: e.g. {\"type\": \"note_on\", \"note\": 60, \"velocity\": 100}")
        ] = None,
        timeout_s: Annotated[float, Field(gt=0, le=120, description="learn: seconds to wait")
                             ] = 10.0,
    ) -> MidiOutput:
        """MIDI: list ports and routes, map a controller to a node param, learn a control,
        send a message, or panic."""
        args = {"spec": spec, "route_id": route_id, "port": port, "message": message,
                "timeout_s": timeout_s}
        with _reported("midi"):
            return MidiOutput(action=action, result=backend.midi(action, args))

    @server.tool(annotations=READ)
    def events(
        instance: Selector = "*",
        since: Annotated[int, Field(ge=0, description="Only events after this seq")] = 0,
    ) -> EventsOutput:
        """Lifecycle events: boots, crashes, hangs, restarts and restores, oldest first.
        Read these when an instance is RESTARTING or FAILED."""
        with _reported("events"):
            return EventsOutput.model_validate({"events": backend.events(instance, since)})
