"""Scenes: the morph's arithmetic, the tool against real scsynth, and a real MIDI program change.

Values are read back from scsynth itself (``/s_get``); the warps were checked
against sclang's ControlSpec in tests/integration/studio/test_warps.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import rtmidi

from midi.actions import SceneCue
from midi.engine import Engine
from midi.routes import RouteEntry, compile_table
from midi.schema import SceneRoute
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.app.scenes import FILENAME, _load
from scorch.config.installation import Config
from scorch.errors import InvalidRequest, SceneNotFound
from scorch.primitives.synthdefs.warps import Warp
from scorch.primitives.system.jackd import client_environment
from scorch.state.scenes import missing, morph
from tests.conftest import MakeConfig, node_param

Start = Callable[[Config], Orchestra]
FREQ = Warp("exp", 40, 4000)  # the sine's freq spec
AMP = Warp("amp", 0, 1)


def spec(room: str, node: str, param: str) -> tuple[Warp, float] | None:
    return {"freq": (FREQ, 0.0), "amp": (AMP, 0.0), "loop": (Warp("lin", 0, 1), 1.0)}.get(param)


# --- the arithmetic -------------------------------------------------------------------------


def test_a_morph_moves_each_param_along_its_warp_and_switches_stepped_ones_halfway() -> None:
    origin = {"a": {"pad": {"freq": 110.0, "amp": 0.1, "loop": 0.0, "pan": -1.0}}}
    target = {"a": {"pad": {"freq": 440.0, "amp": 0.4, "loop": 1.0, "pan": 1.0}}}
    half = morph(origin, target, 0.5, spec)["a"]["pad"]
    assert half["freq"] == pytest.approx(220.0)
    assert half["amp"] == pytest.approx(((0.1**0.5 + 0.4**0.5) / 2) ** 2)
    assert half["loop"] == 1.0 and half["pan"] == pytest.approx(0.0)  # unknown spec: straight
    assert morph(origin, target, 0.49, spec)["a"]["pad"]["loop"] == 0.0
    assert morph(origin, target, 0.0, spec)["a"]["pad"] == origin["a"]["pad"]
    assert morph(origin, target, 1.0, spec)["a"]["pad"] == target["a"]["pad"]


def test_nodes_or_params_only_one_side_holds_do_not_move() -> None:
    origin = {"a": {"pad": {"freq": 110.0}}}
    target = {"a": {"pad": {"freq": 440.0, "amp": 0.4}, "gone": {"freq": 1.0}},
              "b": {"x": {"freq": 2.0}}}
    assert morph(origin, target, 0.5, spec) == {"a": {"pad": {"freq": pytest.approx(220.0)}}}
    assert missing(origin, target) == ["a.gone", "b.x"]


def test_program_changes_and_ccs_become_scene_cues_on_their_channel_only() -> None:
    routes = [SceneRoute(scene="calm", program=3, channel=2, instance="lobby"),
              SceneRoute(scene="storm", program=4, seconds=2.5),
              SceneRoute(scene="storm", cc=1)]
    engine = Engine()
    engine.tables = {"pads": compile_table(
        "pads", [RouteEntry(f"r{i}", r, "config") for i, r in enumerate(routes)],
        {"lobby": ("lobby",), "*": ("lobby",)})}
    assert engine.handle("pads", [0xC1, 3]) == [SceneCue("recall", "calm", "lobby", 0.0)]
    assert engine.handle("pads", [0xC0, 3]) == []  # channel 1: not the route's
    assert engine.handle("pads", [0xC5, 4]) == [SceneCue("recall", "storm", "*", 2.5)]
    assert engine.handle("pads", [0xB0, 1, 127]) == [SceneCue("morph", "storm", "*", 1.0)]
    assert engine.handle("other", [0xC1, 3]) == []


def test_a_scenes_file_that_is_not_one_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    path.write_text('{"version": 1, "scenes": {"a": {"values": 3}}}')
    assert _load(path) == {}
    assert not path.exists() and path.with_suffix(".corrupt").exists()


def test_a_scenes_file_nested_a_hundred_thousand_deep_is_set_aside_not_a_recursion(
        tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    path.write_text('{"version": 1, "scenes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert _load(path) == {}
    assert path.with_suffix(".corrupt").exists()


# --- real rooms -------------------------------------------------------------------------------

ROOMS = """
[instances.lobby]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 110, amp = 0.1 }
[instances.attic]
[instances.attic.nodes.hum]
synthdef = "sine"
params = { freq = 110, amp = 0.1 }
"""


def values(orch: Orchestra, room: str, node: str) -> tuple[float, float]:
    osc = orch.doors[room].scsynth
    assert osc is not None
    node_id = orch.rooms.nodes(room)[node].node_id
    return node_param(osc, node_id, "freq"), node_param(osc, node_id, "amp")


def wait_values(orch: Orchestra, room: str, node: str, expected: tuple[float, float],
                poke: Callable[[], object] = lambda: None, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        poke()
        got = values(orch, room, node)
        if got == pytest.approx(expected, rel=1e-6):
            return
        assert time.monotonic() < deadline, f"{room}.{node}: {got}, expected {expected}"
        time.sleep(0.05)


@pytest.mark.integration
def test_recall_and_a_morph_halfway_land_on_the_scene_and_on_the_warped_midpoint(
        make_config: MakeConfig, start_orchestra: Start) -> None:
    orch = start_orchestra(make_config(ROOMS, tag="scene"))
    api = LocalService(orch)
    api.call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 440, "amp": 0.4}})
    saved = api.call("scene", {"action": "save", "name": "bright", "instance": "lobby"})
    assert saved.scenes[0].values["lobby"]["drone"]["freq"] == 440  # type: ignore[attr-defined]
    assert "gate" not in saved.scenes[0].values["lobby"]["drone"]  # type: ignore[attr-defined]
    stored = json.loads((orch.config.state_path() / FILENAME).read_text())
    assert stored["scenes"]["bright"]["values"]["lobby"]["drone"]["amp"] == 0.4

    api.call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 110, "amp": 0.1}})
    half = api.call("scene", {"action": "morph", "name": "bright", "position": 0.5})
    assert half.values["lobby"]["drone"]["freq"] == pytest.approx(220)  # type: ignore[attr-defined]
    freq, amp = values(orch, "lobby", "drone")
    assert freq == pytest.approx(220, rel=1e-6)  # exponential: the geometric mean
    assert amp == pytest.approx(0.225, rel=1e-6)  # amp warp: halfway in sqrt(amp)
    assert orch.rooms.nodes("lobby")["drone"].params["freq"] == pytest.approx(220)  # kept
    # The morph keeps its origin: back to 0 is where it started, not where it is now.
    api.call("scene", {"action": "morph", "name": "bright", "position": 0.0})
    assert values(orch, "lobby", "drone") == pytest.approx((110, 0.1), rel=1e-6)
    api.call("scene", {"action": "morph", "name": "bright", "position": 1.0})
    assert values(orch, "lobby", "drone") == pytest.approx((440, 0.4), rel=1e-6)

    api.call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 110, "amp": 0.1}})
    api.call("scene", {"action": "recall", "name": "bright"})
    assert values(orch, "lobby", "drone") == pytest.approx((440, 0.4), rel=1e-6)
    assert values(orch, "attic", "hum") == pytest.approx((110, 0.1), rel=1e-6)  # not in it

    # A timed morph passes through values between the two, and ends on the scene.
    api.call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 110, "amp": 0.1}})
    api.call("scene", {"action": "morph", "name": "bright", "seconds": 0.6})
    seen = set()
    deadline = time.monotonic() + 5
    while values(orch, "lobby", "drone") != pytest.approx((440, 0.4), rel=1e-6):
        seen.add(round(values(orch, "lobby", "drone")[0]))
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert any(110 < f < 440 for f in seen), seen

    with pytest.raises(SceneNotFound, match="no scene 'dark'; scenes: bright"):
        api.call("scene", {"action": "recall", "name": "dark"})
    with pytest.raises(InvalidRequest, match="exactly one of `position`"):
        api.call("scene", {"action": "morph", "name": "bright"})
    with pytest.raises(InvalidRequest, match="position"):
        api.call("scene", {"action": "morph", "name": "bright", "position": 1.5})
    api.call("release", {"instance": "lobby", "node": "drone"})
    gone = api.call("scene", {"action": "recall", "name": "bright"})
    assert gone.missing == ["lobby.drone"]  # type: ignore[attr-defined]
    api.call("scene", {"action": "delete", "name": "bright"})
    assert api.call("scene", {"action": "list"}).scenes == []  # type: ignore[attr-defined]


SCENE_MIDI = """
[midi]
backend = "jack"
rescan_interval = 0.1
[[midi.scenes]]
port = "scorchtest-scenes"
program = 5
scene = "bright"
[[midi.scenes]]
port = "scorchtest-scenes"
cc = 1
scene = "bright"
instance = "lobby"
"""


@pytest.fixture
def scene_orch(make_config: MakeConfig, start_orchestra: Start) -> Iterator[Orchestra]:
    orch = start_orchestra(make_config(ROOMS, extra=SCENE_MIDI, tag="scenemidi"))
    assert orch.midi.error is None
    yield orch


@pytest.mark.integration
def test_a_real_midi_program_change_recalls_a_scene_and_a_cc_morphs_toward_it(
        scene_orch: Orchestra) -> None:
    orch = scene_orch
    api = LocalService(orch)
    for room, node in (("lobby", "drone"), ("attic", "hum")):
        api.call("set", {"instance": room, "node": node, "params": {"freq": 440, "amp": 0.4}})
    api.call("scene", {"action": "save", "name": "bright"})
    for room, node in (("lobby", "drone"), ("attic", "hum")):
        api.call("set", {"instance": room, "node": node, "params": {"freq": 110, "amp": 0.1}})
    routes = {r["id"]: r["type"] for r in orch.midi.routes()}
    assert routes == {"config-scene-0": "scene", "config-scene-1": "scene"}

    with client_environment(orch.config.audio.jack_server):
        device = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="scorchtest-hw")
        device.open_virtual_port("scorchtest-scenes")
    try:
        # Sent again until the router's rescan has connected the new port.
        wait_values(orch, "lobby", "drone", (440, 0.4),
                    poke=lambda: device.send_message([0xC0, 5]))
        wait_values(orch, "attic", "hum", (440, 0.4))
        for room, node in (("lobby", "drone"), ("attic", "hum")):
            api.call("set", {"instance": room, "node": node, "params": {"freq": 110,
                                                                        "amp": 0.1}})
        device.send_message([0xB0, 1, 0])  # the morph starts here: its origin
        device.send_message([0xB0, 1, 127])
        wait_values(orch, "lobby", "drone", (440, 0.4))
        device.send_message([0xB0, 1, 64])
        expected = (FREQ.between(110, 440, 64 / 127), AMP.between(0.1, 0.4, 64 / 127))
        wait_values(orch, "lobby", "drone", expected)
        assert values(orch, "attic", "hum") == pytest.approx((110, 0.1), rel=1e-6)  # lobby only
    finally:
        device.close_port()
        device.delete()
