"""A new pattern defined through the API, every change seen in `events`, and both undone.

Against real processes: what plays is read from scsynth itself (a client of our own
registered with ``/notify 1`` hears every ``/n_go``), each pattern playing into a
group of its own so that the parent group of a started synth says which made it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from scorch.api.ops.music.playing import PlayingOutput
from scorch.api.ops.rooms import EventsOutput
from scorch.api.ops.undo import UndoOutput
from scorch.app.orchestra import Orchestra
from scorch.errors import InvalidRequest, PatternFailed
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.support.rooms.pattern_room import BAR, BEAT, PatternRoom, running, wait

pytestmark = pytest.mark.integration

#: A server latency (0.2 s) and some: events sclang sent before a change still start.
LATE = 0.5


class Room(PatternRoom):
    """The module's one room, a group per pattern, and a listener on its scsynth."""

    def __init__(self, orch: Orchestra) -> None:
        super().__init__(orch)
        self.view = orch.views["lobby"]

    def group(self) -> int:
        """A new group on scsynth, for one pattern's synths."""
        result = self.orch.rooms.execute_one("lobby", "Group.new.nodeID", timeout=10)
        assert result.ok and result.value is not None, result
        return int(result.value)

    def listed(self) -> dict[str, bool]:
        """What `playing` lists: "kind name" -> whether it plays."""
        out = self.api.call("playing", {"instance": "lobby"})
        assert isinstance(out, PlayingOutput)
        return {f"{p.kind} {p.name}": p.playing for p in out.rooms[0].patterns}

    def events(self, since: int) -> list[tuple[str, dict[str, Any]]]:
        """(kind, details) of the room's events after ``since``, through `events`."""
        out = self.api.call("events", {"instance": "lobby", "since": since, "full": True})
        assert isinstance(out, EventsOutput)
        return [(e.kind, e.details) for e in out.events]


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, library: SynthDefLibrary) -> Iterator[Room]:
    with running(tmp_path_factory.mktemp("journal"), "journal", library, Room) as the_room:
        yield the_room


def pbind(group: int, dur: float = 0.25) -> str:
    return f"Pbind(\\dur, {dur}, \\legato, 0.1, \\amp, 0.001, \\group, {group})"


def test_a_pdef_defined_through_the_api_plays_on_the_bar_undo_clears_it_redo_defines_it(
    room: Room,
) -> None:
    group = room.group()
    since = room.view.events.mark()
    asked = time.time()
    out = room.pattern(action="define", kind="Pdef", name="fresh", source=pbind(group))
    assert (out.action, out.kind, out.name) == ("define", "Pdef", "fresh")
    assert 0 <= out.lands_in <= BAR  # 0: the call came in the moment before a bar
    wait(lambda: len(room.starts(group, asked)) >= 4, out.lands_in + 2, "the new Pdef is silent")
    first = room.starts(group, asked)[0].at
    # on the bar it said (the events sound a server latency after their beat)
    assert asked + out.lands_in - 0.05 < first < asked + out.lands_in + LATE
    grid = room.orch.tempo.grid()
    assert grid is not None
    offset = (grid.beat_at(first) % grid.beats_per_bar) * BEAT
    assert offset < 0.3, f"{offset:.3f} s after a bar"
    wait(lambda: room.listed().get("Pdef fresh") is True, 2, f"{room.listed()}")
    assert ("PATTERN_CHANGED", "define") in [(k, d.get("action")) for k, d in room.events(since)]
    journal = room.api.call("undo", {"action": "list", "instance": "lobby"})
    assert isinstance(journal, UndoOutput) and journal.journal[-1].call == "pattern define"

    undone = room.api.call("undo", {"instance": "lobby"})
    assert isinstance(undone, UndoOutput) and undone.failure() is None
    assert [c.detail for c in undone.steps[0].changes] == ["clear Pdef fresh"]
    cleared = time.time()
    wait(lambda: "Pdef fresh" not in room.listed(), 2, f"still listed: {room.listed()}")
    time.sleep(BAR)
    assert not room.starts(group, cleared + LATE), "the cleared Pdef played on"

    redone = room.api.call("undo", {"action": "redo", "instance": "lobby"})
    assert isinstance(redone, UndoOutput) and redone.failure() is None
    assert [c.detail.split(":")[0] for c in redone.steps[0].changes] == [
        "define and play Pdef fresh"]
    again = time.time()
    wait(lambda: len(room.starts(group, again)) >= 2, BAR, "redo did not play it again")
    assert room.listed().get("Pdef fresh") is True

    # a name in use is refused, naming it; the pattern plays on as it was
    with pytest.raises(InvalidRequest, match="already") as taken:
        room.pattern(action="define", kind="Pbindef", name="fresh", source=pbind(group))
    assert taken.value.argument == "name"
    assert room.orch.rooms.execute_one("lobby", "Pdef(\\fresh).clear", timeout=10).ok
    wait(lambda: "Pdef fresh" not in room.listed(), 2, f"{room.listed()}")


def test_a_new_pbindef_takes_key_changes_and_a_new_ndef_or_tdef_may_only_be_defined(
    room: Room,
) -> None:
    group = room.group()
    out = room.pattern(action="define", kind="Pbindef", name="keys", source=pbind(group),
                       at="now")
    assert out.lands_in == 0
    wait(lambda: room.listed().get("Pbindef keys") is True, 2, f"{room.listed()}")
    room.pattern(action="set", name="keys", key="dur", value="1", at="now")
    # a key's new value is seen (its proxy changed, not the Pbindef), so undo takes it back
    wait(lambda: "'dur', 1" in room.view.patterns["Pdef keys"].text, 2,
         room.view.patterns["Pdef keys"].text)
    undone = room.api.call("undo", {"instance": "lobby"})
    assert isinstance(undone, UndoOutput) and undone.failure() is None
    wait(lambda: "'dur', 0.25" in room.view.patterns["Pdef keys"].text, 2,
         room.view.patterns["Pdef keys"].text)
    with pytest.raises(PatternFailed, match="Pbind") as refused:
        room.pattern(action="define", kind="Pbindef", name="other", source="Pseq([1], inf)")
    assert refused.value.argument == "source"
    with pytest.raises(PatternFailed) as broken:
        room.pattern(action="define", kind="Pdef", name="other", source="Pbind(\\dur,")
    assert broken.value.argument == "source"
    room.pattern(action="define", kind="Ndef", name="hum", source="{ SinOsc.ar(99) * 0.001 }",
                 play=False, at="now")
    room.pattern(action="define", kind="Tdef", name="tick", source="{ loop { 1.wait } }",
                 at="now")
    wait(lambda: {"Ndef hum", "Tdef tick"} <= set(room.listed()), 2, f"{room.listed()}")
    listed = room.listed()
    assert listed["Ndef hum"] is False and listed["Tdef tick"] is True
    assert "Pdef other" not in listed, "a refused define left a pattern"
    assert room.orch.rooms.execute_one(
        "lobby", "Pdef(\\keys).clear; Ndef(\\hum).clear; Tdef(\\tick).clear", timeout=10).ok
    wait(lambda: not room.listed(), 2, f"{room.listed()}")


def test_every_pattern_action_and_its_undo_and_redo_show_in_events(room: Room) -> None:
    group = room.group()
    since = room.view.events.mark()
    calls: list[dict[str, Any]] = [
        {"action": "define", "kind": "Pbindef", "name": "ev", "source": pbind(group)},
        {"action": "source", "name": "ev", "source": pbind(group, 0.5)},
        {"action": "set", "name": "ev", "key": "dur", "value": "0.25"},
        {"action": "stop", "name": "ev"},
        {"action": "play", "name": "ev"},
        {"action": "mute", "name": "ev"},
        {"action": "unmute", "name": "ev"},
        {"action": "solo", "name": "ev"},
        {"action": "unmute"},
        {"action": "fade", "name": "ev", "seconds": 0.5},
    ]
    for call in calls:
        room.pattern(**call, at="now")
    changed = [(d["action"], d["pattern"]) for k, d in room.events(since)
               if k == "PATTERN_CHANGED"]
    assert [a for a, _ in changed] == [c["action"] for c in calls], changed
    # a Pbindef given a Pbind as its source is a Pdef from then on
    assert changed[0] == ("define", "Pbindef ev") and changed[8] == (
        "unmute", "every muted pattern"), changed
    assert {p for i, (_, p) in enumerate(changed) if i != 8} <= {"Pbindef ev", "Pdef ev"}
    wait(lambda: not room.view.patterns["Pdef ev"].playing, 3, "the fade did not stop it")

    mark = room.view.events.mark()
    room.api.call("undo", {"instance": "lobby", "steps": 2})
    room.api.call("undo", {"action": "redo", "instance": "lobby"})
    steps = [(d["undone"], d["call"]) for k, d in room.events(mark) if k == "UNDONE"]
    assert steps == [(True, "pattern fade"), (True, "pattern unmute"),
                     (False, "pattern unmute")], steps
    messages = [m for m in room.orch.rooms.events("lobby", mark) if m.kind == "UNDONE"]
    assert [m.message.split(":")[0] for m in messages] == ["undone", "undone", "redone"]
    assert room.orch.rooms.execute_one("lobby", "Pdef(\\ev).clear", timeout=10).ok


def test_a_pattern_a_stop_caught_waiting_for_its_quant_plays_again(room: Room) -> None:
    # a Pdef's player that CmdPeriod stops before its first event never plays again
    # (Pdef.play leaves it be): play and undo give it a new one
    code = ("Pdef(\\late, Pbind(\\dur, 0.25, \\legato, 0.1, \\amp, 0.001, \\group, "
            "Pfunc { topEnvironment[\\lateGroup] })).play(quant: 64); 1")  # 32 s away

    def group() -> int:
        """A new group for its notes (a stop frees every group)."""
        made = room.orch.rooms.execute_one("lobby", "~lateGroup = Group.new.nodeID",
                                           timeout=10)
        assert made.ok and made.value is not None, made
        return int(made.value)

    assert room.orch.rooms.execute_one("lobby", code, timeout=10).ok
    room.api.call("stop", {"instance": "lobby"})
    played, asked = group(), time.time()
    room.pattern(action="play", name="late", at="now")
    wait(lambda: len(room.starts(played, asked)) >= 2, 2, "play did not start it again")
    again = f"Pdef(\\late).stop; {code}"  # waiting for its quant again
    assert room.orch.rooms.execute_one("lobby", again, timeout=10).ok
    wait(lambda: room.view.patterns["Pdef late"].playing, 2, "not seen playing")
    room.api.call("stop", {"instance": "lobby"})
    undone, asked = group(), time.time()
    room.api.call("undo", {"instance": "lobby"})  # the stop: it played, as the view said
    wait(lambda: len(room.starts(undone, asked)) >= 2, 3, "undo did not start it again")
    assert room.orch.rooms.execute_one("lobby", "Pdef(\\late).clear", timeout=10).ok


def test_a_pattern_made_by_any_call_is_known_to_the_very_next_call(room: Room) -> None:
    """The room learns of a pattern from what sclang printed, through its actor's mailbox;
    the call's answer comes another way. The next call, sent at once, must find it: a
    `define` then a `set` (a clean-clone run once said "no pattern 'ev'" there), and code
    that made a Pdef then a `stop` of it."""
    for i in range(15):
        room.pattern(action="define", kind="Pbindef", name=f"next{i}",
                     source="Pbind(\\dur, 1, \\amp, 0)", play=False, at="now")
        out = room.pattern(action="set", name=f"next{i}", key="dur", value="0.5", at="now")
        assert (out.kind, out.name) == ("Pbindef", f"next{i}")
        made = room.orch.rooms.execute_one("lobby", f"Pdef(\\code{i}, Pbind(\\amp, 0)); nil")
        assert made.ok, made
        out = room.pattern(action="stop", name=f"code{i}", at="now")
        assert (out.kind, out.name) == ("Pdef", f"code{i}")
    kinds = {p.name: p.kind for p in room.view.patterns.values()}
    assert all(kinds.get(f"next{i}") == "Pbindef" and kinds.get(f"code{i}") == "Pdef"
               for i in range(15)), kinds
