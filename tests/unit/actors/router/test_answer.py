"""The live answer's thread with voices that only record: pause, grid beat, cut, phrase."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.router.answer import Answerer, phrase_before
from scorch.notes.capture import Note, NoteRing
from scorch.notes.partner import Phrase
from scorch.state.tempo import Timeline

BPM = 600.0  # a beat is 0.1 s: the thread's waits stay short
BEAT = 60.0 / BPM


class Recorded:
    """Voices that keep what they were told, with the time."""

    def __init__(self) -> None:
        self.events: list[tuple[str, float, int]] = []
        self.cut_done = threading.Event()

    def start(self, note: Note) -> int:
        self.events.append(("start", time.monotonic(), note.pitch))
        return note.pitch

    def end(self, handle: int) -> None:
        self.events.append(("end", time.monotonic(), handle))

    def cut(self, handles: list[int]) -> None:
        for handle in handles:
            self.events.append(("cut", time.monotonic(), handle))
        self.cut_done.set()

    def close(self) -> None:
        pass


def compose(heard: list[Note]) -> Phrase:
    """The phrase played back an octave up, each note a beat long, a beat apart."""
    notes = [Note(i * BEAT, BEAT * 0.9, n.pitch + 12, n.velocity) for i, n in enumerate(heard)]
    return Phrase(notes, [], [0] * len(notes))


def play(ring: NoteRing, answerer: Answerer, pitches: list[int]) -> float:
    """Press and release each key as the input thread would; return the last release."""
    t = 0.0
    for pitch in pitches:
        for status, velocity in ((0x90, 90), (0x80, 0)):
            t = time.monotonic()
            ring.message(t, status, pitch, velocity)
            answerer.heard(t, status, pitch, velocity)
            time.sleep(0.01)
    return t


def test_it_answers_on_the_first_beat_after_the_pause_and_a_key_press_cuts_it() -> None:
    ring, voices = NoteRing("keys", 64), Recorded()
    line = Timeline(BPM, 4, beat=0.0, at=time.monotonic())
    answerer = Answerer("keys", ring, compose, lambda: line, voices, pause_beats=2.0)
    answerer.start()
    try:
        last = play(ring, answerer, [60, 62, 64, 65])
        deadline = time.monotonic() + 5
        while len([e for e in voices.events if e[0] == "start"]) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.002)
        starts = [e for e in voices.events if e[0] == "start"]
        first = starts[0][1]
        due = last + 2 * BEAT
        assert due <= first < due + BEAT + 0.05
        assert abs(line.beat_at(answerer.played[-1].start) % 1) < 1e-6 or \
            abs(line.beat_at(answerer.played[-1].start) % 1 - 1) < 1e-6
        assert [p for _, _, p in starts] == [72, 74]
        pressed = time.monotonic()
        ring.message(pressed, 0x90, 67, 90)
        answerer.heard(pressed, 0x90, 67, 90)
        # freed by the input thread's own call, before it returns: no other thread's wake-up
        assert voices.cut_done.is_set()
        cut = [e for e in voices.events if e[0] == "cut"]
        assert cut and cut[0][1] - pressed < 0.05
        deadline = time.monotonic() + 1
        while answerer.played[-1].cut is None:  # the answer thread writes down the cut
            assert time.monotonic() < deadline
            time.sleep(0.002)
        assert 0 <= answerer.played[-1].cut - cut[-1][1] < 0.05
        assert answerer.played[-1].sent < 4
        assert answerer.played[-1].freed == [handle for _, _, handle in cut]
        time.sleep(3 * BEAT)  # nothing more of that answer starts after the cut
        assert len([e for e in voices.events if e[0] == "start"]) == len(starts)
        assert [n.pitch for n in answerer.played[-1].heard] == [60, 62, 64, 65]
    finally:
        answerer.stop()


def test_a_key_held_through_the_pause_is_no_pause() -> None:
    ring, voices = NoteRing("keys", 64), Recorded()
    line = Timeline(BPM, 4, beat=0.0, at=time.monotonic())
    answerer = Answerer("keys", ring, compose, lambda: line, voices, pause_beats=1.0)
    answerer.start()
    try:
        t = time.monotonic()
        ring.message(t, 0x90, 60, 90)
        answerer.heard(t, 0x90, 60, 90)
        time.sleep(4 * BEAT)
        assert voices.events == []
    finally:
        answerer.stop()


@given(st.lists(st.tuples(st.floats(0.0, 2.0), st.floats(0.01, 1.0)), max_size=30),
       st.floats(0.05, 1.5))
def test_the_last_phrase_is_the_trailing_run_without_a_pause(
        gaps: list[tuple[float, float]], pause: float) -> None:
    notes, t = [], 0.0
    for gap, held in gaps:
        t += gap
        notes.append(Note(t, held, 60, 90))
    phrase = phrase_before(notes, pause)
    if not notes:
        assert phrase == []
        return
    assert phrase and phrase[-1] == notes[-1] and notes[-len(phrase):] == phrase
    begin = len(notes) - len(phrase)
    for i in range(begin + 1, len(notes)):  # no silence of a pause inside it
        assert notes[i].onset - max(n.end for n in notes[max(0, i - 8):i]) < pause
    if begin > 0 and len(phrase) < 64:  # and one right before it
        assert notes[begin].onset - max(n.end for n in notes[max(0, begin - 8):begin]) >= pause


def test_the_input_thread_only_notes_the_time_unless_an_answer_plays() -> None:
    answerer = Answerer("keys", NoteRing("keys"), compose, lambda: Timeline(BPM), Recorded())
    answerer.heard(1.0, 0xB0, 1, 2)  # a controller: not the performer's notes
    assert answerer.last is None
    answerer.heard(2.0, 0x90, 60, 90)
    assert answerer.last == 2.0 and not answerer._wake.is_set()
    answerer.playing = True
    answerer.heard(3.0, 0x80, 60, 0)  # a release does not cut an answer
    assert not answerer._wake.is_set()
    answerer.heard(4.0, 0x90, 60, 90)
    assert answerer._wake.is_set()


@pytest.mark.parametrize("pause", [0.25, 1.0])
def test_nothing_is_answered_before_anything_is_played(pause: float) -> None:
    voices = Recorded()
    answerer = Answerer("keys", NoteRing("keys"), compose, lambda: Timeline(BPM), voices,
                        pause_beats=pause)
    answerer.start()
    time.sleep(0.1)
    answerer.stop()
    assert voices.events == [] and not answerer.played


def test_a_key_down_longer_than_held_beats_is_taken_for_a_lost_release() -> None:
    ring, voices = NoteRing("keys", 64), Recorded()
    line = Timeline(BPM, 4, beat=0.0, at=time.monotonic())
    stuck = time.monotonic() - 9 * BEAT  # pressed 9 beats ago, its release never came
    ring.message(stuck, 0x90, 40, 90)
    answerer = Answerer("keys", ring, compose, lambda: line, voices, pause_beats=1.0)
    answerer.start()
    try:
        play(ring, answerer, [60, 62])
        deadline = time.monotonic() + 3
        while not voices.events:
            assert time.monotonic() < deadline, "a stuck key silenced the partner"
            time.sleep(0.005)
    finally:
        answerer.stop()
