"""The MIDI operation: ports, routes, mapping, learning, sending, panic."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from scorch.api import budget
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
    Changes,
    CliForm,
    Host,
    Patience,
    Result,
    Spread,
    Where,
    operation,
)
from scorch.values import Flag, Text

if TYPE_CHECKING:
    from scorch.app import Orchestra
#: A change of the MIDI routes (a session keeps them).
ROUTES = Changes(rooms=None, routes=True)


class MidiPorts(Action):
    """List the MIDI devices."""

    access = READ
    action: Literal["ports"]
    full: Annotated[Flag, Field(description="Every port, however many (by default the first "
                                "of each list that fit the answer's size budget)")] = False


class MidiRoutes(Action):
    """List the routes: controls to params, keys to rooms."""

    access = READ
    action: Literal["routes"]
    full: Annotated[Flag, Field(description="Every route, however many (by default the "
                                "first that fit the answer's size budget)")] = False


class MidiProfiles(Action):
    """List the controllers scorch knows by name (their ports and controls)."""

    access = READ
    action: Literal["profiles"]
    device: Annotated[Text | None, Field(max_length=100, description="One device (id or "
                                         "name) in detail")] = None


class MidiMap(Action):
    """Add a route: a controller to a node's param, or keys to a SynthDef."""

    access = CHANGE
    journal = ROUTES
    action: Literal["map"]
    spec: Annotated[dict[str, Any], Field(
        description="A route as in the config's [[midi.controls]] or [[midi.keys]], e.g. "
        '{"port": "nanoKONTROL2", "control": "fader1", "instance": "lobby", "node": "pad", '
        '"param": "cutoff", "range": [200, 4000], "curve": "exp"} (control: a name from '
        'profiles, or cc, note, nrpn...); a bank: controls ["fader1", "fader2"] with params '
        '(or nodes, instances) as lists; keys: {"port": ..., "instance": ..., "synthdef": '
        '"pluck"}; a page button: {"port": ..., "control": "track_right", "page": "gallery"}; '
        'cue GO: {"type": "cue", "note": 60}')]

    def where(self) -> Where:
        """On the host its controller is on (``host``), else where its room is."""
        host, room = self.spec.get("host"), self.spec.get("instance")
        return Where(rooms=room if isinstance(room, str) else None,
                     host=host if isinstance(host, str) else None)


class MidiUnmap(Action):
    """Remove a route."""

    access = DESTROY
    journal = ROUTES
    action: Literal["unmap"]
    route_id: Annotated[RouteId, Field(description="The route's id (see action 'routes')")]


class MidiLearn(Action):
    """Wait for the next control or note moved on any port, and say which it was; with a
    spec, map it at once."""

    access = CHANGE
    action: Literal["learn"]
    timeout_s: Annotated[WaitTimeout, Field(description="Seconds to wait")] = 10.0
    spec: Annotated[dict[str, Any] | None, Field(
        description="Map what is moved: a route as for map without port and cc, e.g. "
        '{"instance": "lobby", "node": "pad", "param": "cutoff"}')] = None


class MidiSend(Action):
    """Send a message or a phrase to an output port, or into scorch, where it plays and is
    captured as a keyboard's notes are."""

    access = CHANGE
    action: Literal["send"]
    port: Annotated[Text, Field(max_length=200, description="An output port, or \"scorch\" "
                                "(its own input); `ports` lists them as send_to")]
    message: Annotated[dict[str, Any] | Annotated[list[dict[str, Any]], Field(
        min_length=1, max_length=1000)], Field(
        description='e.g. {"type": "note_on", "note": 60, "velocity": 100}; a phrase is a '
                    'list of them, each "time" seconds after the one before, played in '
                    'real time')]


class MidiStart(Action):
    """Switch MIDI on now, though the config disables it (until scorch restarts)."""

    access = SET
    action: Literal["start"]
    backend: Annotated[Literal["auto", "alsa", "jack", "coremidi", "winmm"] | None, Field(
        description="The MIDI backend (default: the config's)")] = None


class MidiPanic(Action):
    """All notes off everywhere: every voice released, pedals lifted, all-notes-off out."""

    access = SILENCE
    action: Literal["panic"]


MidiArgs = Annotated[MidiPorts | MidiRoutes | MidiMap | MidiUnmap | MidiLearn | MidiSend
                     | MidiPanic | MidiStart | MidiProfiles, Field(discriminator="action")]


class MidiOutput(Result):
    """The answer of a MIDI action."""

    action: str
    result: Any
    more: dict[str, int] = Field(default_factory=dict, description="ports, routes: how many "
                                 "of each list were left out (the size budget): full=true "
                                 "returns them")

    def text(self) -> str:
        if self.action == "routes" and isinstance(self.result, list):
            rows = [f"{r.get('id')} ({r.get('origin')} {r.get('type')}): "
                    f"{json.dumps(r.get('route'))}"
                    + (f" [error: {r['error']}]" if r.get("error") else "")
                    for r in self.result if isinstance(r, dict)]
            return budget.lines(rows, self.more.get("routes", 0), "routes",
                                "midi(action='routes', full=true)", "no routes")
        if self.action == "ports" and isinstance(self.result, dict):
            rows = [f"{key}: {json.dumps(value)}" for key, value in _flat(self.result).items()]
            notes = [budget.more(n, key, "midi(action='ports', full=true)")
                     for key, n in self.more.items()]
            return "\n".join(rows + [f"[{note}]" for note in notes])
        return super().text()


def _flat(ports: dict[str, Any]) -> dict[str, Any]:
    """The ports' lists by one dotted key each (``available.inputs``, ``missing.inputs``)."""
    flat: dict[str, Any] = {}
    for key, value in ports.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def _within(action: str, found: Any) -> tuple[Any, dict[str, int]]:
    """A list's answer within the size budget, and how many of each list it left out."""
    if action == "routes" and isinstance(found, list):
        kept, more = budget.listing(found, budget.json_size, False)
        return kept, {"routes": more} if more else {}
    if action != "ports" or not isinstance(found, dict):
        return found, {}
    # The shortest lists first, each whole if it fits its share of what is left: a long
    # list of available ports takes what the short ones leave.
    lists = sorted(((k, v) for k, v in _flat(found).items() if isinstance(v, list)),
                   key=lambda kv: budget.json_size(kv[1]))
    cut: dict[str, Any] = {}
    left: dict[str, int] = {}
    spare = budget.TEXT
    for index, (key, items) in enumerate(lists):
        share = spare // (len(lists) - index)
        cut[key], more = budget.listing(items, budget.json_size, False, budget=share)
        spare -= sum(budget.json_size(i) + budget.OVERHEAD for i in cut[key])
        if more:
            left[key] = more
    out = {key: {k: cut.get(f"{key}.{k}", v) for k, v in value.items()}
           if isinstance(value, dict) else cut.get(key, value) for key, value in found.items()}
    return out, left


def _by_host(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Several hosts' results, each under its host's name."""
    if len(answers) == 1:
        return merged
    return {**merged, "result": {label(host): answer.get("result") for host, answer in answers}}


@operation(cli=CliForm("midi", ("action",)), spread=Spread(merge=_by_host),
           patience=Patience(argument="timeout_s"))
def midi(orch: Orchestra, args: MidiArgs) -> MidiOutput:
    """MIDI: list ports, routes and known controllers, map controls to node params and keys
    to SynthDefs, learn a control, send notes, or panic."""
    found = plain(_act(orch, args))
    if getattr(args, "full", True):
        return MidiOutput(action=args.action, result=found)
    kept, more = _within(args.action, found)
    return MidiOutput(action=args.action, result=kept, more=more)


def _act(orch: Orchestra, args: MidiArgs) -> Any:
    if args.action == "ports":
        return orch.midi.ports()
    if args.action == "start":
        return orch.midi.start(args.backend)
    if args.action == "routes":
        return orch.midi.routes()
    if args.action == "profiles":
        return orch.midi.profiles(args.device)
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
        return orch.midi.send(args.port, args.message)
    return {"panic": True, **orch.midi.panic()}
