"""The MIDI router on the change bus: what its knobs sent goes out, what others changed comes in.

Values MIDI sent to named nodes are announced in batches by the sender thread (never
by the input thread), so the rooms keep them and every reader sees them. Changes
made to named nodes (a ``set``, a scene, a node started or gone, another host's
knob) come back through the router's actor, as :meth:`MidiRouter.observe
<actors.router.actor.MidiRouter.observe>` and ``forget`` take them: its takeover and
whatever hooks that path follow the room. Its own knobs' values come back too, and
stop there: its engine has newer ones than a batch 20 ms old (a pickup knob would
lose the parameter to a stale value). The subscription settles (``Bus.settle``): a
call that changed a node returns once the router has the new value.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pykka

from scorch.state import (
    Bus,
    NodeEnded,
    NodeStarted,
    ParamsChanged,
    Published,
    RouteChanged,
    Subscription,
)
from scorch.state.changes import Change

log = logging.getLogger(__name__)

#: Seconds the bus's thread waits for the router's actor to take a change.
TAKE_WAIT = 5.0
#: ``by`` of the values this host's router sent (its own are not taken back).
MIDI = "midi"


def takes(change: Change) -> bool:
    """What the router takes from the bus: what happens to named nodes."""
    kind = type(change)
    return kind is ParamsChanged or kind is NodeStarted or kind is NodeEnded


class BusLink:
    """The router's side of the bus (None: a router on its own, as benchmarks run it)."""

    def __init__(self, bus: Bus | None) -> None:
        self.bus = bus
        self._heard: Subscription | None = None

    def report(self, room: str, node: str, params: dict[str, float]) -> None:
        """Announce values MIDI sent to a named node (the sender thread)."""
        if self.bus is not None:
            self.bus.publish(ParamsChanged(room, node, params, MIDI))

    def route(self, route_id: str, route: Mapping[str, Any] | None) -> None:
        """Announce a run-time route mapped (its dump) or unmapped (None)."""
        if self.bus is not None:
            self.bus.publish(RouteChanged(route_id, route, "map" if route else "unmap"))

    def follow(self, router: Any) -> None:
        """Hand the router's actor (its proxy, ``router``) what others change from now on."""
        if self.bus is not None:
            self._heard = self.bus.subscribe(lambda published: take(router, published),
                                             "midi-router", takes, settle=True)

    def stats(self) -> dict[str, Any] | None:
        """How far the router got with what others changed (None: no bus)."""
        return self._heard.stats() if self._heard is not None else None

    def close(self) -> None:
        """Stop following (not joined: its thread may be asking the stopping actor)."""
        if self._heard is not None:
            self._heard.close()


def take(router: Any, published: Published) -> None:
    """One change, through the router's actor; waited for, so the bus can say it is taken."""
    change = published.change
    try:
        if type(change) is NodeEnded:
            router.forget(change.room, change.node).get(timeout=TAKE_WAIT)
        elif type(change) is ParamsChanged and change.by == MIDI:
            return  # its own: the engine knows newer values
        elif type(change) is ParamsChanged or type(change) is NodeStarted:
            router.observe(change.room, change.node, dict(change.params),
                           type(change) is NodeStarted).get(timeout=TAKE_WAIT)
    except (pykka.ActorDeadError, pykka.Timeout) as err:
        log.debug("the MIDI router did not take change %d: %r", published.seq, err)
