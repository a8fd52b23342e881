"""Controllers both ways, through the whole tree: every profile's device on JACK, named as the
real one, moves params on scsynth by its controls' names, and is shown every change made
through MCP (set, a scene recall, undo) in its own feedback language, once each."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import jack_name, node_param
from tests.support.mcp.calls import call
from tests.support.midi.virtual_device import DEVICES, VirtualDevice

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

#: Per profile: its room's node, the control that moves freq, the lit control that toggles
#: vibDepth, and the bytes the maker documents for that light on and off.
CASES = {
    "korg-nanokontrol2": ("nano", "fader1", (0xB0, 0, 127), "solo1", (0xB0, 32, 127),
                          "b0 20 7f", "b0 20 00"),
    "novation-launch-control-xl": ("lcxl", "fader1", (0xB8, 77, 127), "focus1",
                                   (0x98, 41, 127), "98 29 3c", "98 29 0c"),
    "akai-apc-mini-mk2": ("apc", "fader1", (0xB0, 48, 127), "pad1", (0x90, 56, 127),
                          "96 38 15", "96 38 00"),
    "behringer-x-touch-mini": ("xtouch", "fader", (0xBA, 9, 127), "button1", (0x9A, 8, 127),
                               "90 00 01", "90 00 00"),
    "arturia-beatstep": ("beatstep", "knob1", (0xB0, 10, 127), "pad1", (0x90, 44, 100),
                         "f0 00 20 6b 7f 42 02 00 10 70 7f f7",
                         "f0 00 20 6b 7f 42 02 00 10 70 00 f7"),
    "novation-launchpad-mini-mk3": ("launchpad", "top1", (0xB0, 91, 127), "pad1",
                                    (0x90, 81, 127), "90 51 15", "90 51 00"),
}
#: A device of no profile: the generic one names its controls by their numbers.
GENERIC = ("Some Keyboard", "Some Keyboard MIDI 1")
#: The user's own profile, beside the config: an encoder whose ring (or motor) is set by its
#: own CC, the feedback a device most easily sends back (a MIDI thru, a loop in software).
ECHO_BOX = """
name = "Echo Box"
ports = ["Echo Box"]
[source]
title = "A test device: every knob's ring is its own CC"
[[controls]]
name = "knob{n}"
count = 4
kind = "absolute"
number = 1
feedback = { message = "cc", sets_control = true }
"""


def _config() -> str:
    rooms = ["[instances.lobby]", 'synthdefs = ["sine"]']
    routes = ["[midi]", 'backend = "jack"', "rescan_interval = 0.1"]
    for profile, (node, moves, _m, lit, _l, _on, _off) in CASES.items():
        client = DEVICES[profile][0]
        rooms += [f"[instances.lobby.nodes.{node}]", 'synthdef = "sine"',
                  "params = { freq = 220, amp = 0.0, vibDepth = 0.4 }"]
        routes += ["[[midi.controls]]", f'port = "{client}"', f'control = "{moves}"',
                   'instance = "lobby"', f'node = "{node}"', 'param = "freq"',
                   "range = [100, 1000]", 'takeover = "immediate"',
                   "[[midi.controls]]", f'port = "{client}"', f'control = "{lit}"',
                   'instance = "lobby"', f'node = "{node}"', 'param = "vibDepth"',
                   "range = [0, 3]"]
    rooms += ["[instances.lobby.nodes.generic]", 'synthdef = "sine"',
              "params = { freq = 220, amp = 0.0 }",
              "[instances.lobby.nodes.echo]", 'synthdef = "sine"',
              "params = { freq = 220, amp = 0.0 }"]
    routes += ["[[midi.controls]]", 'port = "Some Keyboard"', 'control = "cc74"',
               'instance = "lobby"', 'node = "generic"', 'param = "freq"',
               "range = [100, 1000]", 'takeover = "immediate"',
               "[[midi.controls]]", 'port = "Echo Box"', 'control = "knob1"',
               'instance = "lobby"', 'node = "echo"', 'param = "freq"',
               "range = [100, 1000]", 'takeover = "immediate"']
    return "\n".join(rooms + routes) + "\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orch(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Orchestra]:
    folder = tmp_path_factory.mktemp("controllers")
    (folder / "profiles").mkdir()
    (folder / "profiles" / "echo-box.toml").write_text(ECHO_BOX)
    # A long period: the virtual devices' process callbacks are Python, and a client late
    # for its cycle loses that cycle's MIDI (here, now and then, at 64 frames under load).
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack_name("controllers")}"\nperiod = 1024\n'
            f'[docs]\nbuild = "on-demand"\n' + _config())
    orchestra = Orchestra(parse_config(text, folder / "config.toml"), library)
    try:
        failed = {name: error for name, error in orchestra.start().items() if error}
        assert not failed, failed
        assert orchestra.midi.error is None
        yield orchestra
    finally:
        orchestra.stop()


@pytest.fixture(scope="module")
def devices(orch: Orchestra) -> Iterator[dict[str, VirtualDevice]]:
    server = orch.config.audio.jack_server
    made: dict[str, VirtualDevice] = {}
    try:
        for profile in CASES:
            made[profile] = VirtualDevice(*DEVICES[profile], server)
        made["generic"] = VirtualDevice(*GENERIC, server)
        _wait(lambda: _all_open(orch, made), "every device open")
        time.sleep(1.0)  # each device's first drawing, whole
        for device in made.values():
            device.clear()
        yield made
    finally:
        for device in made.values():
            device.close()


@pytest.fixture
async def client(orch: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orch))) as session:
        yield session


def _all_open(orch: Orchestra, devices: dict[str, VirtualDevice]) -> bool:
    ports = orch.midi.ports()
    stats = orch.midi.stats()["feedback"]["devices"]
    return all(d.input in ports["inputs"] for d in devices.values()) and \
        len(stats) == len(CASES)


def _wait(check, what: str, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"waited for {what}"
        time.sleep(0.05)


def until(device: VirtualDevice, messages: list[tuple[int, ...]], done, tries: int = 5,
          gap: float = 0.0) -> None:
    """Send ``messages`` until ``done()``: on a loaded machine a JACK client late for its
    cycle loses that cycle's MIDI (a press is sent again only when it did not count).

    ``gap``: seconds between two messages (a sweep's values in one batch would be thinned
    to the last, which a knob waiting to pick its param up never crosses)."""
    for _ in range(tries):
        for message in messages:
            device.send(*message)
            time.sleep(gap)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.02)
    raise AssertionError(f"{device.client}: {messages} did nothing")


def param(orch: Orchestra, node: str, name: str) -> float:
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    return node_param(osc, orch.rooms.nodes("lobby")[node].node_id, name)


def shown(device: VirtualDevice, *wanted: str) -> list[str]:
    """What the device got of the lights ``wanted`` are (their bytes, hex)."""
    heads = {w[:5] if not w.startswith("f0") else w[:-6] for w in wanted}
    return [m.hex(" ") for m in device.messages()
            if any(m.hex(" ").startswith(h) for h in heads)]


def once(device: VirtualDevice, expected: str, *lights: str) -> None:
    """The device got ``expected`` for its light, exactly once and nothing else for it."""
    device.wait_for(lambda got: expected in [m.hex(" ") for m in got])
    time.sleep(0.3)  # a second copy, a loop, would come within this
    assert shown(device, expected, *lights) == [expected]


def test_every_connected_device_is_recognised_and_named(
        orch: Orchestra, devices: dict[str, VirtualDevice]) -> None:
    named = orch.midi.ports()["devices"]
    for profile, device in devices.items():
        if profile == "generic":
            assert device.input not in named
            continue
        assert named[device.input] == named[device.output]
        assert named[device.input] == orch.midi.profiles(profile)["name"]


def test_each_control_moves_its_param_by_its_name(
        orch: Orchestra, devices: dict[str, VirtualDevice]) -> None:
    for profile, (node, _moves, move, _lit, press, on, _off) in CASES.items():
        device = devices[profile]
        device.clear()
        release = (press[0] & 0x0F | 0x80, press[1], 0) if press[0] & 0xF0 == 0x90 else \
            (press[0], press[1], 0)
        until(device, [move], lambda n=node: param(orch, n, "freq") == pytest.approx(
            1000.0, abs=0.01))
        until(device, [press, release],
              lambda n=node: param(orch, n, "vibDepth") == pytest.approx(3.0))
        once(device, on, on)  # the press lit the button, once
    until(devices["generic"], [(0xB0, 74, 0)],
          lambda: param(orch, "generic", "freq") == pytest.approx(100.0))
    assert devices["generic"].messages() == []  # no feedback to a device of no profile


async def test_mcp_set_a_scene_recall_and_undo_each_show_once_on_every_device(
        orch: Orchestra, devices: dict[str, VirtualDevice], client: Client) -> None:
    for node, *_ in CASES.values():
        await call(client, "set", instance="lobby", node=node, params={"vibDepth": 3.0})
    time.sleep(0.3)
    for profile, (node, _m, _mv, _l, _p, on, off) in CASES.items():
        devices[profile].clear()
        await call(client, "set", instance="lobby", node=node, params={"vibDepth": 0.0})
        once(devices[profile], off, on)
    await call(client, "scene", action="save", name="dark", instance="lobby")
    for profile in CASES:
        devices[profile].clear()
    for node, *_ in CASES.values():
        await call(client, "set", instance="lobby", node=node, params={"vibDepth": 3.0})
    for profile, (_n, _m, _mv, _l, _p, on, off) in CASES.items():
        once(devices[profile], on, off)
        devices[profile].clear()
    await call(client, "scene", action="recall", name="dark", instance="lobby")
    for profile, (node, _m, _mv, _l, _p, on, off) in CASES.items():
        once(devices[profile], off, on)
        assert param(orch, node, "vibDepth") == 0.0
        devices[profile].clear()
    await call(client, "undo", action="undo", instance="lobby")
    for profile, (node, _m, _mv, _l, _p, on, off) in CASES.items():
        once(devices[profile], on, off)
        assert param(orch, node, "vibDepth") == pytest.approx(3.0)


def test_a_device_plugged_in_again_is_set_up_and_shown_everything_again(
        orch: Orchestra, devices: dict[str, VirtualDevice]) -> None:
    profile = "novation-launchpad-mini-mk3"
    node, *_rest, on, _off = CASES[profile]
    lit = param(orch, node, "vibDepth") >= 1.5
    devices[profile].close()
    _wait(lambda: len(orch.midi.stats()["feedback"]["devices"]) == len(CASES) - 1,
          "the launchpad gone")
    devices[profile] = again = VirtualDevice(*DEVICES[profile], orch.config.audio.jack_server)
    init = "f0 00 20 29 02 0d 0e 01 f7"
    again.wait_for(lambda got: init in [m.hex(" ") for m in got])
    expected = on if lit else "90 51 00"
    again.wait_for(lambda got: expected in [m.hex(" ") for m in got])
    got = [m.hex(" ") for m in again.messages()]
    assert got[0] == init  # programmer mode first, then the lights
    assert len(got) == len(set(got))  # each light once


def test_takeover_blinks_until_the_knob_picks_the_param_up(
        orch: Orchestra, devices: dict[str, VirtualDevice]) -> None:
    lcxl = devices["novation-launch-control-xl"]
    xtouch = devices["behringer-x-touch-mini"]
    orch.midi.map({"port": "Launch Control XL", "control": "knob1", "instance": "lobby",
                   "node": "lcxl", "param": "pan", "range": [-1, 1], "takeover": "pickup",
                   "id": "lcxl-pan"})
    orch.midi.map({"port": "X-TOUCH MINI", "control": "knob1", "instance": "lobby",
                   "node": "xtouch", "param": "pan", "range": [-1, 1], "takeover": "pickup",
                   "id": "xtouch-pan"})
    try:
        for device, status, cc, node in ((lcxl, 0xB8, 13, "lcxl"), (xtouch, 0xBA, 1, "xtouch")):
            # The knob sweeps: it picks pan up on its way, and ends at the bottom.
            sweep = [(status, cc, value) for value in (*range(0, 128, 8), 0)]
            until(device, sweep, lambda n=node: param(orch, n, "pan") == pytest.approx(-1.0),
                  gap=0.01)
        time.sleep(0.2)
        lcxl.clear()
        xtouch.clear()
        orch.rooms.set("lobby", "lcxl", {"pan": 1.0})
        orch.rooms.set("lobby", "xtouch", {"pan": 1.0})
        # Amber flashing under the knob; the ring's top LED blinking (13 + 13).
        once(lcxl, "f0 00 20 29 02 11 78 08 00 3b f7", "f0 00 20 29 02 11 78 08 00 3c f7")
        once(xtouch, "b0 09 1a", "b0 09 0d")
        lcxl.clear()
        xtouch.clear()
        for value in (40, 80, 127):  # the knob goes up to the param and takes it
            lcxl.send(0xB8, 13, value)
            xtouch.send(0xBA, 1, value)
            time.sleep(0.05)
        lcxl.wait_for(lambda got: bytes.fromhex("f0 00 20 29 02 11 78 08 00 3c f7") in got)
        xtouch.wait_for(lambda got: bytes.fromhex("b0 09 0d") in got)
        assert param(orch, "lcxl", "pan") == pytest.approx(1.0)
    finally:
        orch.midi.unmap("lcxl-pan")
        orch.midi.unmap("xtouch-pan")


async def test_a_device_that_echoes_its_feedback_causes_no_loop_and_no_drift(
        orch: Orchestra, devices: dict[str, VirtualDevice], client: Client) -> None:
    box = VirtualDevice("Echo Box", "Echo Box MIDI 1", orch.config.audio.jack_server,
                        echo=True)
    nano = devices["korg-nanokontrol2"]
    try:
        _wait(lambda: box.input in orch.midi.stats()["feedback"]["devices"], "the echo box")
        time.sleep(0.5)
        nano.echo(True)
        box.clear()
        nano.clear()
        dropped = orch.midi.stats()["feedback"]["echoes_dropped"]
        await call(client, "set", instance="lobby", node="echo", params={"freq": 333.3})
        await call(client, "set", instance="lobby", node="nano", params={"vibDepth": 0.0})
        await call(client, "set", instance="lobby", node="nano", params={"vibDepth": 3.0})
        time.sleep(1.0)  # a loop would go on sending, and drift on moving
        assert [m.hex(" ") for m in box.messages()] == ["b0 01 21"]  # 233.3 / 900 of 127
        # The light's "on" came back as a press of its button: taken, it would toggle off.
        assert [m.hex(" ") for m in nano.messages()] == ["b0 20 00", "b0 20 7f"]
        assert param(orch, "echo", "freq") == pytest.approx(333.3, abs=1e-3)
        assert param(orch, "nano", "vibDepth") == 3.0
        assert orch.midi.stats()["feedback"]["echoes_dropped"] == dropped + 3
        # The knob itself still moves it.
        until(box, [(0xB0, 1, 127)], lambda: param(orch, "echo", "freq") == pytest.approx(1000))
    finally:
        nano.echo(False)
        box.close()


def test_profiles_action_lists_every_device_and_one_in_full(orch: Orchestra) -> None:
    listed = {p["id"]: p for p in orch.midi.profiles()}
    assert set(CASES) | {"generic"} <= set(listed)
    assert "fader1-8 (absolute, cc 0-7 ch 1)" in listed["korg-nanokontrol2"]["controls"]
    nano = orch.midi.profiles("nanoKONTROL2")
    assert nano["controls"]["solo1"].startswith("button cc 32 ch 1")


def test_a_bank_of_faders_maps_to_a_list_of_params_in_one_call(
        orch: Orchestra, devices: dict[str, VirtualDevice]) -> None:
    mapped = orch.midi.map({"port": "nanoKONTROL2", "controls": ["knob1", "knob2", "knob3"],
                            "instance": "lobby", "nodes": ["apc", "xtouch", "beatstep"],
                            "param": "pan", "range": [-1, 1], "takeover": "immediate",
                            "id": "bank"})
    try:
        assert [m["id"] for m in mapped["mapped"]] == ["bank-1", "bank-2", "bank-3"]
        until(devices["korg-nanokontrol2"], [(0xB0, cc, 127) for cc in (16, 17, 18)],
              lambda: all(param(orch, n, "pan") == pytest.approx(1.0)
                          for n in ("apc", "xtouch", "beatstep")))
    finally:
        for index in (1, 2, 3):
            orch.midi.unmap(f"bank-{index}")


def test_a_wrong_control_name_is_refused_with_the_devices_controls(orch: Orchestra) -> None:
    from scorch.errors import InvalidRequest

    with pytest.raises(InvalidRequest) as err:
        orch.midi.map({"port": "nanoKONTROL2", "control": "fader9", "instance": "lobby",
                       "node": "nano", "param": "pan"})
    assert "fader1-8" in str(err.value) and err.value.argument == "spec"



def test_a_page_button_switches_the_controller_and_its_leds_are_redrawn(
        orch: Orchestra, devices: dict[str, VirtualDevice]) -> None:
    apc = devices["akai-apc-mini-mk2"]
    added = [
        orch.midi.map({"port": "APC mini mk2", "control": "scene1", "page": "one",
                       "id": "page-one"})["id"],
        orch.midi.map({"port": "APC mini mk2", "control": "scene2", "page": "two",
                       "id": "page-two"})["id"],
        orch.midi.map({"port": "APC mini mk2", "control": "fader2", "instance": "lobby",
                       "node": "apc", "param": "pan", "range": [-1, 1], "page": "one",
                       "takeover": "immediate", "id": "one-pan"})["id"],
        orch.midi.map({"port": "APC mini mk2", "control": "fader2", "instance": "lobby",
                       "node": "nano", "param": "pan", "range": [-1, 1], "page": "two",
                       "takeover": "immediate", "id": "two-pan"})["id"],
    ]
    try:
        apc.wait_for(lambda got: bytes.fromhex("90 70 01") in got)  # page one shows
        until(apc, [(0xB0, 49, 0)], lambda: param(orch, "apc", "pan") == pytest.approx(-1.0))
        apc.clear()
        until(apc, [(0x90, 113, 127), (0x80, 113, 0)],
              lambda: orch.midi.ports()["pages"].get(apc.input) == "two")
        apc.wait_for(lambda got: {bytes.fromhex("90 71 01"), bytes.fromhex("90 70 00")}
                     <= set(got))
        until(apc, [(0xB0, 49, 127)], lambda: param(orch, "nano", "pan") == pytest.approx(1.0))
        assert param(orch, "apc", "pan") == pytest.approx(-1.0)  # page one's route rests
    finally:
        for route_id in added:
            orch.midi.unmap(route_id)
