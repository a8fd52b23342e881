"""The feedback thread's rules, without JACK: what a device is sent, how often, and once."""

from __future__ import annotations

import threading

from actors.router.feedback import FeedbackSender
from actors.router.surfaces import Devices
from midi.engine import Engine, TargetSnapshot
from midi.routes import RouteEntry, resolve_all
from midi.schema import ControlRoute, PageRoute
from scorch.config.profiles import Profiles, load_profiles, parse_profile

NANO_IN = "nanoKONTROL2:(capture_0) nanoKONTROL2 _ CTR"
NANO_OUT = "nanoKONTROL2:(playback_0) nanoKONTROL2 _ CTR"
XT_IN = "X-TOUCH MINI:X-TOUCH MINI MIDI 1 28:0"


class FakeOutput:
    """An output port that keeps what it was sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[str] = []

    def send(self, data: list[int]) -> None:
        self.sent.append(bytes(data).hex(" "))


class Rig:
    """An engine, the devices and a feedback sender driven by hand (no thread)."""

    def __init__(self, *routes: ControlRoute | PageRoute, inputs=(NANO_IN,)) -> None:
        self.lock = threading.Lock()
        self.engine = Engine()
        self.engine.snapshot = TargetSnapshot({"a": ("127.0.0.1", 1)}, {("a", "pad"): 1000})
        self.sender = FeedbackSender(self.lock, self.engine)
        self.now = 100.0
        self.sender.clock = lambda: self.now
        self.devices = Devices(load_profiles(), feedback=True)
        self.outputs = {NANO_OUT: FakeOutput(NANO_OUT), XT_IN: FakeOutput(XT_IN)}
        self.entries = [RouteEntry(f"r{i}", r, "config") for i, r in enumerate(routes)]
        self.inputs = list(inputs)
        self.refresh()

    def refresh(self) -> None:
        resolved, _ = resolve_all(self.entries, lambda s: ["a"])
        self.devices.surface(self.inputs, self.outputs)  # type: ignore[arg-type]
        tables = self.devices.tables(self.inputs, self.entries, resolved)
        self.engine.tables = tables
        self.sender.install(*self.devices.bindings(tables, self.entries))

    def round(self) -> float | None:
        return self.sender._round()

    def set(self, param: str, value: float) -> None:
        self.engine.observe("a", "pad", param, value)
        self.engine.touched[("a", "pad", param)] = None


def route(**fields) -> ControlRoute:
    return ControlRoute(**{"port": "nano", "instance": "a", "node": "pad", "param": "gain",
                           **fields})


def test_a_new_device_is_drawn_whole_then_only_what_changes() -> None:
    rig = Rig(route(control="solo1"))
    rig.set("gain", 1.0)
    rig.round()
    sent = rig.outputs[NANO_OUT].sent
    assert len(sent) == 25  # the burst: 500 a second for 50 ms
    rig.now += 1.0
    rig.round()
    assert len(sent) == 30 and len(set(sent)) == 30  # the rest, each light once
    assert "b0 20 7f" in sent and "b0 21 00" in sent  # solo1 on, solo2 (unmapped) off
    rig.set("gain", 1.0)  # the same again: nothing to show
    rig.round()
    assert len(sent) == 30
    rig.set("gain", 0.0)
    rig.round()
    assert sent[-1] == "b0 20 00"


TINY = """
name = "Tiny"
ports = ["tiny"]
rate = 50
[source]
title = "A test device: eight rings set by their own CC, 50 messages a second at most"
[[controls]]
name = "knob{n}"
count = 8
kind = "absolute"
number = 1
feedback = { message = "cc", sets_control = true }
"""


def test_a_morph_floods_no_device_and_its_newest_value_is_sent_last() -> None:
    rig = Rig(*(route(port="tiny", control=f"knob{i}", param=f"p{i}", takeover="immediate")
                for i in range(1, 9)), inputs=("tiny:tiny MIDI 1",))
    rig.devices.profiles = Profiles([parse_profile(TINY, "tiny.toml")])
    rig.outputs["tiny:tiny MIDI 1"] = FakeOutput("tiny:tiny MIDI 1")
    rig.refresh()
    rig.round()
    rig.now += 10.0
    rig.round()
    sent = rig.outputs["tiny:tiny MIDI 1"].sent
    sent.clear()
    for step in range(100):  # a second of a morph at 100 steps a second, 8 knobs each
        for i in range(1, 9):
            rig.set(f"p{i}", step / 99)
        rig.round()
        rig.now += 0.01
    began = rig.now - 1.0
    while (wait := rig.round()) is not None:  # as the thread does: wait for the next token
        rig.now += wait
    assert len(sent) <= 50 * (rig.now - began) + 3  # the profile's rate, and one burst
    assert sorted(sent[-8:]) == [f"b0 {i:02x} 7f" for i in range(1, 9)]  # the newest values
    assert rig.sender.counts["replaced"] > 100  # older values waiting, never sent


def test_a_knob_that_waits_to_pick_up_blinks_its_ring_until_it_does() -> None:
    rig = Rig(route(port="X-TOUCH", control="knob1", takeover="pickup"), inputs=(XT_IN,))
    rig.set("gain", 0.0)
    rig.round()
    rig.now += 10.0
    rig.round()
    sent = rig.outputs[XT_IN].sent
    rig.engine.handle(XT_IN, [0xBA, 1, 0])  # the knob at the bottom, with its param
    rig.set("gain", 1.0)  # elsewhere, the param goes to the top
    rig.round()
    assert sent[-1] == "b0 09 1a"  # the ring's top LED, blinking
    for value in (60, 127):
        rig.engine.handle(XT_IN, [0xBA, 1, value])
        rig.round()
    assert sent[-1] == "b0 09 0d"  # picked up: steady


def test_what_is_sent_is_expected_back_as_an_echo_not_as_a_press() -> None:
    rig = Rig(route(control="solo1"))
    rig.engine.clock = lambda: rig.now
    rig.round()
    rig.now += 10.0
    rig.round()
    rig.set("gain", 1.0)
    rig.round()
    assert rig.engine.handle(NANO_IN, [0xB0, 32, 127]) == []  # the echo of "on"
    assert rig.engine.values[("a", "pad", "gain")] == 1.0
    assert [a.value for a in rig.engine.handle(NANO_IN, [0xB0, 32, 127])] == [0.0]


def test_switching_pages_redraws_the_page_lights_and_the_mapped_controls() -> None:
    rig = Rig(PageRoute(port="nano", control="play", page="one"),
              PageRoute(port="nano", control="stop", page="two"),
              route(control="solo1", page="one"), route(control="solo2", page="two"))
    rig.set("gain", 1.0)
    rig.round()
    rig.now += 10.0
    rig.round()
    sent = rig.outputs[NANO_OUT].sent
    assert {"b0 29 7f", "b0 2a 00", "b0 20 7f", "b0 21 00"} <= set(sent)
    sent.clear()
    rig.devices.switch(NANO_IN, "two")
    rig.refresh()
    rig.round()
    assert set(sent) == {"b0 29 00", "b0 2a 7f", "b0 20 00", "b0 21 7f"}
