"""MIDI: the router's ports and routes, learning, sending, and all notes off."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from actors.router import encode
from midi import FIRST_NODE_ID, NODE_ID_SPAN, ControlRoute, CueRoute, KeyRoute, PageRoute
from midi.controllers import describe, groups
from scorch.app.tree import ASK, RESTORE_WAIT, Tree
from scorch.config import Profiles, load_profiles, user_folders
from scorch.errors import InvalidRequest, MidiUnavailable, NotFound, ScorchError
from scorch.primitives.scsynth import commands
from scorch.primitives.synthdefs import param_names
from scorch.values import describe_errors

log = logging.getLogger(__name__)

#: A phrase ``send`` plays: messages, and seconds from its first to its last, at most (an
#: attached caller waits 30 s for an answer: the operation's patience).
PHRASE_MESSAGES = 1000
PHRASE_SECONDS = 25.0

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

    def profiles(self, device: str | None = None) -> Any:
        """The known controllers and their controls (``device``: one, every control)."""
        profiles = self._profiles()
        if device is None:
            return [describe(p) for p in profiles.all.values()]
        wanted = device.lower()
        for profile in profiles.all.values():
            if wanted == profile.id.lower() or wanted in profile.name.lower():
                return describe(profile, full=True)
        raise NotFound(f"no controller profile {device!r}; profiles: "
                       f"{', '.join(profiles.all)}", name=device, known=list(profiles.all))

    def _profiles(self) -> Profiles:
        router = self._tree.router
        if router is not None:
            return router.profiles().get(timeout=ASK)
        return load_profiles(user_folders(self._tree.config.source))

    def map(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Add a run-time route: a control (``control``, ``cc``...), keys (``synthdef``), a
        page button (``page`` without ``node``), or a bank (``controls``: a list)."""
        if "controls" in spec:
            return self._map_bank(spec)
        route = _parse(spec)
        if isinstance(route, PageRoute | CueRoute):
            if route.control is not None:
                self._check_control(route.port, route.control)
            return {"id": self._tree.midi().map(route).get(timeout=ASK),
                    "route": route.model_dump(mode="json")}
        names = self._tree.resolve(route.instance)
        if isinstance(route, ControlRoute):
            self._check_param(route, names)
            if route.control is not None:
                self._check_control(route.port, route.control)
        route_id = self._tree.midi().map(route).get(timeout=ASK)
        out: dict[str, Any] = {"id": route_id, "route": route.model_dump(mode="json")}
        if isinstance(route, ControlRoute):
            views = self._tree.views
            missing = [n for n in names if route.node not in views[n].nodes]
            if missing:
                out["warning"] = (f"no node {route.node!r} on {', '.join(missing)} yet: the "
                                  "route acts once one is played with that name")
        return out

    def _map_bank(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Map a bank of controls at once: ``controls`` with as many ``params``, ``nodes``
        or ``instances`` (one value for all where a key is not a list)."""
        controls = spec["controls"]
        if not isinstance(controls, list) or not 1 <= len(controls) <= 128:
            raise _spec_error("controls: a list of 1 to 128 control names, e.g. "
                              '["fader1", "fader2", "fader3", "fader4"]')
        lists = {key: value for key, value in spec.items()
                 if key in BANK_LISTS and isinstance(value, list)}
        for key, value in lists.items():
            if len(value) != len(controls):
                raise _spec_error(f"{key} holds {len(value)} values for {len(controls)} "
                                  "controls: one each")
        base = {k: v for k, v in spec.items() if k != "controls" and k not in lists}
        specs = []
        for index, control in enumerate(controls):
            one = {**base, "control": control,
                   **{BANK_LISTS[key]: value[index] for key, value in lists.items()}}
            if "id" in base:
                one["id"] = f"{base['id']}-{index + 1}"
            specs.append(one)
        for one in specs:  # every route checked before any is added
            route = _parse(one)
            if isinstance(route, ControlRoute):
                self._check_param(route, self._tree.resolve(route.instance))
            if not isinstance(route, KeyRoute) and route.control is not None:
                self._check_control(route.port, route.control)
        return {"mapped": [self.map(one) for one in specs]}

    def _check_control(self, port: str, control: str) -> None:
        """Refuse a control no device the route's port may mean has, naming theirs."""
        found = self._profiles().for_pattern(port)
        if any(control in p.controls for p in found):
            return
        known = "; ".join(f"{p.name}: {', '.join(groups(p))}" for p in found)
        raise _spec_error(f"no device on port {port!r} has a control {control!r}"
                          + (f" ({known})" if known else ""))

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
        """Add a route as a session holds it (``type`` key, control or page, and its fields)."""
        spec = {k: v for k, v in route.items() if k != "type"}
        kinds: dict[str, type[ControlRoute | KeyRoute | PageRoute | CueRoute]] = {
            "key": KeyRoute, "page": PageRoute, "control": ControlRoute, "cue": CueRoute}
        self._tree.midi().map(kinds[route["type"]].model_validate(spec)).get(timeout=ASK)

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

    def send(self, port: str, message: Mapping[str, Any] | Sequence[Mapping[str, Any]],
             ) -> dict[str, Any]:
        """Send a message such as ``{"type": "note_on", "note": 60, "velocity": 90}``, or a
        phrase: a list of them, each ``time`` seconds after the one before (as in mido),
        played in real time. ``port`` is an output or scorch's own input (``scorch``),
        where what is sent plays as a keyboard on it would: routed, and captured.

        Every message is checked before the first is sent. Returns how many were sent,
        where, and over how many seconds.
        """
        phrase = [message] if isinstance(message, Mapping) else list(message)
        steps = [phrase_step(phrase, index) for index in range(len(phrase))]
        if len(steps) > PHRASE_MESSAGES:
            raise InvalidRequest(f"a phrase is at most {PHRASE_MESSAGES} messages, got "
                                 f"{len(steps)}")
        if sum(delay for delay, _, _ in steps) > PHRASE_SECONDS:
            raise InvalidRequest(f"a phrase lasts at most {PHRASE_SECONDS:g} s (the sum of "
                                 "its messages' time)")
        router = self._tree.midi()
        start = time.monotonic()
        at, went = start, port
        for delay, kind, fields in steps:
            at += delay
            early = at - time.monotonic()
            if early > 0:
                time.sleep(early)
            try:
                went = router.send(port, kind, **fields).get(timeout=ASK)
            except (KeyError, ValueError, TypeError) as err:
                raise InvalidRequest(f"cannot send to {port!r}: {err}") from err
        return {"sent": len(steps), "port": went, "seconds": round(time.monotonic() - start, 3)}

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
        for name, door in list(self._tree.doors.items()):
            osc = door.scsynth
            if not osc.is_open:
                continue
            try:
                voices = [n.node_id for n in osc.query_tree() if n.synthdef is not None
                          and FIRST_NODE_ID <= n.node_id < FIRST_NODE_ID + NODE_ID_SPAN]
                for node in voices:
                    osc.send(commands.release(node))
            except ScorchError as err:
                log.warning("panic: %s did not list its synths: %s", name, err)
                swept[name] = None
                continue
            swept[name] = len(voices)
        return {"released": released, "voices_in_rooms": swept,
                "midi": self.error or "on"}


#: The keys of a control route that say which control moves it.
SOURCES = ("control", "cc", "nrpn", "pitchbend", "aftertouch", "note")
#: A bank's keys that may be lists, one value per control, and the route key of each.
BANK_LISTS = {"params": "param", "nodes": "node", "instances": "instance", "param": "param",
              "node": "node", "instance": "instance"}


def _parse(spec: Mapping[str, Any]) -> ControlRoute | KeyRoute | PageRoute | CueRoute:
    """The route a spec is: keys (synthdef), a page button (page, no node), a cue button
    (type cue), or a control."""
    cue = spec.get("type") == "cue"
    if cue:
        spec = {k: v for k, v in spec.items() if k != "type"}
    kind: type[ControlRoute | KeyRoute | PageRoute | CueRoute] = (
        CueRoute if cue else KeyRoute if "synthdef" in spec else
        PageRoute if "page" in spec and "node" not in spec else ControlRoute)
    try:
        return kind.model_validate(spec)
    except ValidationError as err:
        problems = "; ".join(describe_errors(err, noun="key"))
        raise InvalidRequest(f"invalid MIDI route: {problems}") from err


def _spec_error(message: str) -> InvalidRequest:
    err = InvalidRequest(f"invalid MIDI route: {message}")
    err.argument = "spec"
    return err


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


def phrase_step(phrase: Sequence[Mapping[str, Any]],
                index: int) -> tuple[float, str, dict[str, Any]]:
    """Message ``index`` of a phrase as (seconds after the one before, kind, fields), checked
    as the router encodes it; InvalidRequest names the message when it is not one."""
    where = "MIDI message" if len(phrase) == 1 else f"MIDI message {index} of the phrase"
    message = phrase[index]
    if not isinstance(message, Mapping):
        raise InvalidRequest(f"{where} is not an object: {message!r:.80}")
    fields = dict(message)
    kind = fields.pop("type", None) or fields.pop("kind", None)
    if not kind or not isinstance(kind, str):
        raise InvalidRequest(f"{where} needs a 'type' (note_on, note_off, cc, program, "
                             "clock, start, stop, continue)")
    delay = fields.pop("time", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not (
            0 <= delay < math.inf):
        raise InvalidRequest(f"{where}: 'time' is the seconds after the message before, a "
                             f"number from 0, got {delay!r:.40}")
    try:
        encode(kind, fields.get("channel", 1), {k: v for k, v in fields.items()
                                                if k != "channel"})
    except (KeyError, ValueError, TypeError) as err:
        raise InvalidRequest(f"{where}: {err}") from err
    return float(delay), kind, fields
