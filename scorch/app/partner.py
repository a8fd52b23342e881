"""The partner in the running installation: one model per MIDI input, and its answers.

A :class:`~scorch.notes.partner.Partner` per input learns that input's captured
notes lazily, when it is asked for something (a continuation, an infill, a live
answer): the notes finished since it last looked (:meth:`NoteRing.since`), phrase
by phrase. Nothing runs on the MIDI hot path for it; a live answer adds one call
there (see :mod:`actors.router.answer`). Any thread; a model is locked while it
learns or plays.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actors.router import Answerer, Kept, MidiVoices, ScsynthVoices, Voices
from scorch.app.notes import Notes, Span
from scorch.app.rooms import Rooms
from scorch.app.tree import ASK, Tree
from scorch.errors import (
    CodeFailed,
    InvalidRequest,
    MidiUnavailable,
    NotFound,
    UnknownSynthDef,
)
from scorch.notes import (
    DEFAULT_ORDER,
    MAX_ORDER,
    PARTNER,
    ROOM,
    Note,
    NoteRing,
    Partner,
    Phrase,
    key,
    pbind,
    smf,
)
from scorch.primitives.scsynth import local_address
from scorch.state import State, Timeline

#: Beats of silence that end a phrase the model learns (contexts do not cross them).
LEARN_GAP = 4.0
#: Notes an answer plays at most unless told (it answers a phrase with as many notes).
ANSWER_NOTES = 32
#: Seconds a room may take to compile and start a phrase's Pdef.
PLAY_TIMEOUT = 20.0


@dataclass(frozen=True)
class Controls:
    """How the partner plays: the operation's controls, checked."""

    order: int | None = None
    """The longest context (None: :data:`DEFAULT_ORDER`)."""
    temperature: float = 1.0
    key: str | None = None
    density: float = 1.0
    seed: int | None = None

    @property
    def longest(self) -> int:
        """The longest context it continues from."""
        return DEFAULT_ORDER if self.order is None else self.order

    def allowed(self) -> frozenset[int] | None:
        """The pitch classes of :attr:`key` (None: any); a bad name is refused in words."""
        if self.key is None:
            return None
        try:
            return key(self.key)
        except ValueError as err:
            refused = InvalidRequest(str(err))
            refused.argument = "key"
            raise refused from None


@dataclass
class _Model:
    partner: Partner
    seen: int = 0
    """The ring's count when it last learned."""
    lock: threading.Lock = field(default_factory=threading.Lock)


class Partners:
    """A partner per MIDI input: continue, infill, play, save, and answer live (any thread)."""

    def __init__(self, tree: Tree, notes: Notes, rooms: Rooms) -> None:
        self._tree = tree
        self._notes = notes
        self._rooms = rooms
        self._models: dict[str, _Model] = {}
        self._answers: dict[str, Answerer] = {}
        self._lock = threading.Lock()
        self._slots = 0

    # -- models -----------------------------------------------------------------

    def source(self, pattern: str | None) -> str:
        """The one input whose name contains ``pattern`` (None: the only one that played)."""
        found = self._notes.sources(pattern)
        if len(found) != 1:
            raise InvalidRequest(f"say which MIDI input (input=...): {', '.join(found) or 'none'}"
                                 " played" if found else "no MIDI input has played yet")
        return found[0]

    def _ring(self, source: str) -> NoteRing:
        return self._notes.capture().rings[source]

    def _model(self, source: str, line: Timeline) -> _Model:
        with self._lock:
            model = self._models.get(source)
            if model is None or model.partner.bpm != line.bpm:  # classes are in beats: relearn
                model = self._models[source] = _Model(Partner(MAX_ORDER, line.bpm,
                                                              line.beats_per_bar))
            return model

    def _learn(self, model: _Model, ring: NoteRing) -> None:
        """Learn what the ring finished since the model last looked (model lock held)."""
        count = ring.count
        fresh = ring.since(model.seen)
        model.seen = count
        gap = LEARN_GAP * 60.0 / model.partner.bpm
        phrase: list[Note] = []
        for note in fresh:
            if phrase and note.onset - max(n.end for n in phrase[-8:]) >= gap:
                model.partner.learn(phrase)
                phrase = []
            phrase.append(note)
        if phrase:
            model.partner.learn(phrase)

    def learned(self, source: str) -> Partner:
        """The model of ``source``, up to date with its ring."""
        model = self._model(source, self._notes.line())
        with model.lock:
            self._learn(model, self._ring(source))
        return model.partner

    def _use(self, source: str, controls: Controls,
             make: Callable[[Partner, frozenset[int] | None], Phrase]) -> Phrase:
        allowed = controls.allowed()
        model = self._model(source, self._notes.line())
        with model.lock:
            self._learn(model, self._ring(source))
            partner = model.partner
            if not partner.counts:
                raise InvalidRequest(f"{source} has no finished notes to learn from yet")
            if controls.seed is not None:
                partner.rng = random.Random(controls.seed)
            try:
                return make(partner, allowed)
            except ValueError as err:
                raise InvalidRequest(str(err)) from None

    # -- continue and infill ----------------------------------------------------------

    def seed(self, source: str, span: Span | None, most: int = 16) -> list[Note]:
        """The notes of ``span`` (None: the last ``most`` the input finished)."""
        if span is not None:
            found = self._notes.played(span, source)
        else:
            found = self._ring(source).notes()[-most:]
        if not found:
            raise InvalidRequest(f"{source} played no notes in that range to start from")
        return found

    def continue_(self, source: str, seed: list[Note], notes: int | None, bars: float | None,
                  controls: Controls) -> Phrase:
        """What follows ``seed`` in the style of ``source``: ``notes`` notes or ``bars`` bars."""
        return self._use(source, controls, lambda partner, allowed: partner.continue_(
            seed, notes, bars, controls.temperature, controls.density, allowed, controls.longest))

    def infill(self, source: str, passage: list[Note], split: float | None, notes: int | None,
               controls: Controls) -> tuple[Phrase, list[Note], list[Note]]:
        """A passage between the notes of ``passage`` before and after ``split`` (monotonic;
        None: its longest silence), ``notes`` long (None: as dense as the passage)."""
        if len(passage) < 2:
            raise InvalidRequest("an infill needs two phrases: the range holds "
                                 f"{len(passage)} note(s)")
        if split is None:
            gaps = [(passage[i + 1].onset - passage[i].onset, i) for i in range(len(passage) - 1)]
            split = passage[max(gaps)[1] + 1].onset - 1e-6
        left = [n for n in passage if n.onset < split]
        right = [n for n in passage if n.onset >= split]
        if not left or not right:
            raise InvalidRequest("split leaves no notes on one side: give a time between them")
        if notes is None:
            spread = (left[-1].onset - left[0].onset) / max(1, len(left) - 1) or 60.0 / 120
            notes = max(1, min(ANSWER_NOTES, int((right[0].onset - left[-1].onset) / spread) - 1))
        count, highest = notes, controls.longest

        def fill(partner: Partner, allowed: frozenset[int] | None) -> Phrase:
            # the longest contexts may always run past the gap (the performer's own
            # continuation): back off order by order until one fits
            for order in range(highest, -1, -1):
                try:
                    return partner.infill(left, right, count, controls.temperature, allowed,
                                          order=order)
                except ValueError:
                    if order == 0:
                        raise
            raise AssertionError("unreachable")
        return self._use(source, controls, fill), left, right

    # -- out --------------------------------------------------------------------------

    def play(self, room: str, notes: list[Note], synthdef: str,
             name: str) -> tuple[str, list[Note]]:
        """Play ``notes`` in a room as ``Pdef(name)`` from its next bar (one of that name
        still playing is stopped); return the name and the notes as they play there.

        The room's sclang says which beat of its clock, which follows the grid, the
        first note plays on: the notes move to that beat, their spacing kept.
        """
        line = self._notes.line()
        first = min(n.onset for n in notes)
        score = pbind.lay_out([n._replace(onset=n.onset - first) for n in notes],
                              Timeline(line.bpm, line.beats_per_bar))
        name = pbind.pattern_name(name)
        code = pbind.pdef_code(score, name, synthdef, quant=float(line.beats_per_bar),
                               loop=False, again=True)
        result = self._rooms.execute_one(room, code, timeout=PLAY_TIMEOUT)
        if result.value == pbind.NO_SYNTHDEF:
            raise UnknownSynthDef(f"{room} knows no SynthDef named {synthdef!r}",
                                  name=synthdef, known=self._rooms.synthdef_names(room))
        if not result.ok:
            why = result.error.message if result.error else "it did not run"
            raise CodeFailed(f"{room} could not play the partner's notes: {why}")
        beat = pbind.start_beat(result.value)
        if beat is None:
            return name, notes
        start = self._room_line(room, line).time_at(beat)
        return name, [n._replace(onset=start + n.onset - first) for n in notes]

    def _room_line(self, room: str, line: Timeline) -> Timeline:
        """The grid the room's clock follows (its group's own tempo, or ``line``)."""
        view = self._tree.tempo
        try:
            return line if view is None else view.get(self._tree.config.tempo_scope(room))
        except KeyError:
            return line

    def save(self, notes: list[Note], path: Path | None) -> Path:
        """Write ``notes`` to a .mid (see :meth:`Notes.midi_path`) on the grid."""
        path = self._notes.midi_path(path or self._notes.new_midi_path("partner"))
        try:
            smf.write(notes, path, self._notes.line())
        except OSError as err:
            raise InvalidRequest(f"cannot write {path}: {err.strerror or err}") from err
        return path

    # -- answer live --------------------------------------------------------------------

    def _endpoint(self, room: str) -> Callable[[], tuple[str, int] | None]:
        view = self._tree.view(room)
        host = local_address(self._tree.config.listen_address())

        def endpoint() -> tuple[str, int] | None:
            snap = view.snapshot
            if snap.state not in (State.READY, State.DEGRADED) or snap.port is None:
                return None
            return (host, snap.port)
        return endpoint

    def answer_on(self, source: str, voices: Voices, pause_beats: float, notes: int | None,
                  controls: Controls) -> Answerer:
        """Answer ``source`` whenever it pauses ``pause_beats``, through ``voices``."""
        allowed = controls.allowed()
        capture = self._notes.capture()
        ring = capture.rings[source]
        line = self._notes.line()
        model = self._model(source, line)

        def compose(heard: list[Note]) -> Phrase:
            with model.lock:
                self._learn(model, ring)
                made = model.partner.continue_(
                    heard, min(notes or len(heard), ANSWER_NOTES), None, controls.temperature,
                    controls.density, allowed, controls.longest)
            first = made.notes[0].onset if made.notes else 0.0
            return made._replace(notes=[n._replace(onset=n.onset - first) for n in made.notes])

        if controls.seed is not None:
            with model.lock:
                model.partner.rng = random.Random(controls.seed)
        answerer = Answerer(source, ring, compose, self._notes.line, voices, pause_beats,
                            awaited=capture.awaited)
        with self._lock:
            old = self._answers.pop(source, None)
            self._answers[source] = answerer
        if old is not None:
            old.stop()
        answerer.start()
        capture.listeners[source] = answerer.heard  # one store: the input thread sees it whole
        return answerer

    def room_voices(self, room: str, synthdef: str) -> Voices:
        """Voices on a room's scsynth (the room must know the SynthDef)."""
        known = self._rooms.execute_one(
            room, f"SynthDescLib.global.at({pbind.symbol(synthdef)}).notNil",
            timeout=PLAY_TIMEOUT)
        if known.value != "true":
            raise UnknownSynthDef(f"{room} knows no SynthDef named {synthdef!r}",
                                  name=synthdef, known=self._rooms.synthdef_names(room))
        with self._lock:
            self._slots += 1
            slot = self._slots
        return ScsynthVoices(self._endpoint(room), synthdef, slot,
                             self._kept(ROOM + room + PARTNER))

    def midi_voices(self, output: str, channel: int) -> Voices:
        """Voices on a MIDI output (its name, or part of it) on ``channel`` (1-16)."""
        router = self._tree.midi()
        try:  # all notes off: says at once whether the output is there
            router.send(output, "cc", channel, control=123, value=0).get(timeout=ASK)
        except (KeyError, ValueError) as err:
            raise InvalidRequest(f"cannot answer on MIDI output {output!r}: {err}") from None

        def send(kind: str, note: int, velocity: int) -> None:
            router.send(output, kind, channel, note=note, velocity=velocity)  # a tell: no wait
        return MidiVoices(send, channel)

    def _kept(self, source: str) -> Kept:
        """Where an answer keeps what it plays in a room, ``room:NAME partner`` (read with
        the room's name), while notes are captured."""
        try:
            return Kept(self._notes.capture().ring(source))
        except MidiUnavailable:
            return Kept(None)

    def answer_off(self, source: str) -> Answerer:
        """Stop answering ``source`` (an answer playing is cut off)."""
        with self._lock:
            answerer = self._answers.pop(source, None)
        if answerer is None:
            raise NotFound(f"the partner is not answering {source}; answering: "
                           f"{', '.join(self._answers) or 'none'}", name=source,
                           known=list(self._answers))
        try:
            self._notes.capture().listeners.pop(source, None)
        finally:
            answerer.stop()
        return answerer

    def answering(self) -> dict[str, Answerer]:
        """The inputs answered now."""
        return dict(self._answers)

    def stats(self) -> dict[str, Any]:
        """Each answered input's answers so far."""
        return {source: len(a.played) for source, a in self._answers.items()}

    def stop(self) -> None:
        """Stop every answer (scorch stops)."""
        with self._lock:
            answers, self._answers = self._answers, {}
        for answerer in answers.values():
            answerer.stop()

