"""The partner's live answer measured on real processes: a performer on a JACK MIDI port, and
scsynth's own node notifications (``/n_go``, ``/n_end``) timed on this process's clock.

Shared by tests/integration/midi/test_partner.py and bench/midi/answer.py.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from actors.router.answer import ANSWER_ID_SPAN, ANSWER_SLOTS, FIRST_ANSWER_ID, Played
from scorch.api.live import xruns_since
from scorch.app.orchestra import Orchestra
from scorch.primitives.osc import decode_packet, encode_message
from tests.support.midi.devices import Hardware

#: Past the last id an answer voice may take.
LAST_ANSWER_ID = FIRST_ANSWER_ID + ANSWER_SLOTS * ANSWER_ID_SPAN
#: (pitch, seconds held, seconds to the next press): long notes, so an answer holds a voice
#: when the performer comes back in. Played at 120 bpm: a beat is 0.5 s.
PHRASE = [(60, 0.40, 0.50), (62, 0.40, 0.50), (64, 0.40, 0.50), (62, 0.40, 0.50),
          (64, 0.40, 0.50), (67, 0.40, 0.50), (64, 0.40, 0.50), (60, 0.40, 0.50)]


class NodeWatch:
    """A notified client of one scsynth: when each answer voice started and ended (monotonic)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(0.05)
        self.address = ("127.0.0.1", port)
        self.go: dict[int, float] = {}
        self.end: dict[int, float] = {}
        self._stop = threading.Event()
        self.sock.sendto(encode_message("/notify", 1), self.address)
        self._thread = threading.Thread(target=self._run, name="node-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except OSError:
                continue
            now = time.monotonic()
            for message in decode_packet(data):
                node = message.args[0] if message.args else None
                if (message.address in ("/n_go", "/n_end") and isinstance(node, int)
                        and FIRST_ANSWER_ID <= node < LAST_ANSWER_ID):
                    (self.go if message.address == "/n_go" else self.end)[node] = now

    def started_after(self, t: float) -> list[tuple[float, int]]:
        """(time, node) of the answer voices started after ``t``, in order."""
        return sorted((at, node) for node, at in list(self.go.items()) if at > t)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.sendto(encode_message("/notify", 0), self.address)
        self.sock.close()


def perform(keys: Hardware, phrase: list[tuple[int, float, float]], velocity: int = 90
            ) -> tuple[list[int], float]:
    """Play ``phrase`` on channel 1; return its pitches and when its last key went up."""
    events = []
    t = 0.0
    for pitch, held, gap in phrase:
        events += [(t, 0x90, pitch, velocity), (t + held, 0x80, pitch, 0)]
        t += gap
    events.sort()
    start, last = time.monotonic() + 0.02, 0.0
    for at, status, pitch, vel in events:
        time.sleep(max(0.0, start + at - time.monotonic()))
        keys.send(status, pitch, vel)
        last = time.monotonic()
    return [p for p, _, _ in phrase], last


def played_whole(orch: Orchestra, heard: list[int], sent: list[int], since: float) -> bool:
    """True when every note sent was heard. JACK drops the MIDI of a cycle its client was
    late for, which jackd reports as an xrun: a phrase short of notes passes (to be played
    again) only if jackd reported one while it played; otherwise the loss is scorch's."""
    if heard == sent:
        return True
    lines = ((line.time, line.text) for line in orch.jack_console.tail(1000))
    assert xruns_since(lines, since - 0.1), (heard, sent, "lost without an xrun")
    return False


class Uncut(AssertionError):
    """The answer had played all its notes before the performer came back in."""


@dataclass
class Figures:
    """One answer, measured."""

    late: float
    """Seconds from the beat the answer was due on to scsynth's /n_go of its first voice."""
    due_to_beat: float
    """Seconds from the end of the pause to that beat (the grid's wait, under a beat)."""
    stop: float
    """Seconds from the performer's key press (sent) to the last held voice's /n_end."""
    held: int
    """Voices sounding when the key went down."""
    off_grid: float
    """Beats from the answer's start to the nearest beat of the grid."""
    answer: Played
    phrase: list[int]
    """What the performer played (pitches)."""


def answer_once(orch: Orchestra, keys: Hardware, watch: NodeWatch, pause_beats: float,
                phrase: list[tuple[int, float, float]] = PHRASE, timeout: float = 10.0
                ) -> Figures:
    """Play a phrase, wait for the answer, come back in during a note of it; measure."""
    (answerer,) = orch.partner.answering().values()
    line = orch.notes.line()
    time.sleep(1.5 * pause_beats * 60.0 / line.bpm)  # a phrase of its own: silence before it
    pitches, last = perform(keys, phrase)
    due = last + pause_beats * 60.0 / line.bpm
    deadline = time.monotonic() + timeout

    def mine() -> Played | None:
        """The answer to this phrase (the partner also answers the key that cuts it)."""
        return next((p for p in list(answerer.played) if p.start > last), None)
    while not watch.started_after(last) or mine() is None:
        assert time.monotonic() < deadline, (
            f"the partner never answered: {len(answerer.played)} answers, {answerer.errors} "
            f"errors, last {[(p.start - last, p.sent, len(p.heard)) for p in answerer.played]}")
        time.sleep(0.005)
    first_go = watch.started_after(last)[0][0]
    # come back in 40 ms into the first note held long enough to be sounding then
    answer = mine()
    assert answer is not None
    long = [n for n in answer.phrase.notes if n.duration >= 0.1]
    if not long:
        raise Uncut(f"no note of the answer is long enough to cut: {answer.phrase.notes}")
    time.sleep(max(0.0, answer.start + long[0].onset + 0.04 - time.monotonic()))
    pressed = time.monotonic()
    keys.send(0x90, 72, 80)
    while True:
        answer = mine()
        if answer is not None and answer.cut is not None and all(
                node in watch.end for node in answer.freed):
            break
        if answer is not None and answer.cut is None and answer.sent == len(
                answer.phrase.notes) and not answerer.playing:
            keys.send(0x80, 72, 0)
            raise Uncut(f"the answer ended before the key press: {answer.phrase.notes}")
        assert time.monotonic() < deadline, (
            f"the answer was not cut off: {answer}, ended {sorted(watch.end)[-8:]}, "
            f"pressed {pressed - last:.3f} s after the phrase")
        time.sleep(0.001)
    keys.send(0x80, 72, 0)
    held = answer.freed
    stopped = max(watch.end[node] for node in held) if held else pressed
    beats = line.beat_at(answer.start)
    return Figures(first_go - answer.start, answer.start - due, stopped - pressed, len(held),
                   abs(beats - round(beats)), answer, pitches)
