"""Changing one pattern while it plays, against real processes: on the bar, one at a time.

What lands where is read from scsynth itself (``tests/support/rooms/pattern_room.py``).
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scorch.api.ops.music.notes import NotesOutput
from scorch.api.ops.music.playing import PlayingOutput
from scorch.app.orchestra import Orchestra
from scorch.errors import InvalidRequest, PatternFailed, PatternNotFound, ScorchError
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.support.rooms.pattern_room import BAR, BEAT, PatternRoom, running, wait

pytestmark = pytest.mark.integration

#: Two patterns, each in a group of its own; the value is their groups' ids.
PLAY = """
~bassGroup = Group.new; ~keepGroup = Group.new;
Pbindef(\\bass, \\instrument, \\default, \\degree, 0, \\dur, 0.25, \\legato, 0.1,
    \\amp, 0.001, \\group, ~bassGroup).play(quant: 4);
Pdef(\\keep, Pbind(\\instrument, \\default, \\dur, 0.5, \\legato, 0.1, \\amp, 0.001,
    \\group, ~keepGroup)).play(quant: 1);
Ndef(\\hum, { SinOsc.ar(99) * 0.001 });
[~bassGroup.nodeID, ~keepGroup.nodeID]
"""


class Room(PatternRoom):
    """The module's one room, its two patterns' groups and a listener on its scsynth."""

    def __init__(self, orch: Orchestra) -> None:
        super().__init__(orch)
        result = orch.rooms.execute_one("lobby", PLAY, timeout=10)
        assert result.ok and result.value is not None, result
        self.bass, self.keep = (int(x) for x in result.value.strip("[ ]").split(","))


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, library: SynthDefLibrary) -> Iterator[Room]:
    with running(tmp_path_factory.mktemp("changes"), "changes", library, Room) as the_room:
        yield the_room


def test_a_pbindef_key_change_lands_on_the_next_bar(room: Room) -> None:
    orch = room.orch
    view = orch.views["lobby"]
    wait(lambda: len(room.starts(room.bass, 0)) >= 6, 2 * BAR + 2, "the Pbindef does not play")
    grid = orch.tempo.grid()
    assert grid is not None
    since = view.events.mark()
    asked = time.time()
    out = room.pattern(action="set", name="bass", key="dur", value="0.5")
    assert out.kind == "Pbindef" and 0 <= out.lands_in <= BAR
    time.sleep(out.lands_in + 2 * BAR)
    heard = [h.at for h in room.starts(room.bass, asked - BAR)]
    gaps = [b - a for a, b in itertools.pairwise(heard)]
    # the first event followed by a half-beat gap (quarters before) is the first to play it
    first = next(i for i, gap in enumerate(gaps) if gap > 0.375 * BEAT)
    # (notifications arrive with a few tens of ms of jitter on a loaded machine)
    assert all(abs(g - BEAT / 4) < 0.05 for g in gaps[:first]), gaps
    assert all(abs(g - BEAT / 2) < 0.05 for g in gaps[first:]), gaps
    # every event sounds a server latency (under a quarter beat here) after its beat of the
    # grid, the change's too: on a bar, that latency after it
    late = statistics.median((grid.beat_at(h) % 0.25) * BEAT for h in heard[:first])
    landed = heard[first]
    offset = (grid.beat_at(landed) % grid.beats_per_bar) * BEAT
    apart = abs(offset % (BEAT / 4) - late)
    assert offset < 0.3 and min(apart, BEAT / 4 - apart) < 0.05, (offset, late)
    # and on the next bar after the call: the bar it said
    assert asked < landed - offset <= asked + BAR + 0.05
    assert abs(landed - offset - (asked + out.lands_in)) < 0.1
    event = view.events.wait_for(Kind.PATTERN_CHANGED, since, 1.0)
    assert event is not None and event.details["action"] == "set"
    assert "dur = 0.5" in event.message
    assert len(room.starts(room.keep, asked)) >= 4, "the other pattern stopped"


def test_stopping_one_pattern_leaves_the_others_playing(room: Room) -> None:
    orch = room.orch
    view = orch.views["lobby"]
    wait(lambda: view.patterns["Pdef bass"].playing and view.patterns["Pdef keep"].playing,
         3, f"{view.patterns}")
    out = room.pattern(action="stop", name="bass", at="now")
    assert out.lands_in == 0
    stopped = time.time()
    time.sleep(BAR)
    assert not room.starts(room.bass, stopped + 0.5), "the stopped pattern played on"
    assert len(room.starts(room.keep, stopped + 0.5)) >= 2, "the other pattern stopped too"
    wait(lambda: not view.patterns["Pdef bass"].playing, 2, "the stop was not recorded")
    assert view.patterns["Pdef keep"].playing
    shown = room.api.call("playing", {"instance": "lobby"})
    assert isinstance(shown, PlayingOutput)
    states = {p.name: p.playing for p in shown.rooms[0].patterns}
    assert states["bass"] is False and states["keep"] is True
    # played again on the next beat, as it was
    again = room.pattern(action="play", name="bass", at="next_beat")
    assert again.lands_in <= BEAT
    wait(lambda: len(room.starts(room.bass, time.time() - 0.2)) > 0, BAR, "it did not play again")


def test_mute_and_solo_silence_events_while_the_patterns_play_on(room: Room) -> None:
    room.pattern(action="solo", name="bass", at="now")
    soloed = time.time()
    time.sleep(BAR)
    assert not room.starts(room.keep, soloed + 0.5), "solo did not mute the other pattern"
    assert room.starts(room.bass, soloed + 0.5), "the soloed pattern was silenced"
    assert room.orch.views["lobby"].patterns["Pdef keep"].playing  # muted, not stopped
    room.pattern(action="unmute", at="now")
    unmuted = time.time()
    wait(lambda: bool(room.starts(room.keep, unmuted + 0.3)), BAR, "unmute did not end the solo")


def test_a_fade_ends_the_pattern_after_its_seconds_and_a_new_source_plays_on_the_beat(
    room: Room,
) -> None:
    view = room.orch.views["lobby"]
    asked = time.time()  # the fade cannot end before a second after this (the answer may
    out = room.pattern(action="fade", name="keep", seconds=1.0, at="now")  # come late)
    faded = time.time()
    wait(lambda: not view.patterns["Pdef keep"].playing, 3, "the fade did not stop it")
    # PfadeOut ends its stream at the last event that starts within the fade: up to one
    # event (0.5 beat) before the fade's end
    assert time.time() - asked >= 1.0 - 0.5 * BEAT - 0.05, "stopped before its fade was over"
    time.sleep(0.5)
    assert not room.starts(room.keep, faded + 1.5), "it played on after the fade"
    assert out.lands_in == 0
    new = room.pattern(action="source", name="bass", at="next_beat",
                       source=f"Pbind(\\dur, 1, \\legato, 0.1, \\amp, 0.001, "
                              f"\\group, {room.bass})")
    wait(lambda: "dur', 1" in view.patterns["Pdef bass"].text, BEAT + 2, "not recorded")
    assert view.patterns["Pdef bass"].kind == "Pdef"  # a Pbind source: a Pdef now
    began = time.time() + new.lands_in + 0.5
    time.sleep(new.lands_in + 2.2 * BEAT + 0.5)
    gaps = [b.at - a.at for a, b in itertools.pairwise(room.starts(room.bass, began))]
    assert gaps and all(abs(g - BEAT) < 0.05 for g in gaps), gaps


def test_a_pattern_played_during_its_fade_plays_on_past_the_fades_end(room: Room) -> None:
    # The fade's stop, due at its end, stopped the player that a play during the fade had
    # reused (CI's undo test found the pattern stopped under its mute): a new player now.
    view = room.orch.views["lobby"]
    room.pattern(action="play", name="keep", at="now")
    wait(lambda: view.patterns["Pdef keep"].playing, 2, "it did not play")
    room.pattern(action="fade", name="keep", seconds=1.0, at="now")
    time.sleep(0.3)
    room.pattern(action="play", name="keep", at="now")
    replayed = time.time()
    time.sleep(1.5)
    assert view.patterns["Pdef keep"].playing, "the fade's end stopped it, played again"
    assert room.starts(room.keep, replayed + 1.0), "silent after the fade it was played out of"


@pytest.mark.parametrize(("args", "error", "argument"), [
    ({"action": "stop", "name": "nothing"}, PatternNotFound, "name"),
    ({"action": "set", "name": "hum", "key": "dur", "value": "1"}, InvalidRequest, "name"),
    ({"action": "set", "name": "bass", "key": "dur z", "value": "1"}, InvalidRequest, "key"),
    ({"action": "fade", "name": "bass", "seconds": -1}, InvalidRequest, "seconds"),
    ({"action": "source", "name": "bass", "source": "Pbind(\\dur,"}, PatternFailed, "source"),
    ({"action": "set", "name": "bass", "key": "dur", "value": "1/nil"}, PatternFailed, "value"),
    ({"action": "stop", "name": "bass", "kind": "Tdef"}, PatternNotFound, "name"),
    ({"action": "stop", "name": "bass", "at": "later"}, InvalidRequest, "at"),
])
def test_bad_changes_are_refused_naming_the_argument(
    room: Room, args: dict[str, Any], error: type[ScorchError], argument: str,
) -> None:
    with pytest.raises(error) as raised:
        room.pattern(**args)
    assert raised.value.argument == argument, raised.value
    assert room.orch.views["lobby"].patterns["Pdef bass"].kind in ("Pbindef", "Pdef")


def test_mute_and_solo_are_shown_undone_and_kept_in_a_session(room: Room) -> None:
    view = room.orch.views["lobby"]
    api = room.api

    def mutes() -> dict[str, str]:
        return {p.name: p.mute for p in view.patterns.values() if p.kind != "Ndef"}

    room.pattern(action="play", name="keep", at="now")  # the fade stopped it
    wait(lambda: view.patterns["Pdef bass"].playing and view.patterns["Pdef keep"].playing,
         3, f"{view.patterns}")
    room.pattern(action="mute", name="keep", at="now")
    wait(lambda: mutes() == {"bass": "", "keep": "muted"}, 2, f"{mutes()}")
    shown = api.call("playing", {"instance": "lobby"})
    assert isinstance(shown, PlayingOutput)
    assert {p.name: p.mute for p in shown.rooms[0].patterns}["keep"] == "muted"
    assert "keep: playing, muted" in shown.text()
    muted = time.time()
    time.sleep(BEAT)
    assert not room.starts(room.keep, muted + 0.3), "the muted pattern sounded"
    # undone: it sounds again (the journal holds mutes like every pattern change)
    undone = api.call("undo", {"action": "undo", "instance": "lobby"})
    assert "unmute Pdef keep" in str(undone.model_dump()), undone
    wait(lambda: mutes() == {"bass": "", "keep": ""}, 2, f"{mutes()}")
    back = time.time()
    wait(lambda: bool(room.starts(room.keep, back + 0.3)), BAR, "undo did not unmute it")
    # a solo saved in a session comes back when the session loads
    room.pattern(action="solo", name="bass", at="now")
    wait(lambda: mutes() == {"bass": "solo", "keep": "muted"}, 2, f"{mutes()}")
    api.call("session", {"action": "save", "name": "soloed"})
    room.pattern(action="unmute", at="now")
    wait(lambda: mutes() == {"bass": "", "keep": ""}, 2, f"{mutes()}")
    loaded = api.call("session", {"action": "load", "name": "soloed"})
    assert {"solo Pdef bass", "mute Pdef keep"} <= {
        c["detail"] for c in loaded.model_dump()["changes"]}, loaded
    wait(lambda: mutes() == {"bass": "solo", "keep": "muted"}, 2, f"{mutes()}")
    again = time.time()
    time.sleep(BEAT)
    assert not room.starts(room.keep, again + 0.3), "the session's mute did not silence it"
    room.pattern(action="unmute", at="now")
    wait(lambda: mutes() == {"bass": "", "keep": ""}, 2, f"{mutes()}")


def test_the_notes_a_pattern_plays_are_captured_on_the_grid_and_its_last_event_advances(
    room: Room,
) -> None:
    orch = room.orch
    view = orch.views["lobby"]
    # C4 E4 G4 C5 in sixteenths from a bar line, looped; amp 0.2 reads as velocity 64
    code = ("Pdef(\\mel, Pbind(\\degree, Pseq([0, 2, 4, 7], inf), \\dur, 0.25, "
            "\\legato, 1.5, \\amp, 0.2, \\group, ~keepGroup)).play(quant: 4)")
    assert orch.rooms.execute_one("lobby", code, timeout=10).ok
    began = time.time()
    wait(lambda: "Pdef mel" in view.pattern_times, BAR + 2, "no event of the Pdef was told")
    first_seen = view.pattern_times["Pdef mel"]
    time.sleep(0.5)
    shown = room.api.call("playing", {"instance": "lobby"})
    assert isinstance(shown, PlayingOutput)
    mel = next(p for p in shown.rooms[0].patterns if p.name == "mel")
    assert mel.last_event is not None and mel.last_event > first_seen
    assert "last event" in shown.text()

    def played() -> NotesOutput:
        out = room.api.call("notes", {"action": "played", "input": "lobby/Pdef mel",
                                      "since": began - 0.1})
        assert isinstance(out, NotesOutput)
        return out

    wait(lambda: played().count >= 8, 3, "two rounds of the melody were not captured")
    notes = played().notes
    assert [n.pitch for n in notes[:8]] == [60, 64, 67, 72] * 2, notes
    assert {n.source for n in notes} == {"lobby/Pdef mel"}
    assert {n.velocity for n in notes} == {64}
    grid = orch.tempo.grid()
    assert grid is not None  # quant 4: the first on a bar line of the grid (sclang's clock
    bar_phase = grid.beat_at(notes[0].onset) % 4  # follows it within a millisecond or so)
    assert min(bar_phase, 4 - bar_phase) < 0.01, notes[0]
    onsets = [n.onset for n in notes[:8]]
    assert all(b - a == pytest.approx(BEAT / 4, abs=0.005)
               for a, b in itertools.pairwise(onsets)), onsets
    assert all(n.duration == pytest.approx(1.5 * BEAT / 4, abs=0.005) for n in notes)
    sounding = room.api.call("notes", {"action": "sounding", "input": "lobby/Pdef mel"})
    assert isinstance(sounding, NotesOutput)
    assert sounding.count >= 1, sounding.listing  # legato 1.5: always one note sounds
    # the room's every pattern: by source, each under its name
    everything = room.api.call("notes", {"action": "played", "input": "lobby/",
                                         "last_seconds": 2})
    assert isinstance(everything, NotesOutput)
    assert {"lobby/Pdef mel", "lobby/Pdef bass"} <= {n.source for n in everything.notes}
    assert "lobby/Pdef mel:\n" in everything.text()
    assert orch.rooms.execute_one("lobby", "Pdef(\\mel).clear", timeout=10).ok


def test_after_a_recompile_patterns_resume_on_the_grid_not_on_a_fallback(room: Room) -> None:
    # the recompiled sclang's clock starts at beat 0: the grid must be told again
    orch = room.orch
    view = orch.views["lobby"]
    code = ("Pdef(\\bass).clear; Pdef(\\keep).clear; Ndef(\\hum).clear;"
            "Pdef(\\tick, Pbind(\\dur, 1, \\legato, 0.1, \\amp, 0.001)).play(quant: 4);"
            "Pdef(\\quiet, Pbind(\\dur, 0.5, \\legato, 0.1, \\amp, 0.001, \\group, "
            f"{room.keep})).play(quant: 1)")
    assert orch.rooms.execute_one("lobby", code, timeout=10).ok
    wait(lambda: set(view.patterns) == {"Pdef tick", "Pdef quiet"}, 3, f"{view.patterns}")
    # a mute is kept through the restart: muted again before its first event
    room.pattern(action="mute", name="quiet", at="now")
    wait(lambda: view.patterns["Pdef quiet"].mute == "muted", 2, f"{view.patterns}")
    began = time.time()
    wait(lambda: len(room.starts(1, began)) >= 2, BAR + 3, "the Pdef does not play")
    grid = orch.tempo.grid()
    assert grid is not None
    late = statistics.median((grid.beat_at(h.at) % 1) * BEAT for h in room.starts(1, began))
    since = view.events.mark()
    assert orch.rooms.execute_one("lobby", "thisProcess.recompile; 1", timeout=10).ok
    restored = view.events.wait_for(Kind.RESTORED, since, 30.0)
    assert restored is not None and "recompiled" in restored.message
    back = time.time()
    wait(lambda: bool(room.starts(1, back)), BAR + 1.0, "the Pdef did not resume")
    first = room.starts(1, back)[0].at
    offset = (grid.beat_at(first) % grid.beats_per_bar) * BEAT
    assert abs(offset - late) < 0.05, f"resumed {offset:.3f} s after a bar, not {late:.3f}"
    assert first - back <= BAR + 0.4
    time.sleep(BEAT)  # the muted one resumed on that bar too: half a beat apart
    quiet = view.patterns["Pdef quiet"]
    assert quiet.playing and quiet.mute == "muted", quiet
    assert not room.starts(room.keep, back), "the muted pattern sounded after the restart"
    muted = room.orch.rooms.execute_one(
        "lobby", "ScorchPatternOps.muteState(\"Pdef\", 'quiet')", timeout=10)
    assert muted.value == "muted", muted

