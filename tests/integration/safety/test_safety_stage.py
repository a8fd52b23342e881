"""The safety stage against hostile code, read where the sound leaves: scsynth's JACK ports.

A JACK client of the test (tests/support/rooms/jack_capture.py) records each room's
``out_1`` and ``out_2`` while code sent through ``execute`` does its worst; whatever it
does, what leaves the room is never above the ceiling (plus 0.1 dB for a true peak,
measured 4x oversampled as ITU-R BS.1770 does), never NaN, and holds no DC past 20 ms.
JACK runs at 1024 frames and the capture in a process of its own, so that its Python
callback keeps up on a loaded machine (the JACK server's xruns in a window are said).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import numpy as np
import pytest

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.primitives.scsynth.placement import READERS_GROUP, ROOM_GROUP, STAGE_NODE
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.synthdefs.stage import LATENCY
from scorch.state.events import Kind
from tests.conftest import jack_name
from tests.support.rooms import true_peak
from tests.support.rooms.jack_capture import Capture

pytestmark = pytest.mark.integration

TAG = "stage"
CEILING_DB = -1.0
#: The ceiling plus the true peak's allowance, as an amplitude.
LIMIT = 10 ** ((CEILING_DB + 0.1) / 20)
STARTUP = """
fork {
    SynthDef(\\loud, { Out.ar(0, WhiteNoise.ar(100 ! 2)) }).add;
    s.sync;
    s.sendMsg("/s_new", "loud", -1, 1, 0);
};
"""
BODY = """
state_dir = "{folder}/state"
[audio]
driver = "dummy"
jack_server = "{jack}"
period = 1024
[docs]
build = "on-demand"
[midi]
enabled = false
[watchdog]
interval = 0.25
backoff_min = 0.05
backoff_max = 0.5
[instances.loud]
[instances.bare]
safety = {{ enabled = false }}
[instances.quiet]
safety = {{ max_lufs = -23 }}
[instances.hostile]
startup = "{folder}/startup.scd"
"""
ROOMS = ("loud", "bare", "quiet", "hostile")


@pytest.fixture(scope="module")
def rooms(tmp_path_factory: pytest.TempPathFactory,
          library: SynthDefLibrary) -> Iterator[tuple[Orchestra, Capture]]:
    """Four rooms on one JACK server, and a capture of each one's two outputs."""
    from scorch.config.installation import parse_config

    folder = tmp_path_factory.mktemp("stage")
    (folder / "startup.scd").write_text(STARTUP)
    text = BODY.format(folder=folder, jack=jack_name(TAG))
    orch = Orchestra(parse_config(text, folder / "config.toml"), library)
    try:
        assert orch.start() == {name: None for name in ROOMS}
        capture = Capture(jack_name(TAG), [f"scorch-{room}:out_{n}" for room in ROOMS
                                           for n in (1, 2)])
        try:
            capture.wait(0.5)
            yield orch, capture
        finally:
            capture.close()
    finally:
        orch.stop()


def channels(capture: Capture, room: str, mark: int, until: int | None = None) -> np.ndarray:
    """What ``room`` sent out since ``mark`` (2 x samples); JACK's xruns meanwhile said."""
    if capture.xruns_since(mark):
        print(f"{capture.xruns_since(mark)} xruns of the JACK server in this window")
    row = ROOMS.index(room) * 2
    return capture.since(mark, until)[row:row + 2]


def under_the_ceiling(sound: np.ndarray) -> None:
    """No NaN, no sample above the ceiling, no true peak above it plus 0.1 dB."""
    assert not np.isnan(sound).any()
    peak = float(np.max(np.abs(sound)))
    assert peak <= 10 ** (CEILING_DB / 20) * 1.0001, f"{20 * np.log10(peak):.2f} dBFS"
    for name, measure in (("BS.1770", true_peak.bs1770), ("ideal", true_peak.ideal)):
        found = measure(sound)
        assert found <= LIMIT, f"true peak ({name}) {20 * np.log10(found):.2f} dBTP"


def run(orch: Orchestra, room: str, code: str) -> None:
    result = orch.rooms.execute_one(room, code, 10.0)
    assert result.ok, result.error


def stage_runs(orch: Orchestra, room: str) -> bool:
    """The stage is in the room's tree, right after the room group, the readers after it."""
    reply = orch.doors[room].scsynth.request("/g_queryTree", 0, 0, reply="/g_queryTree.reply",
                                             timeout=2.0)
    top = [reply.args[i] for i in range(3, len(reply.args), 1)]
    order = [a for a in top if a in (ROOM_GROUP, STAGE_NODE, READERS_GROUP)]
    return order == [ROOM_GROUP, STAGE_NODE, READERS_GROUP] and reply.args[2] == 3


LOUD = "SynthDef(\\loud, { Out.ar(0, WhiteNoise.ar(100 ! 2)) }).add; 1"
HOSTILE = {
    "noise at +40 dB at the root's tail":
        "x = { WhiteNoise.ar(100 ! 2) }.play(RootNode(s), 0, 0.02, \\addToTail)",
    "a DC of 10": "x = { DC.ar(10 ! 2) }.play",
    "a NaN": "x = { (DC.ar(0) / DC.ar(0)) ! 2 }.play",
    "an infinity": "x = { (DC.ar(1) / DC.ar(0)) ! 2 }.play",
    "a NaN now and then in music":
        "x = { SinOsc.ar(440, 0, 0.5) + Select.ar(Impulse.ar(3) > 0, [DC.ar(0), "
        "DC.ar(0) / DC.ar(0)]) ! 2 }.play",
    "ReplaceOut on bus 0 at the root's tail":
        "x = { ReplaceOut.ar(0, WhiteNoise.ar(100 ! 2)) }.play(RootNode(s), 0, 0.02, "
        "\\addToTail)",
    "a feedback loop": "x = { InFeedback.ar(0, 2) * 4 + Impulse.ar(2) }.play",
    "a node moved after the stage":
        f"x = {{ WhiteNoise.ar(100 ! 2) }}.play; s.sendMsg(\"/n_after\", x.nodeID, {STAGE_NODE})",
    "a node moved after the stage by node object":
        f"x = {{ WhiteNoise.ar(100 ! 2) }}.play; x.moveAfter(Synth.basicNew(\\s, s, {STAGE_NODE}))",
    "a synth added after the stage":
        f"x = Synth(\\loud, target: Synth.basicNew(\\s, s, {STAGE_NODE}), addAction: \\addAfter)",
    "a synth replacing the stage":
        f"x = Synth(\\loud, target: Synth.basicNew(\\s, s, {STAGE_NODE}), addAction: \\addReplace)",
    "the stage freed": f"s.sendMsg(\"/n_free\", {STAGE_NODE}); x = Synth(\\loud)",
    "the stage paused": f"s.sendMsg(\"/n_run\", {STAGE_NODE}, 0); x = Synth(\\loud)",
    "the stage's ceiling set":
        f"s.sendMsg(\"/n_set\", {STAGE_NODE}, \"ceiling\", 40); x = Synth(\\loud)",
    "the stage's group freed":
        "s.sendMsg(\"/g_freeAll\", 0); s.sendMsg(\"/g_deepFree\", 0); s.initTree; "
        "x = Synth(\\loud)",
    "a node path to the root's tail": "s.sendMsg(\"/s_new\", \"loud\", -1, 3, \"t\", 0)",
    "a raw packet": "s.sendRaw([\"/s_new\", \"loud\", -1, 1, 0].asRawOSC)",
    "a completion message": "Buffer.alloc(s, 8, 1, { |b| [\"/s_new\", \"loud\", -1, 1, 0] })",
    "CmdPeriod then noise": "CmdPeriod.run; fork { 0.05.wait; x = Synth(\\loud, "
                            "target: RootNode(s), addAction: \\addToTail) }",
}


@pytest.mark.parametrize("code", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_code_never_gets_past_the_ceiling(rooms: tuple[Orchestra, Capture],
                                                  code: str) -> None:
    orch, capture = rooms
    run(orch, "loud", LOUD)
    time.sleep(0.2)  # the SynthDef reached scsynth
    mark = capture.mark()
    try:
        run(orch, "loud", code + "; 1")
        capture.wait(1.5)
        under_the_ceiling(channels(capture, "loud", mark))
        assert stage_runs(orch, "loud")
    finally:
        orch.rooms.stop_sound("loud")


def test_dc_is_gone_20_ms_after_it_came(rooms: tuple[Orchestra, Capture]) -> None:
    orch, capture = rooms
    capture.wait(0.5)  # the limiter's release after what came before
    mark = capture.mark()
    try:
        run(orch, "loud", "x = { DC.ar(10 ! 2) }.play(fadeTime: 0); 1")
        capture.wait(1.0)
        sound = channels(capture, "loud", mark)[0].astype(np.float64)
        onset = int(np.argmax(np.abs(sound) > 0.1))
        assert sound[onset] > 0, "the DC came through"
        step = int(0.02 * capture.rate)
        windows = [np.mean(sound[start:start + step])
                   for start in range(onset + step, len(sound) - step, step)]
        assert max(abs(w) for w in windows) < 0.01, [f"{w:.2g}" for w in windows[:5]]
        assert max(abs(w) for w in windows[2:]) < 1e-4  # and nothing of it from 60 ms on
    finally:
        orch.rooms.stop_sound("loud")


def test_a_clean_sine_passes_bit_for_bit_a_look_ahead_late(
        rooms: tuple[Orchestra, Capture]) -> None:
    """The same sine in a room with the stage and in one without: the same samples, the
    stage's LATENCY later (the rooms' blocks may start it a block apart)."""
    orch, capture = rooms
    code = "x = { SinOsc.ar(997, 0, 0.5) ! 2 }.play; 1"
    capture.wait(2.0)  # a DC before has left the DC gate, which closes over a second
    mark = capture.mark()
    try:
        run(orch, "loud", code)
        run(orch, "bare", code)
        capture.wait(1.5)
        staged = channels(capture, "loud", mark)[0].astype(np.float64)
        plain = channels(capture, "bare", mark)[0].astype(np.float64)
        begins = int(np.argmax(np.abs(plain) > 0.01)), int(np.argmax(np.abs(staged) > 0.01))
        start = max(begins) + 1024
        length = int(0.5 * capture.rate)
        reference = plain[start:start + length]
        # The onsets give the lag to a period; the samples give it exactly.
        rough = begins[1] - begins[0]
        best = min(range(rough - 2048, rough + 2048), key=lambda lag: float(np.max(np.abs(
            staged[start + lag:start + lag + length] - reference))))
        residual = np.max(np.abs(staged[start + best:start + best + length] - reference))
        assert 20 * np.log10(residual + 1e-30) < -90, f"{20 * np.log10(residual):.1f} dB"
        assert best % 64 == LATENCY % 64, best
    finally:
        orch.rooms.stop_sound("loud")
        orch.rooms.stop_sound("bare")


def test_a_loud_room_is_held_at_its_max_lufs(rooms: tuple[Orchestra, Capture]) -> None:
    import pyloudnorm

    orch, capture = rooms
    code = "x = { PinkNoise.ar(0.8 ! 2) }.play; 1"
    try:
        run(orch, "quiet", code)
        run(orch, "bare", code)
        run(orch, "loud", "x = { PinkNoise.ar(0.1 ! 2) }.play; 1")  # under its ceiling
        capture.wait(4.0)  # the 3 s window fills
        mark = capture.mark()
        capture.wait(6.0)
        meter = pyloudnorm.Meter(capture.rate)
        held = meter.integrated_loudness(channels(capture, "quiet", mark).T.astype(np.float64))
        free = meter.integrated_loudness(channels(capture, "bare", mark).T.astype(np.float64))
        assert free > held + 5, free  # the room plays far louder than its limit
        assert held == pytest.approx(-23.0, abs=0.5), held
        # Every stage measures the short-term loudness it sends out (the watch, /metrics
        # and the report read it): pyloudnorm on the same outputs agrees.
        soft = meter.integrated_loudness(channels(capture, "loud", mark).T.astype(np.float64))
        for room, heard in (("loud", soft), ("quiet", held)):
            reading = orch.views[room].stage_readings.last
            assert reading is not None
            assert reading.loudness_lufs == pytest.approx(heard, abs=0.5), (room, heard)
    finally:
        for room in ("quiet", "bare", "loud"):
            orch.rooms.stop_sound(room)


def rms_db(sound: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(sound.astype(np.float64) ** 2)) + 1e-30))


def test_the_master_gain_fades_and_undo_brings_it_back(
        rooms: tuple[Orchestra, Capture]) -> None:
    orch, capture = rooms
    service = LocalService(orch)
    rate = capture.rate
    try:
        run(orch, "loud", "x = { SinOsc.ar(500, 0, 0.25) ! 2 }.play; 1")
        capture.wait(0.5)
        mark = capture.mark()
        out = service.call("gain", {"instance": "loud", "db": -12.0, "fade": 2.0})
        assert out.rooms["loud"].gain_db == -12.0  # type: ignore[attr-defined]
        capture.wait(3.5)
        sound = channels(capture, "loud", mark)[0]
        step = int(0.05 * rate)
        levels = np.array([rms_db(sound[i:i + step]) for i in range(0, len(sound) - step, step)])
        before = 20 * np.log10(0.25 / np.sqrt(2))
        assert levels[0] == pytest.approx(before, abs=0.3)
        begins = int(np.argmax(levels < before - 0.3))
        ends = int(np.argmax(levels < before - 11.7))
        assert 0 < begins < ends, levels
        assert (ends - begins) * 0.05 == pytest.approx(2.0, abs=0.25)  # the fade's 2 s
        assert levels[(begins + ends) // 2] == pytest.approx(before - 6, abs=1.0)  # dB-linear
        assert levels[-1] == pytest.approx(before - 12, abs=0.3)
        assert orch.rooms.status("loud").stage.gain_db == -12.0  # type: ignore[union-attr]
        mark = capture.mark()
        service.call("undo", {"action": "undo", "instance": "loud"})
        capture.wait(1.5)
        back = channels(capture, "loud", mark)[0]
        assert rms_db(back[-int(0.2 * rate):]) == pytest.approx(before, abs=0.3)
        assert orch.rooms.status("loud").stage.gain_db == 0.0  # type: ignore[union-attr]
    finally:
        orch.rooms.stop_sound("loud")
        orch.rooms.set_gain("loud", 0.0, 0.0)


def test_the_stage_is_back_first_after_scsynth_is_killed(
        rooms: tuple[Orchestra, Capture]) -> None:
    """The room's startup code plays noise at +40 dB at the root's tail at once; the stage
    is there before it, from the first sample the new scsynth sends."""
    orch, capture = rooms
    view = orch.views["hostile"]
    pid = orch.rooms.status("hostile").pids["scsynth"]
    assert pid is not None
    since = view.events.mark()
    mark = capture.mark()
    os.kill(pid, signal.SIGKILL)
    event = view.events.wait_for((Kind.RESTORED, Kind.FAILED), since, 30.0)
    assert event is not None and event.kind == Kind.RESTORED
    capture.wait(2.0)
    under_the_ceiling(channels(capture, "hostile", mark))
    reading = view.stage_readings.last
    assert reading is not None and reading.peak_in > 50  # the startup's noise plays, held
    assert stage_runs(orch, "hostile")


def test_a_node_put_after_the_stage_from_outside_sclang_is_moved_back(
        rooms: tuple[Orchestra, Capture]) -> None:
    """Another program's OSC: nothing rewrites it on its way, the keeper moves it back."""
    from scorch.primitives.osc import encode_message
    from scorch.primitives.scsynth.client import OscClient

    orch, _ = rooms
    run(orch, "loud", LOUD)
    time.sleep(0.2)
    port = orch.rooms.status("loud").port
    assert port is not None
    outsider = OscClient(port)
    try:
        outsider.send(encode_message("/s_new", "loud", 1_000_000, 3, STAGE_NODE))
        deadline = time.monotonic() + 1.0
        while True:
            tree = outsider.request("/g_queryTree", ROOM_GROUP, 0,
                                    reply="/g_queryTree.reply", timeout=1.0)
            if 1_000_000 in tree.args:
                break
            assert time.monotonic() < deadline, tree.args
        assert stage_runs(orch, "loud")
    finally:
        outsider.close()
        orch.rooms.stop_sound("loud")
