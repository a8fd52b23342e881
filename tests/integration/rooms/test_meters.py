"""Level meters from scsynth itself: placed while someone watches, gone after, never content."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.system.process import pid_alive
from scorch.state.events import Kind
from scorch.state.meters import FLOOR_DB
from scorch.state.playing import METER_NODE_ID
from tests.conftest import jack_name, node_exists

pytestmark = pytest.mark.integration

CONFIG = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{jack}"
[docs]
build = "on-demand"
[midi]
enabled = false
[watchdog]
backoff_min = 0.05
backoff_max = 0.2
[web]
meter_hz = 20
[instances.room]
synthdefs = ["sine"]
outputs = 2
"""


@pytest.fixture(scope="module")
def orch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Orchestra]:
    state = tmp_path_factory.mktemp("meters") / "state"
    orch = Orchestra(parse_config(CONFIG.format(state=state, jack=jack_name("meters")),
                                  state.parent / "config.toml"))
    pids: list[int] = []
    try:
        assert orch.start() == {"room": None}
        yield orch
    finally:
        pids = [pid for pid in orch.rooms.pids().values() if pid]
        orch.stop()
        assert not [pid for pid in pids if pid_alive(pid)]


def wait_readings(orch: Orchestra, more_than: int, timeout: float = 3.0) -> int:
    levels = orch.meters.levels("room")
    deadline = time.monotonic() + timeout
    while levels.readings <= more_than:
        assert time.monotonic() < deadline, f"no meter reading after {more_than} within {timeout} s"
        time.sleep(0.02)
    return levels.readings


def loudest(orch: Orchestra) -> float:
    last = orch.meters.levels("room").last(time.time())
    assert last is not None
    return max(last.peak)


def test_the_meter_runs_only_while_watched_and_hears_a_node(orch: Orchestra) -> None:
    osc = orch.views["room"].osc
    assert osc is not None
    assert not node_exists(osc, METER_NODE_ID)
    with orch.meters.watch():
        first = wait_readings(orch, 0)
        started = time.monotonic()
        time.sleep(1.0)
        rate = (orch.meters.levels("room").readings - first) / (time.monotonic() - started)
        assert 14 <= rate <= 26, f"{rate:.1f} reports a second, not 20"
        assert loudest(orch) == FLOOR_DB  # nothing plays yet
        assert node_exists(osc, METER_NODE_ID)
        orch.rooms.play("room", "sine", {"freq": 440.0, "amp": 0.5}, node="tone")
        deadline = time.monotonic() + 2.0
        while loudest(orch) < -12.0:
            assert time.monotonic() < deadline, f"the meter reads {loudest(orch)} dB"
            time.sleep(0.05)
        history = orch.meters.levels("room").history(time.time())
        assert history and history[-1][1] > -12.0
    assert not node_exists(osc, METER_NODE_ID), "the meter outlived its last watcher"
    orch.rooms.release("room", "tone")


def test_the_meter_is_not_the_rooms_content(orch: Orchestra) -> None:
    service = LocalService(orch)
    with orch.meters.watch():
        wait_readings(orch, orch.meters.levels("room").readings)
        playing = service.call("playing", {"detail": True}).model_dump()["rooms"][0]
        assert METER_NODE_ID not in [t["id"] for t in playing["tree"]]
        assert not any("meter" in owner for owner in playing["synths"])
        assert "scorch_meter" not in str(orch.rooms.nodes("room"))
        # A stop frees every synth, the meter too: it comes back by itself.
        service.call("stop", {"instance": "room"})
        osc = orch.views["room"].osc
        assert osc is not None
        deadline = time.monotonic() + 4.0
        while not node_exists(osc, METER_NODE_ID):
            assert time.monotonic() < deadline, "the meter did not come back after a stop"
            time.sleep(0.1)


def test_the_meter_comes_back_after_scsynth_dies(orch: Orchestra) -> None:
    view = orch.views["room"]
    with orch.meters.watch():
        wait_readings(orch, orch.meters.levels("room").readings)
        mark = view.events.mark()
        pid = view.snapshot.scsynth_pid
        assert pid
        os.kill(pid, signal.SIGKILL)
        assert view.events.wait_for(Kind.READY, mark, 20.0) is not None
        count = orch.meters.levels("room").readings
        wait_readings(orch, count, timeout=4.0)
        osc = view.osc
        assert osc is not None and node_exists(osc, METER_NODE_ID)
        assert METER_NODE_ID not in [n.node_id for n in view.nodes.values()]
