"""A partner's live answer: when the performer pauses, play a phrase; stop when they play.

One :class:`Answerer` per MIDI input, each with its own thread. The MIDI input
thread only calls :meth:`Answerer.heard` after keeping a message in the capture
ring (:attr:`scorch.notes.capture.Capture.listeners`): it notes the time and,
while an answer plays and the message is a key press, frees the answer's held
voices itself, at once (no wait for another thread to wake and take the GIL),
and sets an event. The rest runs here: waiting out the pause (``pause_beats`` of
the installation's grid after the last message, with no key down), asking for a
phrase (``compose``: the app's partner, learning from the ring first), waiting for
the next beat of the grid and playing the notes in real time, one datagram per start and release, so
that a key press cuts the answer off at once (the voices still held are freed,
not scheduled ahead where nothing could take them back).

Voices go to a room's scsynth as OSC (:class:`ScsynthVoices`, ids above the
router's keyboard voices) or to a MIDI output (:class:`MidiVoices`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from midi import FIRST_NODE_ID, NODE_ID_SPAN, midicps
from scorch.notes import Note, NoteRing, Phrase
from scorch.primitives.scsynth import VoiceSender, commands
from scorch.state import Timeline

log = logging.getLogger(__name__)

#: The first node id of the answers' voices: right above the keyboard voices' span
#: (below 2**29 + 2**27, far under the orchestra's persistent nodes at 2**30).
FIRST_ANSWER_ID = FIRST_NODE_ID + NODE_ID_SPAN
#: Ids each answerer wraps within (inputs take consecutive slots).
ANSWER_ID_SPAN = 2**16
ANSWER_SLOTS = 2**10
#: Seconds between two looks while nothing new was played (no MIDI hot-path cost).
LOOK_EVERY = 0.02
#: Seconds the answer thread is given to stop.
STOP_WAIT = 2.0
#: How loud the loudest velocity plays on scsynth (as ``notes play`` does).
FULL_AMP = 0.4
#: Answers whose figures are kept.
HISTORY = 32
#: Beats a key may be held through a pause and still stop the answer; one held longer is
#: taken for a lost release (MIDI through a loaded machine loses one now and then, and a
#: key that stays down in the capture must not silence the partner for good).
HELD_BEATS = 8.0


class Voices(Protocol):
    """Where an answer's notes sound."""

    def start(self, note: Note) -> int:
        """Start ``note`` now; return a handle for :meth:`end`."""
        ...

    def end(self, handle: int) -> None:
        """Release a note at its end."""
        ...

    def cut(self, handles: list[int]) -> None:
        """Silence the notes still held, at once."""
        ...

    def close(self) -> None:
        """Let go of what it holds."""
        ...


class Kept:
    """What an answer plays in a room, kept as notes in a ring of its own (written under the
    answerer's lock): ``notes`` then says what the room played, the partner's notes too."""

    def __init__(self, ring: NoteRing | None, channel: int = 0) -> None:
        self.ring = ring
        self._channel = channel
        self._pitches: dict[int, int] = {}
        """Sounding handle -> pitch."""

    def on(self, handle: int, note: Note) -> None:
        """A voice started for ``note``."""
        if self.ring is not None:
            self._pitches[handle] = note.pitch
            self.ring.note_on(time.monotonic(), self._channel, note.pitch, note.velocity)

    def off(self, handles: list[int]) -> None:
        """Voices ended (released or freed)."""
        if self.ring is not None:
            now = time.monotonic()
            for handle in handles:
                pitch = self._pitches.pop(handle, None)
                if pitch is not None:
                    self.ring.note_off(now, self._channel, pitch)


class ScsynthVoices:
    """Notes as synths on a room's scsynth: ``/s_new`` with freq, amp and gate; freed on a cut.

    Sent by a :class:`~scorch.primitives.scsynth.voice_sender.VoiceSender`, as the router's
    voices are: a note's release waits for scsynth to confirm its start (a short note at a
    long period, or while scsynth runs late, would otherwise leave a synth that never ends).
    """

    def __init__(self, address: Callable[[], tuple[str, int] | None], synthdef: str,
                 slot: int, kept: Kept | None = None) -> None:
        self.kept = kept or Kept(None)
        self._address = address
        """The room's scsynth now (None while it is not READY: the notes are dropped)."""
        self.synthdef = synthdef
        self.first = FIRST_ANSWER_ID + (slot % ANSWER_SLOTS) * ANSWER_ID_SPAN
        self._next = 0
        self._to: tuple[str, int] | None = None
        self._sender = VoiceSender(f"answer-{slot}").start()

    def start(self, note: Note) -> int:
        """Start one synth for ``note`` (its address looked up once per answer)."""
        node = self.first + self._next
        self._next = (self._next + 1) % ANSWER_ID_SPAN
        if self._to is None:
            self._to = self._address()
        if self._to is not None:
            start = commands.s_new(self.synthdef, node, commands.AddAction.HEAD, args=[
                "freq", midicps(note.pitch), "amp", FULL_AMP * note.velocity / 127,
                "gate", 1.0])
            with self._sender.lock:
                self._sender.start_voice(start, node, self._to, time.monotonic())
            self.kept.on(node, note)
        return node

    def end(self, handle: int) -> None:
        """Close its gate (once scsynth ran it): it fades over its own release."""
        if self._to is not None:
            with self._sender.lock:
                self._sender.release(handle, self._to)
        self.kept.off([handle])

    def cut(self, handles: list[int]) -> None:
        """Free the held synths in one message."""
        with self._sender.lock:
            self._sender.drop(*handles)
        if self._to is not None and handles:
            self._sender.send(commands.n_free(*handles), self._to)
        self.kept.off(handles)
        self._to = None  # looked up again for the next answer

    def close(self) -> None:
        """Send the releases still held; stop reading confirmations."""
        self._sender.close()


class MidiVoices:
    """Notes as note-on and note-off on a MIDI output (through the router's ``send``)."""

    def __init__(self, send: Callable[[str, int, int], None], channel: int = 0) -> None:
        self._send = send
        """(kind 'note_on' or 'note_off', note, velocity) out of the output port (which the
        router's capture keeps as ``out:PORT``)."""
        self.channel = channel

    def start(self, note: Note) -> int:
        """Press the key."""
        self._send("note_on", note.pitch, note.velocity)
        return note.pitch

    def end(self, handle: int) -> None:
        """Release the key."""
        self._send("note_off", handle, 0)

    def cut(self, handles: list[int]) -> None:
        """Release every key still held."""
        for pitch in handles:
            self._send("note_off", pitch, 0)

    def close(self) -> None:
        """Nothing held outside the router."""


@dataclass
class Played:
    """One answer: what the performer played, what came back, and its timing."""

    heard: list[Note]
    """The performer's phrase it answered."""
    phrase: Phrase
    """What the partner made (its notes from 0: the answer's first beat)."""
    due: float
    """When the pause was long enough (monotonic)."""
    start: float
    """The grid beat it was to start on (monotonic)."""
    began: float | None = None
    """When its first note went out."""
    cut: float | None = None
    """When a key press cut it off (its voices freed), or None: it played to its end."""
    cut_by: float | None = None
    """The time of that key press, as the input thread took it."""
    sent: int = 0
    """Notes started."""
    freed: list[int] = field(default_factory=list)
    """The voices the cut freed (held then); released ones end over their own release."""


@dataclass
class Answerer:
    """The answer thread of one input."""

    source: str
    ring: NoteRing
    compose: Callable[[list[Note]], Phrase]
    """The partner's answer to a phrase, its notes timed from 0 (any thread)."""
    line: Callable[[], Timeline]
    """The installation's grid now."""
    voices: Voices
    pause_beats: float = 2.0
    last: float | None = None
    """The time of the performer's last note message (written by the input thread only)."""
    playing: bool = False
    awaited: set[str] | None = None
    """Where to say an answer plays (:attr:`Capture.awaited`): the input thread then looks
    for the performer's key press as often as while MIDI flows."""
    played: deque[Played] = field(default_factory=lambda: deque(maxlen=HISTORY))
    errors: int = 0
    _wake: threading.Event = field(default_factory=threading.Event)
    _halt: threading.Event = field(default_factory=threading.Event)
    _held: dict[int, int] = field(default_factory=dict)
    """The playing answer's voices still sounding: note index -> handle (under _voices)."""
    _voices: threading.Lock = field(default_factory=threading.Lock)
    """Taken around each start, end and cut: the input thread's cut and the answer
    thread's notes take turns, so no voice starts after a cut or escapes it."""
    _cut: tuple[float, list[int]] | None = None
    """When the input thread cut the playing answer, and the voices it freed."""
    _thread: threading.Thread | None = None
    _answered: float = -math.inf

    def heard(self, t: float, status: int, data1: int, data2: int) -> None:
        """A message of the performer (MIDI input thread): note its time, wake a playing answer."""
        kind = status & 0xF0
        if kind == 0x90 or kind == 0x80:
            self.last = t
            if self.playing and kind == 0x90 and data2:
                with self._voices:
                    if self.playing and self._cut is None:
                        freed = list(self._held.values())
                        self._held.clear()
                        self.voices.cut(freed)
                        self._cut = (time.monotonic(), freed)
                self._wake.set()

    def start(self) -> None:
        """Start the answer thread; answers only what is played from now on."""
        self._answered = self.last if self.last is not None else -math.inf
        self._thread = threading.Thread(target=self._run, name=f"partner-answer-{self.source}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread, cutting an answer that plays."""
        self._halt.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT)
        self.voices.close()

    def _run(self) -> None:
        halt = self._halt
        while not halt.is_set():
            try:
                self._look()
            except Exception:  # a failed answer must not end listening
                self.errors += 1
                log.exception("the partner's answer on %s failed", self.source)
                halt.wait(1.0)

    def _look(self) -> None:
        """Wait for a pause after something new, then answer it."""
        last, halt = self.last, self._halt
        if last is None or last <= self._answered:
            halt.wait(LOOK_EVERY)
            return
        line = self.line()
        due = last + self.pause_beats * 60.0 / line.bpm
        now = time.monotonic()
        if now < due:
            halt.wait(due - now)
            return
        held = HELD_BEATS * 60.0 / line.bpm
        if any(n.duration < held for n in self.ring.sounding(now)):  # a key held: no pause
            halt.wait(LOOK_EVERY)
            return
        self._answered = last
        heard = phrase_before(self.ring.notes(), self.pause_beats * 60.0 / line.bpm)
        if not heard:
            return
        made = self.compose(heard)
        if not made.notes:
            return
        now = time.monotonic()
        start = line.time_at(math.ceil(line.beat_at(now) - 1e-9))
        answer = Played(heard, made, due, start)
        self.played.append(answer)
        self._play(answer, last)

    def _play(self, answer: Played, trigger: float) -> None:
        """Play the notes on time until their end or the performer's next key press."""
        notes = answer.phrase.notes
        events = sorted([(answer.start + n.onset, 1, i) for i, n in enumerate(notes)]
                        + [(answer.start + n.end, 0, i) for i, n in enumerate(notes)])
        voices, wake, halt, held, lock = (self.voices, self._wake, self._halt, self._held,
                                          self._voices)
        wake.clear()
        with lock:
            held.clear()
            self._cut = None
            self.playing = True  # after the clear: a press from here on cuts and sets the event
        if self.awaited is not None:
            self.awaited.add(self.source)
        try:
            for at, starts, i in events:
                wait = at - time.monotonic()
                if (wait > 0 and wake.wait(wait)) or self.last != trigger or halt.is_set():
                    self._stop(answer)
                    return
                with lock:
                    if self._cut is not None:  # a key press came between two looks
                        break
                    if starts:
                        held[i] = voices.start(notes[i])
                    elif i in held:
                        voices.end(held.pop(i))
                if starts:
                    answer.sent += 1
                    if answer.began is None:
                        answer.began = time.monotonic()
            else:
                with lock:
                    voices.cut([])
                return
            self._stop(answer)
        finally:
            with lock:
                self.playing = False
            if self.awaited is not None:
                self.awaited.discard(self.source)

    def _stop(self, answer: Played) -> None:
        """Free what still sounds (the input thread may have done it at the key press)."""
        with self._voices:
            rest = list(self._held.values())
            self._held.clear()
            if rest or self._cut is None:
                self.voices.cut(rest)
            cut, freed = self._cut if self._cut is not None else (time.monotonic(), [])
            self._cut = (cut, freed)
        answer.freed = freed + rest
        answer.cut, answer.cut_by = cut, self.last


def phrase_before(notes: list[Note], pause: float, most: int = 64) -> list[Note]:
    """The last phrase of ``notes`` (onset order): the trailing run with no silence of ``pause``."""
    if not notes:
        return []
    begin = len(notes) - 1
    while begin > 0 and len(notes) - begin < most:
        # the silence before it: from the latest end among the notes just before
        if notes[begin].onset - max(n.end for n in notes[max(0, begin - 8):begin]) >= pause:
            break
        begin -= 1
    return notes[begin:]
