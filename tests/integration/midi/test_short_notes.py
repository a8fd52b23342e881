"""Short notes at a long audio period leave no synth behind: a release waits for scsynth.

scsynth applies every command that arrived during one audio period together, at
the start of its next period. A synth whose gate is 0 before it first runs never
starts its envelope and never ends: a silent node left for good. At 4096 frames
(85 ms) a note on and its note off 30 ms later usually arrive in one period, as
they do at any period while scsynth runs late on a loaded machine. The router
sends each release only once scsynth confirmed the start (``/sync`` bundled with
``/s_new``); the check is scsynth's own count of synths.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from actors.router.actor import MidiRouter
from actors.router.proxy import MidiRouterProxy
from midi.schema import MidiConfig
from tests.conftest import jack_name
from tests.support.harness import (
    VOICE_DEF,
    Scsynth,
    compile_test_synthdefs,
    jack_for_clients,
    needs_tools,
    wait_for,
)
from tests.support.midi.devices import FakeTargets, Hardware

pytestmark = [pytest.mark.integration, needs_tools]

PERIOD = 4096
NOTES = 40
ASK = 5.0


@pytest.fixture(scope="module")
def jack() -> Iterator[str]:
    with jack_for_clients(jack_name("period"), period=PERIOD) as name:
        yield name


@pytest.fixture(scope="module")
def room(jack: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scsynth]:
    server = Scsynth(jack, compile_test_synthdefs(tmp_path_factory.mktemp("defs")),
                     "scorchtest-period")
    yield server
    server.close()


def test_forty_short_notes_at_a_long_period_all_end(room: Scsynth, tmp_path: Path) -> None:
    router = cast(MidiRouterProxy, MidiRouter.start(
        MidiConfig.model_validate({"backend": "jack", "virtual_port": "", "keys": [
            {"port": "shortkeys", "instance": "room", "synthdef": VOICE_DEF}]}),
        FakeTargets({"room": room}), tmp_path / "state").proxy())
    keyboard = Hardware("keys", client="shortkeys")
    try:
        wait_for(lambda: keyboard.name in router.ports().get(timeout=ASK)["inputs"])
        # A harmless CC until one arrives: the connection is live, no note is lost to it.
        wait_for(lambda: keyboard.send(0xBF, 119, 0) or  # type: ignore[func-returns-value]
                 router.stats().get(timeout=ASK)["received"] > 0, interval=0.1)
        time.sleep(0.2)  # the other CCs still in flight arrive
        before = room.synths()
        for i in range(NOTES):
            keyboard.send(0x90, 48 + i % 24, 100)
            time.sleep(0.03)
            keyboard.send(0x80, 48 + i % 24, 0)
            time.sleep(0.01)
        wait_for(lambda: router.stats().get(timeout=ASK)["notes_off"] == NOTES)
        stats = router.stats().get(timeout=ASK)
        # Every synth ended by its own envelope (5 ms release): none was left gated shut.
        wait_for(lambda: room.synths() == before, timeout=3.0)
        assert stats["notes_on"] == NOTES
        assert stats["voices"] == 0
        assert stats["releases_held"] >= 1, stats  # the period did put on and off together
        assert stats["releases_unconfirmed"] == 0, stats
    finally:
        keyboard.unplug()
        router.actor_ref.stop(timeout=ASK)
