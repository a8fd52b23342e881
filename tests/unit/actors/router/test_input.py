"""The input thread's hook that keeps what the router plays in a room as that room's notes."""

from __future__ import annotations

import threading

from actors.router.input import MidiInput
from midi.engine import Engine
from midi.voices import Voice
from scorch.notes.capture import Capture


def voice(instance: str, pitch: float, channel: int = 2) -> Voice:
    return Voice(1, ("127.0.0.1", 57110), instance, "r0", ("keys", channel), 60, pitch, 2.0,
                 True)


def test_a_voice_started_and_ended_is_a_note_of_its_room_in_the_capture_of_the_moment() -> None:
    taking = MidiInput(threading.Lock(), Engine(), None, {})  # type: ignore[arg-type]
    taking.played(voice("lobby", 72), 100)  # no capture: nothing kept, nothing fails
    first = taking.capture = Capture(8)
    taking.played(voice("lobby", 72.2), 100)
    taking.played(voice("lobby", 72.2), 0)
    taking.played(voice("hall", 200), 100)  # transposed out of MIDI's range: not a note
    (note,) = first.rings["room:lobby"].notes()
    assert (note.pitch, note.velocity, note.channel) == (72, 100, 2) and note.duration >= 0
    assert first.rings["room:hall"].notes() == [] and first.sounding(1e12) == []
    second = taking.capture = Capture(8)  # a new capture (a reload): its own rings
    taking.played(voice("lobby", 60), 90)
    assert [n.pitch for n in second.sounding(1e12)] == [60]
    assert first.rings["room:lobby"].sounding(1e12) == []
