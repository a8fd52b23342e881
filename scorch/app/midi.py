"""MIDI: the router's ports and routes, learning, sending, and all notes off."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from midi.schema import ControlRoute, KeyRoute
from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN
from scorch.app.tree import ASK, RESTORE_WAIT, Tree
from scorch.errors import InvalidRequest, MidiUnavailable, ScorchError
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.node_tree import tree_synths
from scorch.primitives.synthdefs.scgf import param_names
from scorch.values import describe_errors

log = logging.getLogger(__name__)

#: Seconds a router may take to open its backend and ports.
START_WAIT = 30.0


class Midi:
    """Ask the MIDI router; MidiUnavailable says why when MIDI is off (any thread)."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree

    @property
    def error(self) -> str | None:
        """Why MIDI is off, or None while the router runs."""
        return self._tree.midi_error

    def start(self, backend: str | None = None) -> dict[str, Any]:
        """Switch MIDI on now (the config may disable it): start the router, with
        ``backend`` if given; MidiUnavailable says why it cannot run."""
        supervisor = self._tree.supervisor
        if supervisor is None:
            raise MidiUnavailable("scorch is not started yet")
        error = supervisor.start_midi(backend).get(timeout=START_WAIT)
        self._tree.router = supervisor.router_proxy().get(timeout=ASK)
        self._tree.midi_error = error
        if error is not None:
            raise MidiUnavailable(error)
        return {"started": True, **self.ports()}

    def ports(self) -> dict[str, Any]:
        """Open and missing MIDI ports, and every port the system offers."""
        return self._tree.midi().ports().get(timeout=ASK)

    def routes(self) -> list[dict[str, Any]]:
        """Every MIDI route, from the config and added at run time."""
        return self._tree.midi().routes().get(timeout=ASK)

    def map(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Add a run-time route: a control (``cc``, ``nrpn``...) or keys (``synthdef``)."""
        kind = KeyRoute if "synthdef" in spec else ControlRoute
        try:
            route = kind.model_validate(spec)
        except ValidationError as err:
            problems = "; ".join(describe_errors(err, noun="key"))
            raise InvalidRequest(f"invalid MIDI route: {problems}") from err
        names = self._tree.resolve(route.instance)
        if isinstance(route, ControlRoute):
            self._check_param(route, names)
        route_id = self._tree.midi().map(route).get(timeout=ASK)
        out: dict[str, Any] = {"id": route_id, "route": route.model_dump(mode="json")}
        if isinstance(route, ControlRoute):
            views = self._tree.views
            missing = [n for n in names if route.node not in views[n].nodes]
            if missing:
                out["warning"] = (f"no node {route.node!r} on {', '.join(missing)} yet: the "
                                  "route acts once one is played with that name")
        return out

    def _check_param(self, route: ControlRoute, rooms: list[str]) -> None:
        """Refuse a param the node's SynthDef lacks, on every room that has the node now."""
        for room in rooms:
            node = self._tree.views[room].nodes.get(route.node)
            known = self._params_of(room, node.synthdef) if node is not None else None
            if known is not None and route.param not in known:
                raise _param_error(route.param, f"node {route.node!r} on {room} "
                                   f"({node.synthdef if node else ''})", known)

    def _params_of(self, room: str, synthdef: str) -> list[str] | None:
        """The controls of a SynthDef: the library's, or those in the bytes of one the
        room's code sent (kept to send again at every boot); None: not known here."""
        library = self._tree.library
        if synthdef in library:
            return [p.name for p in library.info(synthdef).params]
        data = self._tree.views[room].synthdefs.get(synthdef)
        try:
            return param_names(data) if data is not None else None
        except ValueError:
            log.warning("the SynthDef %r kept for %s cannot be read: %s's params unchecked",
                        synthdef, room, synthdef)
            return None

    def learn_and_map(self, spec: Mapping[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """Wait for the next control or note moved, then map it with ``spec`` (the route
        without its port and source: those are what was moved); None on timeout.

        The spec is checked before the wait, so a mistake is told at once.
        """
        if any(key in spec for key in SOURCES):
            raise InvalidRequest(f"learn takes the control from what is moved: leave "
                                 f"{', '.join(k for k in SOURCES if k in spec)} out of the spec")
        keys = "synthdef" in spec
        probe = {**spec} if keys else {**spec, "cc": 0}
        kind = KeyRoute if keys else ControlRoute
        try:
            checked = kind.model_validate(probe)
        except ValidationError as err:
            raise InvalidRequest("invalid MIDI route: " + "; ".join(
                describe_errors(err, noun="key"))) from err
        if isinstance(checked, ControlRoute):
            self._check_param(checked, self._tree.resolve(checked.instance))
        learned = self.learn(timeout_s)
        if learned is None:
            return None
        source = _source(learned, keys)
        route = {"port": learned["port"], "channel": learned["channel"], **spec, **source}
        return {"learned": learned, **self.map(route)}

    def restore(self, route: Mapping[str, Any]) -> None:
        """Add a route as a session holds it (``type`` ``key`` or ``control``, and its fields)."""
        spec = {k: v for k, v in route.items() if k != "type"}
        kind = KeyRoute if route["type"] == "key" else ControlRoute
        self._tree.midi().map(kind.model_validate(spec)).get(timeout=ASK)

    def unmap(self, route_id: str) -> None:
        """Remove a run-time route by id."""
        try:
            self._tree.midi().unmap(route_id).get(timeout=ASK)
        except ValueError as err:
            raise InvalidRequest(str(err).strip("'\"")) from err

    def learn(self, timeout_s: float = 10.0) -> dict[str, Any] | None:
        """Wait for the next control or note moved on any port (None on timeout)."""
        # The router arms the learn and answers at once; the future fills when a
        # control moves, so the router keeps serving while we wait.
        learned = self._tree.midi().learn(timeout_s).get(timeout=ASK)
        return learned.result(timeout=timeout_s + ASK)

    def send(self, port: str, message: dict[str, Any]) -> None:
        """Send a message such as ``{"type": "note_on", "note": 60, "velocity": 90}``."""
        fields = dict(message)
        kind = fields.pop("type", None) or fields.pop("kind", None)
        if not kind:
            raise InvalidRequest("MIDI message needs a 'type' (note_on, note_off, cc, program, "
                                 "clock, start, stop, continue)")
        try:
            self._tree.midi().send(port, kind, **fields).get(timeout=ASK)
        except (KeyError, ValueError, TypeError) as err:
            raise InvalidRequest(f"cannot send to {port!r}: {err}") from err

    def stats(self) -> dict[str, Any]:
        """The router's counters and hot-path timings."""
        return self._tree.midi().stats().get(timeout=ASK)

    def panic(self) -> dict[str, Any]:
        """All notes off everywhere: release every voice, lift pedals, all-notes-off out.

        Then every room's scsynth is asked which synths run in the MIDI voices' node id
        range, and each gets ``gate 0``: voices the router no longer knows (a router
        restarted, a release lost) are released too.
        """
        self._tree.await_ready((), time.monotonic() + RESTORE_WAIT, "MIDI panic")
        released = 0
        router = self._tree.router
        if router is not None:
            released = router.panic().get(timeout=ASK)
        swept: dict[str, int | None] = {}
        for name, view in self._tree.views.items():
            osc = view.osc
            if osc is None:
                continue
            try:
                reply = osc.request(commands.Cmd.G_QUERY_TREE, 0, 0,
                                    reply=commands.Reply.QUERY_TREE, timeout=2.0)
            except ScorchError as err:
                log.warning("panic: %s did not list its synths: %s", name, err)
                swept[name] = None
                continue
            voices = [node for node, _ in tree_synths(reply.args)
                      if FIRST_NODE_ID <= node < FIRST_NODE_ID + NODE_ID_SPAN]
            for node in voices:
                osc.send(commands.release(node))
            swept[name] = len(voices)
        return {"released": released, "voices_in_rooms": swept,
                "midi": self.error or "on"}


#: The keys of a control route that say which control moves it.
SOURCES = ("cc", "nrpn", "pitchbend", "aftertouch")


def _source(learned: Mapping[str, Any], keys: bool) -> dict[str, Any]:
    """The route keys for what was moved: a CC, NRPN, wheel or pressure (keys: any note)."""
    kind = learned["kind"]
    if keys:
        return {}
    if kind == "note":
        raise InvalidRequest(f"a key was played (note {learned['number']}), not a control: "
                             "move a knob or fader, or give the spec a synthdef to map keys")
    if kind in ("cc", "nrpn"):
        return {kind: int(learned["number"])}
    return {kind: True}


def _param_error(param: str, what: str, known: list[str]) -> InvalidRequest:
    err = InvalidRequest(f"{what} has no param {param!r}; its params: {', '.join(known)}")
    err.argument = "spec"
    return err
