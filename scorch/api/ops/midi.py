"""The MIDI operation: ports, routes, mapping, learning, sending, panic."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from scorch.api.fields import RouteId, WaitTimeout
from scorch.api.models import plain
from scorch.api.operation import CHANGE, Args, Result, operation
from scorch.errors import InvalidRequest
from scorch.values import Text

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra

MidiAction = Literal["ports", "routes", "map", "unmap", "learn", "send", "panic"]


class MidiArgs(Args):
    """One MIDI action and what it needs."""

    action: Annotated[MidiAction, Field(
        description="ports: list devices; routes: list mappings; map: add a route; unmap: "
        "remove one; learn: wait for the next control moved; send: send a message; panic: "
        "all notes off")]
    spec: Annotated[dict[str, Any] | None, Field(
        description="map: the route, as in config.toml's [[midi.controls]] or [[midi.keys]]"
        ', e.g. {"port": "nanoKONTROL", "cc": 74, "instance": "lobby", "node": "pad", '
        '"param": "cutoff", "range": [200, 4000], "curve": "exp", "takeover": "pickup"}; '
        'keys: {"port": ..., "instance": ..., "synthdef": "pluck"}')] = None
    route_id: Annotated[RouteId | None, Field(description="unmap: the route's id")] = None
    port: Annotated[Text | None, Field(max_length=200,
                                       description="send: the output port")] = None
    message: Annotated[dict[str, Any] | None, Field(
        description='send: e.g. {"type": "note_on", "note": 60, "velocity": 100}')] = None
    timeout_s: Annotated[WaitTimeout, Field(description="learn: seconds to wait")] = 10.0


class MidiOutput(Result):
    """The answer of a MIDI action."""

    action: str
    result: Any


@operation(access=CHANGE, command="midi", positional=("action",), waits="timeout_s")
def midi(orch: Orchestra, args: MidiArgs) -> MidiOutput:
    """MIDI: list ports and routes, map a controller to a node param, learn a control,
    send a message, or panic."""
    return MidiOutput(action=args.action, result=plain(_act(orch, args)))


def _act(orch: Orchestra, args: MidiArgs) -> Any:
    action = args.action
    if action == "ports":
        return orch.midi.ports()
    if action == "routes":
        return orch.midi.routes()
    if action == "map":
        return orch.midi.map(_need(args.spec, "spec", action))
    if action == "unmap":
        orch.midi.unmap(_need(args.route_id, "route_id", action))
        return {"unmapped": args.route_id}
    if action == "learn":
        return orch.midi.learn(args.timeout_s)
    if action == "send":
        orch.midi.send(_need(args.port, "port", action), _need(args.message, "message", action))
        return {"sent": True}
    return {"panic": True, **orch.midi.panic()}


def _need(value: Any, key: str, action: str) -> Any:
    if value is None:
        raise InvalidRequest(f"midi action {action!r} needs the argument {key!r}")
    return value
