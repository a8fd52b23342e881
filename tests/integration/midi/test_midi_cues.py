"""Cue list buttons over a real JACK MIDI port: a note GOes the cue list on scsynth, a
second press within double_go counts once, undo takes the cue back, a CC puts a cue on
standby; and a cue button mapped at run time through the midi tool."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from scorch.api.firing import Firing
from scorch.api.local import LocalService
from scorch.api.ops import load_all
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from tests.conftest import MakeConfig, node_param
from tests.support.midi.devices import Hardware

pytestmark = pytest.mark.integration

ROOMS = """
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.01 }
"""

CUES = """
[midi]
backend = "jack"
rescan_interval = 0.1
[[midi.cues]]
id = "go-pad"
port = "scorchtest-cuepad"
note = 36
[[midi.cues]]
port = "scorchtest-cuepad"
cc = 20
action = "standby"
cue = "2"
[cueing]
double_go = 1.0
[[cues]]
number = 1
do = [{ op = "set", instance = "lobby", node = "drone", params = { freq = 770 } }]
[[cues]]
number = 2
name = "down"
do = [{ op = "set", instance = "lobby", node = "drone", params = { freq = 440 } }]
[[cues]]
number = 3
do = [{ op = "set", instance = "lobby", node = "drone", params = { freq = 330 } }]
"""


@pytest.fixture
def orch(make_config: MakeConfig,
         start_orchestra: Callable[[Config], Orchestra]) -> Iterator[Orchestra]:
    orchestra = start_orchestra(make_config(ROOMS, extra=CUES, tag="midicue"))
    assert orchestra.midi.error is None
    orchestra.hours.start(Firing(orchestra, load_all))  # as scorch run does
    yield orchestra


@pytest.fixture
def pad(orch: Orchestra) -> Iterator[Hardware]:
    device = Hardware("scorchtest-cuepad", "scorchtest-hw", orch.config.audio.jack_server)
    yield device
    device.unplug()


def freq(orch: Orchestra) -> float:
    node_id = orch.rooms.nodes("lobby")["drone"].node_id
    return node_param(orch.doors["lobby"].scsynth, node_id, "freq")


def near(value: float, expected: float) -> bool:
    """Within float32's rounding (not pytest.approx: it reads numpy from sys.modules, which
    a thread of the orchestra may be importing right then)."""
    return abs(value - expected) <= 1e-4 * abs(expected)


def standby(orch: Orchestra) -> str | None:
    listing = LocalService(orch).call("cue", {"action": "list"})
    return listing.standby  # type: ignore[attr-defined, no-any-return]


def wait(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def connected(orch: Orchestra, pad: Hardware) -> None:
    """Press the standby button until it acts: the port is connected within a scan."""
    deadline = time.monotonic() + 10
    while standby(orch) != "2":
        assert time.monotonic() < deadline, "the standby CC never acted"
        pad.send(0xB0, 20, 127)
        pad.send(0xB0, 20, 0)
        time.sleep(0.1)


def test_a_note_goes_the_cue_list_on_scsynth_twice_counts_once_and_undo_takes_it_back(
        orch: Orchestra, pad: Hardware) -> None:
    assert standby(orch) == "1"
    connected(orch, pad)  # a CC button put cue 2 on standby
    before = freq(orch)
    assert near(before, 220.0)
    pressed = time.monotonic()
    for _ in range(2):  # a double press: well within double_go
        pad.send(0x90, 36, 100)
        pad.send(0x80, 36, 0)
    wait(lambda: near(freq(orch), 440.0))
    # Cue 3 would set 330: after the double_go window the second press fired nothing.
    time.sleep(max(0.0, pressed + 1.2 - time.monotonic()))
    assert near(freq(orch), 440.0)
    assert standby(orch) == "3"
    steps = LocalService(orch).call("undo", {"action": "list"}).text()
    assert "cue 2 'down'" in steps, steps
    LocalService(orch).call("undo", {"action": "undo", "instance": "lobby"})
    wait(lambda: near(freq(orch), before))
    pad.send(0x90, 36, 100)  # a press after the window counts: cue 3
    wait(lambda: near(freq(orch), 330.0))
    assert standby(orch) is None


def test_a_cue_button_mapped_through_the_midi_tool_goes_a_named_cue(
        orch: Orchestra, pad: Hardware) -> None:
    service = LocalService(orch)
    made = service.call("midi", {"action": "map", "spec": {
        "type": "cue", "port": "scorchtest-cuepad", "program": 5, "cue": "1"}})
    assert "cue" in made.text()
    routes = service.call("midi", {"action": "routes"}).text()
    assert "runtime cue" in routes, routes
    connected(orch, pad)
    pad.send(0xC0, 5)
    wait(lambda: near(freq(orch), 770.0))
    assert standby(orch) == "2"  # past cue 1
