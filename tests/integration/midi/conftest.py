"""The MIDI router's rig, shared by its test modules: a JACK server, two scsynths, JACK MIDI
virtual ports standing in for hardware, and routers started on them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.router.proxy import MidiRouterProxy
from tests.conftest import jack_name
from tests.support.harness import (
    PARAM_DEF,
    Scsynth,
    compile_test_synthdefs,
    jack_for_clients,
)
from tests.support.midi.devices import PAD_ID, FakeTargets, Hardware
from tests.support.midi.router_rig import ASK, start_router


@pytest.fixture(scope="module")
def jack() -> Iterator[str]:
    # realtime at 256 frames, as the stage rig's: at 64 frames without realtime scheduling a
    # JACK client late for a cycle loses its MIDI (a CC of five sent, a replugged fader's
    # first move, both lost once in a quiet clean-clone run)
    with jack_for_clients(jack_name("midi"), realtime=True, period=256) as name:
        yield name


@pytest.fixture(scope="module")
def defs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_test_synthdefs(tmp_path_factory.mktemp("defs"))


@pytest.fixture(scope="module")
def servers(jack: str, defs: Path) -> Iterator[dict[str, Scsynth]]:
    started: dict[str, Scsynth] = {}
    try:
        for name in ("lobby", "gallery"):
            started[name] = Scsynth(jack, defs, f"scorchtest-{name}")
        yield started
    finally:
        for server in started.values():
            server.close()


@pytest.fixture
def targets(servers: dict[str, Scsynth]) -> FakeTargets:
    for server in servers.values():
        server.call("/n_free", PAD_ID)
        server.call("/g_freeAll", 1)
        server.call("/s_new", PARAM_DEF, PAD_ID, 1, 1, "cutoff", 1000.0, "gain", 0.0)
        server.sync()
    return FakeTargets(servers)


@pytest.fixture
def hardware(jack: str) -> Iterator[Hardware]:
    device = Hardware("nanoKONTROL2 MIDI 1")
    yield device
    device.unplug()


@pytest.fixture
def router_factory(tmp_path: Path) -> Iterator:
    started: list[MidiRouterProxy] = []

    def make(targets: FakeTargets, state: Path | None = None, **config: object):
        proxy = start_router(targets, state or tmp_path / "state", **config)
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.actor_ref.stop(timeout=ASK)  # stopping a stopped actor is a no-op
