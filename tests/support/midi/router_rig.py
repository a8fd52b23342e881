"""The MIDI router's rig: start a router on test targets and wait for its ports."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from actors.router.actor import MidiRouter
from actors.router.proxy import MidiRouterProxy
from midi.schema import MidiConfig
from tests.support.harness import (
    Scsynth,
    wait_for,
)
from tests.support.midi.devices import PAD_ID, FakeTargets, Hardware

ASK = 5.0
FAST_RESCAN = 0.05

def start_router(targets: FakeTargets, state: Path, **config: object) -> MidiRouterProxy:
    fields = {"backend": "jack", "rescan_interval": FAST_RESCAN, **config}
    ref = MidiRouter.start(MidiConfig.model_validate(fields), targets, state, bus=targets.bus)
    return cast(MidiRouterProxy, ref.proxy())


def wait_open(router: MidiRouterProxy, name: str) -> None:
    wait_for(lambda: name in router.ports().get(timeout=ASK)["inputs"])


def wait_connected(router: MidiRouterProxy, device: Hardware) -> None:
    """Wait until the router has the port open and a message from it got through.

    JACK makes a new connection active on a later cycle than the one ``open_port``
    returns in, so the first message after opening can miss it. One probe at a time,
    each given 100 ms, so that none is still in flight when this returns.
    """
    wait_open(router, device.name)
    received = router.stats().get(timeout=ASK)["received"]
    for _ in range(50):
        device.send(0xBF, 119, 0)
        try:
            wait_for(
                lambda: router.stats().get(timeout=ASK)["received"] > received, timeout=0.1
            )
            return
        except AssertionError:
            continue
    raise AssertionError(f"nothing from {device.name} reached the router")


def cutoff(server: Scsynth) -> float:
    return server.param(PAD_ID, "cutoff")
