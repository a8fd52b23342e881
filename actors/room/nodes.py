"""The named nodes of one room, on its scsynth and in its desired state.

:class:`Nodes` belongs to the Room actor, which exposes it to proxies as a
traversable attribute (``proxy.nodes.play(...)``): every method runs in the
actor's thread. Each change is all or nothing: the desired state changes only
once scsynth accepted the command, and nodes that end on the server without
scorch asking leave the desired state, so no restore replays them. Each change, once
made, is published on the bus (:mod:`scorch.state.changes`): nobody is told by hand.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pykka

from actors.room.processes import Processes, RoomSettings
from midi import FIRST_NODE_ID, NODE_ID_SPAN
from scorch.config import RoomChanges
from scorch.errors import InvalidRequest, NodeNotFound, OscFailure, OscTimeout
from scorch.primitives.scsynth import OscClient, commands, placement
from scorch.state import (
    Bus,
    DesiredState,
    Kind,
    NodeEnded,
    NodeMoved,
    NodeStarted,
    NodeState,
    ParamsChanged,
    Published,
    RoomView,
    State,
    Subscription,
    origins,
)

#: A named node's end counts once its scsynth still answers this much later.
NODE_END_GRACE = 0.3

Event = Callable[..., None]


class Nodes:
    """Named persistent nodes: play, set, release, silence, and their ends (actor thread)."""

    def __init__(self, name: str, desired: DesiredState, processes: Processes,
                 view: RoomView, bus: Bus, event: Event, changed: Callable[[], None],
                 require_ready: Callable[[], None]) -> None:
        self.name = name
        self.desired = desired
        self._bus = bus
        self._processes = processes
        self._view = view
        self._event = event
        self._changed = changed
        """Tells the MIDI router to look again where the nodes are."""
        self._require_ready = require_ready
        self._me: Any = None
        self._sent: Subscription | None = None
        """Values MIDI routers (this host's, another's) sent to this room's scsynth."""

    def bind(self, proxy: Any) -> None:
        """The proxy to this object through its actor (for timers that call back); from now
        on, values a MIDI router sent to a named node here are kept (:meth:`keep`)."""
        self._me = proxy
        room = self.name

        def sent(published: Published) -> None:  # the subscription's thread: a tell, no wait
            change = published.change
            assert isinstance(change, ParamsChanged)
            with contextlib.suppress(pykka.ActorDeadError):
                proxy.keep(change.node, dict(change.params))

        self._sent = self._bus.subscribe(sent, f"{room}-sent", lambda change: (
            type(change) is ParamsChanged and change.room == room
            and change.by.startswith("midi")))

    def unbind(self) -> None:
        """Stop keeping values others sent (the actor stops)."""
        if self._sent is not None:
            self._sent.close()

    def reconfigure(self, settings: RoomSettings, room: RoomChanges,
                    sounding: bool) -> None:
        """A reloaded config's SynthDefs and nodes: now while scsynth plays, else at boot."""
        names = (settings.all_synthdefs() if "all" in room.synthdefs_added
                 else list(room.synthdefs_added))
        for name in names:
            compiled = settings.compiled_synthdef(name)
            if sounding:
                self.load_synthdef(name, compiled)
            else:
                self.desired.add_synthdef(name, compiled)
        nodes = room.nodes
        for name in (*nodes.removed, *nodes.replaced):
            if name in self.desired.nodes:
                self.release(name, by="config")
        for name, node in nodes.changed.items():
            if name in self.desired.nodes:
                self.set_params(name, dict(node.params), by="config")
        for name, node in {**nodes.replaced, **nodes.added}.items():
            compiled = settings.compiled_synthdef(node.synthdef)
            if sounding:
                self.play(node.synthdef, dict(node.params), name, compiled, by="config")
            else:
                self.desired.add_synthdef(node.synthdef, compiled)
                self.desired.add_node(name, node.synthdef, dict(node.params))
        self.publish()

    def publish(self) -> None:
        """Show the named nodes and their values to readers (a copy: they read it unlocked)."""
        self._view.nodes = {name: replace(node, params=dict(node.params))
                            for name, node in self.desired.nodes.items()}
        if self._view.synthdefs.keys() != self.desired.synthdefs.keys():
            self._view.synthdefs = dict(self.desired.synthdefs)
        self._view.update(nodes=tuple(self.desired.nodes))

    def _osc(self) -> OscClient:
        osc = self._processes.osc
        assert osc is not None, "checked by require_ready"
        return osc

    def play(self, synthdef: str, params: dict[str, float], name: str | None,
             compiled: bytes | None = None, at: float | None = None,
             target: str | None = None, add_action: str = "tail",
             sent: bool = False, defaults: dict[str, float] | None = None,
             by: str = "play") -> dict[str, object]:
        """Start a synth; with ``name`` it is a persistent node restored after restarts.

        All or nothing: the node is recorded only once scsynth said it started
        (``/n_go``); a replaced node is freed only then. ``compiled``: the SynthDef's
        bytes, loaded first when the room does not have it yet. ``at``: a bundle
        that scsynth starts at this Unix time (a node it replaces ends then too); the
        node is recorded at once, as scheduled. ``target``: a named node to start it
        ``before`` or ``after`` (``add_action``; else ``head`` or ``tail`` of the default
        group); it keeps its place through restores. ``sent``: the SynthDef is on scsynth
        already (code sent it): its bytes are kept to send again after a restart.
        ``defaults``: the SynthDef's params' defaults, announced with a named node's start
        for the params not given (what its controls hold).
        """
        self._require_ready()
        if target is not None and target not in self.desired.nodes:
            raise NodeNotFound(f"room {self.name!r} has no node {target!r} to play "
                               f"{add_action}; named nodes: "
                               f"{', '.join(self.desired.nodes) or '(none)'}", name=target,
                               known=self.desired.nodes)
        if target is not None and target == name:
            raise InvalidRequest(f"node {name!r} cannot be placed {add_action} itself")
        if compiled is not None and sent:
            self.desired.add_synthdef(synthdef, compiled)  # to send again after a restart
        elif synthdef not in self.desired.synthdefs and compiled is not None:
            self.load_synthdef(synthdef, compiled)
        if name is None:
            node = NodeState("", synthdef, self.desired.unnamed_id(), dict(params))
        else:
            node = self.desired.new_node(name, synthdef, params)
        node = replace(node, target=target, add_action=add_action)
        if at is not None:
            return self._schedule(node, name, at, defaults, by)
        self._start(node)
        if name is None:
            return {"synthdef": synthdef, "node": None, "node_id": node.node_id,
                    "params": dict(params)}
        old = self.desired.keep(node)
        if old is not None:
            self._osc().send(commands.n_free(old.node_id))
        self._started(node, defaults, by, None)
        return {"synthdef": synthdef, "node": name, "node_id": node.node_id,
                "params": dict(node.params)}

    def _started(self, node: NodeState, defaults: dict[str, float] | None, by: str,
                 at: float | None) -> None:
        self.publish()
        self._bus.publish(NodeStarted(self.name, node.name, node.synthdef, node.node_id,
                                      {**(defaults or {}), **node.params}, by, at))

    def _schedule(self, node: NodeState, name: str | None, at: float,
                  defaults: dict[str, float] | None, by: str) -> dict[str, object]:
        """Send the node's start in a bundle for ``at``; keep it (it is scheduled)."""
        packets = [self.desired.message_for(node)]  # raises before anything is sent or recorded
        old = self.desired.nodes.get(name) if name is not None else None
        if old is not None:
            packets.append(commands.n_free(old.node_id))
        self._osc().send(commands.at(at, *packets))
        if name is not None:
            self.desired.keep(node)
            self._started(node, defaults, by, at)
        return {"synthdef": node.synthdef, "node": name, "node_id": node.node_id,
                "params": dict(node.params)}

    def _start(self, node: NodeState) -> None:
        """``/s_new`` and wait for its ``/n_go``; a SynthDef the server lost is sent again."""
        osc = self._osc()
        packet = self.desired.message_for(node)  # raises before anything is sent or recorded
        for attempt in (1, 2):
            try:
                osc.exchange(packet, commands.Cmd.S_NEW, commands.Reply.N_GO, timeout=2.0,
                             match=lambda m: bool(m.args) and m.args[0] == node.node_id)
                return
            except OscFailure as err:
                lost = "SynthDef not found" in str(err) and node.synthdef in self.desired.synthdefs
                if attempt == 1 and lost:
                    # Freed on the server (/d_free in code): send the library's again.
                    self._event(Kind.RESTORED, f"SynthDef {node.synthdef!r} was gone from "
                                "scsynth; sent it again", synthdef=node.synthdef)
                    osc.send(commands.d_recv(self.desired.synthdefs[node.synthdef]))
                    osc.sync(timeout=5.0)
                    continue
                raise InvalidRequest(f"room {self.name!r}: scsynth did not start "
                                     f"{node.synthdef!r}: {err}") from err

    def set_params(self, node: str, params: dict[str, float],
                   at: float | None = None, by: str = "set") -> dict[str, float]:
        """Set a named node's parameters: on scsynth while it plays, in the desired state always.

        ``at``: scsynth sets them at this Unix time (the desired state at once).
        """
        current = self.desired.nodes.get(node)
        if current is None:
            raise NodeNotFound(f"room {self.name!r} has no node {node!r}; named nodes: "
                               f"{', '.join(self.desired.nodes) or '(none)'}", name=node,
                               known=self.desired.nodes)
        packet = commands.n_set(current.node_id, params)  # raises before anything changes
        state = self.desired.set_params(node, params)
        osc = self._processes.osc
        if osc is not None and self._view.snapshot.state in (State.READY, State.DEGRADED):
            osc.send(packet if at is None else commands.at(at, packet))
        self.publish()
        self._bus.publish(ParamsChanged(self.name, node, dict(params), by, at))
        return dict(state.params)

    def place(self, name: str, target: str | None, add_action: str,
              by: str = "place") -> dict[str, object]:
        """Move a named node where it plays: ``before`` or ``after`` named node ``target``,
        else to the ``head`` or ``tail`` of the default group; kept for restores."""
        self._require_ready()
        current = self.desired.nodes.get(name)
        if current is None:
            raise NodeNotFound(f"room {self.name!r} has no node {name!r}; named nodes: "
                               f"{', '.join(self.desired.nodes) or '(none)'}", name=name,
                               known=self.desired.nodes)
        if target is not None and target not in self.desired.nodes:
            raise NodeNotFound(f"room {self.name!r} has no node {target!r} to place "
                               f"{name!r} {add_action}; named nodes: "
                               f"{', '.join(self.desired.nodes)}", name=target,
                               known=self.desired.nodes)
        if target == name:
            raise InvalidRequest(f"node {name!r} cannot be placed {add_action} itself")
        moved = replace(current, target=target, add_action=add_action)
        packet = self.desired.move_message(moved)  # raises before anything changes
        osc = self._osc()
        osc.send(packet)
        osc.sync(timeout=2.0)
        self.desired.nodes[name] = moved
        self.publish()
        self._bus.publish(NodeMoved(self.name, name, target, add_action, by))
        return {"node": name, "target": target, "add_action": add_action}

    def set_many(self, values: dict[str, dict[str, float]], by: str = "scene") -> list[str]:
        """Set params of several named nodes (a scene); return the names this room lacks."""
        packets = []
        for node, params in values.items():
            current = self.desired.nodes.get(node)
            if current is not None:
                packets.append(commands.n_set(current.node_id, params))  # raises before changes
        lacking = []
        for node, params in values.items():
            if node in self.desired.nodes:
                self.desired.set_params(node, params)
            else:
                lacking.append(node)
        osc = self._processes.osc
        if osc is not None and self._view.snapshot.state in (State.READY, State.DEGRADED):
            for packet in packets:
                osc.send(packet)
        self.publish()
        for node, params in values.items():
            if node in self.desired.nodes:
                self._bus.publish(ParamsChanged(self.name, node, dict(params), by))
        return lacking

    def keep(self, node: str, params: dict[str, float]) -> None:
        """Keep values another already sent to scsynth and announced (a MIDI router's, on
        the bus) for later restores; nothing is sent, nor announced again."""
        if node in self.desired.nodes:
            self.desired.set_params(node, params)
            self.publish()

    def release(self, node: str, at: float | None = None, by: str = "release") -> None:
        """Release a named node (gate 0, then free after its release) and forget it.

        ``at``: scsynth closes the gate at this Unix time; the node is forgotten at once.
        """
        state = self.desired.remove_node(node)
        if state is None:
            raise NodeNotFound(f"room {self.name!r} has no node {node!r}; named nodes: "
                               f"{', '.join(self.desired.nodes) or '(none)'}", name=node,
                               known=self.desired.nodes)
        osc = self._processes.osc
        if osc is not None:
            # gate 0 lets sustained sounds fade; /n_free later would cut the tail. A def
            # without a gate (one code added) would never end: it is freed.
            compiled = self.desired.synthdefs.get(state.synthdef)
            gated = compiled is None or b"\x04gate" in compiled  # its control names' pstrings
            packet = (commands.release(state.node_id) if gated
                      else commands.n_free(state.node_id))
            osc.send(packet if at is None else commands.at(at, packet))
        self.publish()
        self._bus.publish(NodeEnded(self.name, node, state.node_id, "released", by))

    def load_synthdef(self, name: str, compiled: bytes) -> None:
        """Load a SynthDef now and on every later boot."""
        self.desired.add_synthdef(name, compiled)
        osc = self._processes.osc
        if osc is not None:
            osc.send(commands.d_recv(compiled))
            osc.sync(timeout=5.0)
        self._processes.read_descs([name])  # a reloaded library may have changed it

    def lost(self, synths: list[tuple[int, str]], started: dict[int, float] | None = None
             ) -> None:
        """A crash took ``synths`` (what scsynth last said it ran; ``started``: when those
        whose start scorch saw began): say which of them no restore brings back (made by
        code, unnamed plays) and which code made them, in the events and the status."""
        named = {n.node_id for n in self.desired.nodes.values()}
        lost = [(node_id, synthdef) for node_id, synthdef in synths
                if node_id not in named and not synthdef.startswith("scorch_")
                and not FIRST_NODE_ID <= node_id < FIRST_NODE_ID + NODE_ID_SPAN]
        if not lost:
            return
        gone = Counter(synthdef for _, synthdef in lost)
        count = len(lost)
        made = origins(lost, started or {}, self._view.code_runs.runs())
        text = (f"{count} synth{'s' if count > 1 else ''} scorch does not restore went with "
                f"scsynth: {'; '.join(o.text() for o in made)}. Made by code (Synth, "
                "routines, effects) or unnamed plays; named nodes come back, Pdefs play on, "
                "Ndefs are rebuilt. Start them again (history rerun ID runs that code "
                "again), or play them as named nodes (play takes SynthDefs code added) to "
                "have them kept")
        self._view.update(last_crash=f"{self._view.snapshot.last_crash}; {text}")
        self._event(Kind.SYNTHS_LOST, text, count=count, synthdefs=dict(gone),
                    from_code=[o.details() for o in made])

    def silence(self) -> list[str]:
        """Free every node on scsynth and forget the named ones; return their names."""
        self._require_ready()
        cleared = self.desired.clear_nodes()
        self.publish()
        osc = self._osc()
        osc.send(commands.clear_sched())
        for packet in placement.silence():  # the stage stays
            osc.send(packet)
        for node in cleared:
            self._bus.publish(NodeEnded(self.name, node.name, node.node_id, "silenced", "stop"))
        osc.sync(timeout=2.0)
        return [n.name for n in cleared]

    def dropped(self, names: list[str]) -> None:
        """A restore could not send these named nodes (the actor forgot them): announce it."""
        self.publish()
        for name in names:
            self._bus.publish(NodeEnded(self.name, name, 0, "dropped", "scsynth"))

    def ended(self, node_id: int, osc: OscClient, confirmed: bool = False) -> None:
        """A named node ended without scorch asking: forget it, so no restore replays it.

        A scsynth going down (jackd died, a quit) ends every node too; so the end
        counts only if, a moment later, the same scsynth still runs and answers.
        """
        node = self.desired.by_id(node_id)
        if node is None or osc is not self._processes.osc:
            return  # released, replaced or silenced by scorch, or that scsynth is gone
        if not confirmed:
            timer = threading.Timer(NODE_END_GRACE, self._confirm, (node_id, osc))
            timer.daemon = True
            timer.start()
            return
        scsynth = self._processes.scsynth
        try:
            alive = scsynth is not None and scsynth.process.poll_alive() and bool(
                osc.status(timeout=NODE_END_GRACE))
        except OscTimeout:
            alive = False
        if not alive:
            return  # the server is going down: its crash handling restores the node
        self.desired.remove_node(node.name)
        self.publish()
        self._bus.publish(NodeEnded(self.name, node.name, node_id, "ended", "scsynth"))
        self._changed()
        self._event(Kind.NODE_ENDED, f"node {node.name!r} ({node.synthdef}, id {node_id}) "
                    "ended outside scorch (freed by code, s.freeAll, or its own envelope); "
                    "it is no longer restored", node=node.name, node_id=node_id)

    def _confirm(self, node_id: int, osc: OscClient) -> None:
        if self._me is not None:
            with contextlib.suppress(pykka.ActorDeadError):
                self._me.ended(node_id, osc, True)
