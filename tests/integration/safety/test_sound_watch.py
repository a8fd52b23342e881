"""The watch on the sound, with real scsynth rooms on a real JACK server.

Its readings are what each room's safety stage measures inside scsynth. A room
expected to sound is silenced by its own code: SOUND_SILENT comes within silence_s
plus 2 s, its action (lower_gain) is made through the gain operation and journaled,
and SOUND_OK comes once the code sounds again. A room whose code is far too loud
is held at the ceiling: SOUND_LIMITING within limit_s plus 2 s; a NaN is caught; a
DC offset from code is SOUND_DC, and recalls the scene the config names for it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from scorch.api.firing import Firing
from scorch.api.local import LocalService
from scorch.api.ops import load_all
from scorch.app.orchestra import Orchestra
from scorch.app.soundwatch.detector import DC_S
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import jack_name

pytestmark = pytest.mark.integration

TAG = "watch"
SILENCE_S, LIMIT_S = 2.0, 1.0
SINE = "~sine = { SinOsc.ar(440, 0, 0.2) ! 2 }.play; 1"
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
[instances.lobby.watch]
expect_sound = true
silence_s = {silence}
on_silent = "lower_gain"
[instances.hall.watch]
limit_s = {limit}
on_dc = "recall:calm"
[instances.bar.watch]
expect_sound = true
silence_s = {silence}
on_silent = "restart"
"""



@pytest.fixture(scope="module")
def orch(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Orchestra]:
    """Three watched rooms on one JACK server, the watch's actions armed as `scorch run` does."""
    from scorch.config.installation import parse_config

    folder = tmp_path_factory.mktemp("watch")
    text = BODY.format(folder=folder, jack=jack_name(TAG), silence=SILENCE_S, limit=LIMIT_S)
    orch = Orchestra(parse_config(text, folder / "config.toml"), library)
    try:
        assert orch.start() == {"lobby": None, "hall": None, "bar": None}
        orch.sound.arm(Firing(orch, load_all))
        yield orch
    finally:
        orch.stop()


def run(orch: Orchestra, room: str, code: str) -> None:
    result = orch.rooms.execute_one(room, code, 10.0)
    assert result.ok, result.error


def sound_of(orch: Orchestra, room: str) -> str | None:
    return orch.rooms.status(room, live=False).sound


def test_a_room_expected_to_sound_made_silent_is_said_acted_on_and_ok_again(
        orch: Orchestra) -> None:
    events = orch.views["lobby"].events
    run(orch, "lobby", SINE)
    deadline = time.monotonic() + 5.0
    while sound_of(orch, "lobby") != "ok" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sound_of(orch, "lobby") == "ok"
    boot = events.last(Kind.SOUND_SILENT)  # silent from its boot until now: lowered once?
    assert boot is None or events.wait_for(Kind.SOUND_ACTION, boot.seq, 10.0) is not None
    mark, gain = events.mark(), orch.views["lobby"].stage.gain_db
    run(orch, "lobby", "~sine.free; 1")
    silenced = time.monotonic()
    silent = events.wait_for(Kind.SOUND_SILENT, mark, SILENCE_S + 2.0)
    assert silent is not None, [e.kind for e in events.since(mark)]
    assert time.monotonic() - silenced <= SILENCE_S + 2.0
    assert silent.details["peak_out_dbfs"] < -60.0
    assert silent.details["for_s"] >= SILENCE_S
    assert silent.details["action"] == "lower_gain"
    assert sound_of(orch, "lobby") == "silent"
    assert {row.name: row.sound for row in orch.rooms.statuses()}["lobby"] == "silent"

    acted = events.wait_for(Kind.SOUND_ACTION, mark, 10.0)
    assert acted is not None and acted.details["ok"], acted
    assert orch.views["lobby"].stage.gain_db == gain - 6.0
    journal = orch.undo.entries("lobby")
    assert journal and journal[-1].call == "watch", journal[-1:]

    back = events.mark()
    run(orch, "lobby", SINE)
    ok = events.wait_for(Kind.SOUND_OK, back, 5.0)
    assert ok is not None and ok.details["fault"] == "silent"
    assert ok.details["lasted_s"] >= SILENCE_S
    assert sound_of(orch, "lobby") == "ok"
    assert events.since(back) and all(e.kind != Kind.SOUND_SILENT for e in events.since(back))


def test_a_room_held_at_its_ceiling_is_said_limiting_and_a_nan_is_caught(
        orch: Orchestra) -> None:
    events = orch.views["hall"].events
    mark = events.mark()
    run(orch, "hall", "~noise = { WhiteNoise.ar(100 ! 2) }.play; 1")  # +40 dBFS
    began = time.monotonic()
    limiting = events.wait_for(Kind.SOUND_LIMITING, mark, LIMIT_S + 2.0)
    assert limiting is not None, [e.kind for e in events.since(mark)]
    assert time.monotonic() - began <= LIMIT_S + 2.0
    assert limiting.details["peak_in_dbfs"] > 30.0
    assert limiting.details["reduction_db"] > 20.0
    assert limiting.details["peak_out_dbfs"] <= -1.0
    assert limiting.details["action"] == "alert"
    assert sound_of(orch, "hall") == "limiting"
    assert events.since(mark)[-1].kind == Kind.SOUND_LIMITING  # no action event: alert only

    calm = events.mark()
    run(orch, "hall", "~noise.free; ~nan = { (DC.ar(0) / DC.ar(0)) ! 2 }.play; 1")
    nan = events.wait_for(Kind.SOUND_NAN, calm, 3.0)
    assert nan is not None and nan.details["non_finite"]
    ok = events.wait_for(Kind.SOUND_OK, calm, 4.0)
    assert ok is not None and ok.details["fault"] == "limiting"
    assert sound_of(orch, "hall") == "nan"
    run(orch, "hall", "~nan.free; 1")
    cleared = events.wait_for(Kind.SOUND_OK, ok.seq, 4.0)
    assert cleared is not None and cleared.details["fault"] == "nan"
    assert sound_of(orch, "hall") == "ok"


#: A feedback loop through the room's own outputs: the tone's level next block is twice
#: what InFeedback heard of the outputs (the stage's): from -46 dBFS it reaches the
#: ceiling within half a second, quicker than the stage's RMS follows, and stays there.
HOWL = ("~howl = { var heard = Amplitude.kr(InFeedback.ar(0), 2, 2);"
        " SinOsc.ar(1000, 0, max(heard * 2, 0.005)) ! 2 }.play; 1")


def test_a_feedback_loop_through_infeedback_is_heard_as_a_howl(orch: Orchestra) -> None:
    events = orch.views["hall"].events
    mark = events.mark()
    seen: list[object] = []
    stop = orch.views["hall"].stage_readings.listen(lambda r: seen.append(
        (round(r.peak_in, 4), round(r.rms_in, 4), round(r.reduction_db, 1))))
    run(orch, "hall", HOWL)
    howl = events.wait_for(Kind.SOUND_HOWL, mark, 10.0)
    stop()
    assert howl is not None, ([e.kind for e in events.since(mark)], seen)
    assert howl.details["risen_db"] >= 6.0 and howl.details["action"] == "alert"
    assert howl.details["peak_out_dbfs"] <= -1.0
    assert sound_of(orch, "hall") == "howl"
    run(orch, "hall", "~howl.free; 1")  # its limiting ends too: its own SOUND_OK
    deadline = time.monotonic() + 4.0
    while sound_of(orch, "hall") != "ok" and time.monotonic() < deadline:
        time.sleep(0.1)
    ended = {e.details["fault"] for e in events.since(howl.seq) if e.kind == Kind.SOUND_OK}
    assert "howl" in ended and sound_of(orch, "hall") == "ok"


def test_a_silent_room_whose_action_is_restart_is_restarted_once(orch: Orchestra) -> None:
    events = orch.views["bar"].events  # bar has no startup: silent from its boot on
    silent = events.wait_for(Kind.SOUND_SILENT, 0, 30.0)
    assert silent is not None and silent.details["action"] == "restart"
    acted = events.wait_for(Kind.SOUND_ACTION, silent.seq, 60.0)
    assert acted is not None and acted.details["ok"], acted
    between = [e.kind for e in events.since(silent.seq) if e.seq < acted.seq]
    assert Kind.STOPPED in between and Kind.READY in between, between
    time.sleep(SILENCE_S + 2.0)  # still silent after it: the fault lasts, no second restart
    kinds = [e.kind for e in events.since(0)]
    assert (kinds.count(Kind.SOUND_SILENT), kinds.count(Kind.SOUND_ACTION)) == (1, 1), kinds
    assert sound_of(orch, "bar") == "silent"
    mark = events.mark()
    run(orch, "bar", SINE)
    ok = events.wait_for(Kind.SOUND_OK, mark, 5.0)
    assert ok is not None and ok.details["fault"] == "silent"


def test_a_dc_offset_from_code_is_said_and_recalls_the_scene_named_for_it(
        orch: Orchestra) -> None:
    api = LocalService(orch)
    api.call("play", {"instance": "hall", "synthdef": "sine", "node": "tone",
                      "params": {"freq": 220, "amp": 0.01}})
    api.call("scene", {"action": "save", "name": "calm", "instance": "hall"})
    api.call("set", {"instance": "hall", "node": "tone", "params": {"freq": 880}})
    events = orch.views["hall"].events
    mark = events.mark()
    run(orch, "hall", "~dc = { DC.ar(0.5) ! 2 }.play; 1")  # -6 dBFS of DC
    began = time.monotonic()
    dc = events.wait_for(Kind.SOUND_DC, mark, DC_S + 2.0)
    assert dc is not None, [e.kind for e in events.since(mark)]
    assert time.monotonic() - began <= DC_S + 2.0
    assert dc.details["dc_dbfs"] == pytest.approx(-6.0, abs=0.5), dc.details
    now = orch.views["hall"].stage_readings.last
    assert now is not None and now.peak_out < 0.1, now  # the stage blocks it (past its onset)
    assert dc.details["action"] == "recall:calm" and "DC offset" in dc.message
    assert sound_of(orch, "hall") == "dc"
    acted = events.wait_for(Kind.SOUND_ACTION, mark, 10.0)
    assert acted is not None and acted.details["ok"], acted
    assert "scene" in acted.details["call"] and "calm" in acted.details["call"]
    assert orch.rooms.nodes("hall")["tone"].params["freq"] == pytest.approx(220)
    assert orch.undo.entries("hall")[-1].call == "watch"
    run(orch, "hall", "~dc.free; 1")
    ok = events.wait_for(Kind.SOUND_OK, dc.seq, 4.0)
    assert ok is not None and ok.details["fault"] == "dc"
    assert sound_of(orch, "hall") == "ok"
    api.call("release", {"instance": "hall", "node": "tone"})

