"""The MIDI operation: ports, routes, mapping, learning, sending, panic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from scorch.api.fanout import label
from scorch.api.fields import RouteId, WaitTimeout
from scorch.api.models import plain
from scorch.api.operation import (
    CHANGE,
    DESTROY,
    READ,
    SET,
    SILENCE,
    Action,
    Answer,
    Host,
    Result,
    Where,
    operation,
)
from scorch.values import Text

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra

class MidiPorts(Action):
    """List the MIDI devices."""

    access = READ
    action: Literal["ports"]


class MidiRoutes(Action):
    """List the routes: which control moves which param, which keys play which room."""

    access = READ
    action: Literal["routes"]


class MidiMap(Action):
    """Add a route: a controller to a node's param, or keys to a SynthDef."""

    access = CHANGE
    action: Literal["map"]
    spec: Annotated[dict[str, Any], Field(
        description="The route, as in config.toml's [[midi.controls]] or [[midi.keys]]"
        ', e.g. {"port": "nanoKONTROL", "cc": 74, "instance": "lobby", "node": "pad", '
        '"param": "cutoff", "range": [200, 4000], "curve": "exp", "takeover": "pickup"}; '
        'keys: {"port": ..., "instance": ..., "synthdef": "pluck"}')]

    def where(self) -> Where:
        """On the host its controller is on (``host``), else where its room is."""
        host, room = self.spec.get("host"), self.spec.get("instance")
        return Where(rooms=room if isinstance(room, str) else None,
                     host=host if isinstance(host, str) else None)


class MidiUnmap(Action):
    """Remove a route."""

    access = DESTROY
    action: Literal["unmap"]
    route_id: Annotated[RouteId, Field(description="The route's id (see action 'routes')")]


class MidiLearn(Action):
    """Wait for the next control or note moved on any port, and say which it was; with a
    spec, map it at once."""

    access = CHANGE
    action: Literal["learn"]
    timeout_s: Annotated[WaitTimeout, Field(description="Seconds to wait")] = 10.0
    spec: Annotated[dict[str, Any] | None, Field(
        description="Map what is moved at once: a route as for map, without port and cc "
        '(they are what is moved), e.g. {"instance": "lobby", "node": "pad", "param": '
        '"cutoff", "range": [200, 4000]}')] = None


class MidiSend(Action):
    """Send a message to an output port."""

    access = CHANGE
    action: Literal["send"]
    port: Annotated[Text, Field(max_length=200, description="The output port")]
    message: Annotated[dict[str, Any], Field(
        description='e.g. {"type": "note_on", "note": 60, "velocity": 100}')]


class MidiStart(Action):
    """Switch MIDI on now, even if the config disables it (until scorch restarts; set
    [midi] enabled = true to keep it on)."""

    access = SET
    action: Literal["start"]
    backend: Annotated[Literal["auto", "alsa", "jack", "coremidi", "winmm"] | None, Field(
        description="The MIDI backend (default: the config's)")] = None


class MidiPanic(Action):
    """All notes off everywhere: every voice released, pedals lifted, all-notes-off out."""

    access = SILENCE
    action: Literal["panic"]


MidiArgs = Annotated[MidiPorts | MidiRoutes | MidiMap | MidiUnmap | MidiLearn | MidiSend
                     | MidiPanic | MidiStart, Field(discriminator="action")]


class MidiOutput(Result):
    """The answer of a MIDI action."""

    action: str
    result: Any


def _by_host(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Several hosts' results, each under its host's name."""
    if len(answers) == 1:
        return merged
    return {**merged, "result": {label(host): answer.get("result") for host, answer in answers}}


@operation(command="midi", positional=("action",), waits="timeout_s", merge=_by_host)
def midi(orch: Orchestra, args: MidiArgs) -> MidiOutput:
    """MIDI: list ports and routes, map a controller to a node param, learn a control,
    send a message, or panic."""
    return MidiOutput(action=args.action, result=plain(_act(orch, args)))


def _act(orch: Orchestra, args: MidiArgs) -> Any:
    if args.action == "ports":
        return orch.midi.ports()
    if args.action == "start":
        return orch.midi.start(args.backend)
    if args.action == "routes":
        return orch.midi.routes()
    if args.action == "map":
        return orch.midi.map(args.spec)
    if args.action == "unmap":
        orch.midi.unmap(args.route_id)
        return {"unmapped": args.route_id}
    if args.action == "learn":
        if args.spec is not None:
            return orch.midi.learn_and_map(args.spec, args.timeout_s)
        return orch.midi.learn(args.timeout_s)
    if args.action == "send":
        orch.midi.send(args.port, args.message)
        return {"sent": True}
    return {"panic": True, **orch.midi.panic()}
