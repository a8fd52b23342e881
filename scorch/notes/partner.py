"""A partner that learns a performer's style and continues, answers and fills in phrases.

The model is Pachet's Continuator (2003): a variable-order Markov model over
notes seen as symbols (pitch, length class, loudness class, onset-gap class),
learned incrementally from each phrase, that continues a history with the
longest context it has seen and backs off to shorter ones.

Why this and not a factor oracle (OMax, Somax2):

- It is a probability model. Counts give each continuation a probability, so a
  temperature means what it says (counts ** (1 / T)), the model can be scored
  on held-out music (log-likelihood against unigram and first-order baselines,
  bench/partner_quality.py) and the same counts choose the join of an infill.
  A factor oracle is an automaton of repeated factors; navigating it by suffix
  links has a "continuity" knob but no likelihood to measure or temper.
- Constraints compose with backoff: a key or scale filters the continuations of
  the longest context, and when none is left the model backs off one order,
  instead of leaving the learned material.
- What it plays is what it learned: a note chosen from a context of order k >= 1
  makes a (k + 1)-gram that occurs in a learned phrase (tested as a property).
  Only when no context at all has an allowed continuation does it invent a note
  (order -1: the unigram's pick moved into the scale), and it says so.
- Learning is O(max order) per note, cheap enough to run as the performer plays.

Unlike the Continuator it backs off by order only, not to coarser viewpoints
(pitch alone), which keeps the n-gram property exact. Times are seconds; the
classes are in beats at the partner's ``bpm``. Randomness comes from one
seedable :class:`random.Random`, so a seed makes every call reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import NamedTuple

from scorch.notes.capture import Note

LENGTHS = (0.125, 0.25, 0.375, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
"""Length classes in beats: binary and dotted values from a 1/32 to two bars."""
GAPS = (0.0, *LENGTHS)
"""Onset-gap (inter-onset interval) classes in beats; 0 is a chord with the previous note."""
CHORD = 1 / 16
"""A gap shorter than this many beats is a chord."""
LOUDNESS = (32, 56, 80, 104, 124)
"""Velocity classes, by their representative velocity."""
MAX_NOTES = 4096
"""The most notes a continuation of some beats makes (chords take no time: a bound)."""
MAX_ORDER = 6
"""The longest context the running partner keeps (an ``order`` may ask for any up to it)."""
DEFAULT_ORDER = 6
"""The longest context it continues from unless asked: what its continuations are measured
best at (bench/partner_quality.py, BENCHMARKS.md "Partner"). On chorales held out by
movement, learned as played, a continuation keeps its seed's key more often the longer
its context (order 2: 10 %, as the first-order chain; order 6: 25 %), while the next
note is predicted best at order 1 or 2: the app only plays, it never predicts."""

MAJOR = (0, 2, 4, 5, 7, 9, 11)
MINOR = (0, 2, 3, 5, 7, 8, 10)  # natural minor; harmonic's leading tone is added below


class Symbol(NamedTuple):
    """A note as the model sees it."""

    pitch: int
    length: int
    """Index into :data:`LENGTHS`."""
    loudness: int
    """Index into :data:`LOUDNESS`."""
    gap: int
    """Index into :data:`GAPS`: the onset gap from the note before."""


class Phrase(NamedTuple):
    """What the partner played."""

    notes: list[Note]
    symbols: list[Symbol]
    orders: list[int]
    """The context order each note was chosen at (-1: invented to fit the scale)."""
    join: int = 0
    """For an infill: the order at which its end leads into the right phrase (0: none)."""


def scale(tonic: int, mode: str = "major") -> frozenset[int]:
    """The pitch classes of a key: ``tonic`` 0 = C; ``mode`` major or minor (leading tone too)."""
    if mode not in ("major", "minor"):
        raise ValueError(f"a mode is major or minor, got {mode!r}")
    steps = MAJOR if mode == "major" else (*MINOR, 11)
    return frozenset((tonic + s) % 12 for s in steps)


_TONICS = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}


def key(text: str) -> frozenset[int]:
    """The pitch classes of a key named like ``"D"``, ``"F# minor"``, ``"Bb major"``, ``"Am"``."""
    words = text.strip().lower().replace("-", " ").split()
    if not words or not 1 <= len(words) <= 2 or words[0][0] not in _TONICS:
        raise ValueError(f"a key is a tonic (C, F#, Bb...) and major or minor, got {text!r}")
    tonic, mode = words[0], words[1] if len(words) == 2 else "major"
    if tonic.endswith("m") and len(words) == 1 and len(tonic) > 1:
        tonic, mode = tonic[:-1], "minor"
    pitch = _TONICS[tonic[0]] + tonic[1:].count("#") - tonic[1:].count("b")
    if tonic[1:].strip("#b") or mode not in ("major", "minor", "maj", "min"):
        raise ValueError(f"a key is a tonic (C, F#, Bb...) and major or minor, got {text!r}")
    return scale(pitch % 12, "minor" if mode.startswith("min") else "major")


def _nearest(value: float, table: Sequence[float]) -> int:
    return min(range(len(table)), key=lambda i: abs(math.log(value / table[i])) if table[i] > 0
               else math.inf)


def _loudness(velocity: int) -> int:
    return min(range(len(LOUDNESS)), key=lambda i: abs(LOUDNESS[i] - velocity))


class Partner:
    """A variable-order Markov model of a performer's notes, and the ways to play it."""

    def __init__(self, max_order: int = 4, bpm: float = 120.0, beats_per_bar: int = 4,
                 seed: int | None = None) -> None:
        if max_order < 0:
            raise ValueError(f"an order is 0 or more, got {max_order}")
        self.max_order = max_order
        self.bpm = bpm
        self.beats_per_bar = beats_per_bar
        self.rng = random.Random(seed)
        self.counts: dict[tuple[Symbol, ...], dict[Symbol, int]] = {}
        """Each context seen (0 to ``max_order`` symbols) and what followed it, counted."""
        self._totals: dict[tuple[Symbol, ...], int] = {}

    # -- symbols ------------------------------------------------------------

    def encode(self, phrase: Sequence[Note]) -> list[Symbol]:
        """The symbols of a phrase in onset order (its first gap is taken as its first length)."""
        notes = sorted(phrase)
        beat = 60.0 / self.bpm
        out = []
        for i, n in enumerate(notes):
            length = _nearest(max(n.duration / beat, LENGTHS[0] / 2), LENGTHS)
            if i == 0:
                gap = length + 1
            else:
                ioi = (n.onset - notes[i - 1].onset) / beat
                gap = 0 if ioi < CHORD else _nearest(ioi, GAPS)
            out.append(Symbol(n.pitch, length, _loudness(n.velocity), gap))
        return out

    def decode(self, symbols: Sequence[Symbol], after: float, channel: int = 0,
               source: str = "partner") -> list[Note]:
        """Notes for ``symbols``, the first one gap after the onset ``after``."""
        beat = 60.0 / self.bpm
        onset, out = after, []
        for s in symbols:
            onset += GAPS[s.gap] * beat
            out.append(Note(onset, LENGTHS[s.length] * beat, s.pitch, LOUDNESS[s.loudness],
                            channel, source))
        return out

    # -- learning and scoring -------------------------------------------------

    def learn(self, phrase: Sequence[Note], transpose: Sequence[int] = (0,)) -> None:
        """Count every context of every note of ``phrase`` (up to ``max_order`` notes back).

        ``transpose`` learns it moved by each of these semitones too, as the
        Continuator can (``range(-6, 6)``: in every key); a transposition that
        would leave the MIDI range is skipped.
        """
        symbols = self.encode(phrase)
        for shift in transpose:
            if all(0 <= s.pitch + shift <= 127 for s in symbols):
                self.learn_symbols([s._replace(pitch=s.pitch + shift) for s in symbols]
                                   if shift else symbols)

    def learn_symbols(self, symbols: Sequence[Symbol]) -> None:
        """Count every context of every symbol of one phrase."""
        counts, totals = self.counts, self._totals  # plain dicts: a Counter's miss is slow
        for i, s in enumerate(symbols):
            for k in range(min(self.max_order, i) + 1):
                context = tuple(symbols[i - k:i])
                followers = counts.get(context)
                if followers is None:
                    followers = counts[context] = {}
                followers[s] = followers.get(s, 0) + 1
                totals[context] = totals.get(context, 0) + 1

    def _contexts(self, history: Sequence[Symbol], order: int) -> list[tuple[Symbol, ...]]:
        """The contexts of ``history`` the model has seen, shortest first, up to ``order``."""
        seen = []
        for k in range(min(order, len(history)) + 1):
            context = tuple(history[len(history) - k:])
            if context not in self.counts:
                break  # a longer one has this one as its suffix: not seen either
            seen.append(context)
        return seen

    def probability(self, history: Sequence[Symbol], symbol: Symbol) -> float:
        """P(symbol | history), every order interpolated (Witten-Bell); never 0."""
        return self._interpolate(self._contexts(history, self.max_order), symbol)

    def _interpolate(self, contexts: list[tuple[Symbol, ...]], symbol: Symbol) -> float:
        p = 1.0 / (len(self.counts.get((), ())) + 1)  # uniform over symbols seen, and one unseen
        for context in contexts:
            followers = self.counts[context]
            distinct = len(followers)
            p = (followers.get(symbol, 0) + distinct * p) / (self._totals[context] + distinct)
        return p

    def predict(self, history: Sequence[Symbol]) -> Symbol:
        """The most probable next symbol under :meth:`probability` (ValueError if untrained)."""
        contexts = self._contexts(history, self.max_order)
        if not contexts:
            raise ValueError("the partner has learned nothing")
        unigram = self.counts[()]
        # only followers of a longer context can beat the unigram's favourite
        candidates = {max(unigram, key=unigram.__getitem__)}
        for context in contexts[1:]:
            candidates.update(self.counts[context])
        return max(candidates, key=lambda s: self._interpolate(contexts, s))

    # -- playing --------------------------------------------------------------

    def _choose(self, followers: list[tuple[Symbol, int]], temperature: float,
                density: float) -> Symbol:
        weights = []
        for s, count in followers:
            gap = max(GAPS[s.gap], LENGTHS[0])
            weight = count ** (1.0 / temperature) if temperature > 0 else float(count)
            weights.append(weight * density ** -math.log2(gap))  # density > 1: shorter gaps
        if temperature <= 0:
            return followers[max(range(len(weights)), key=weights.__getitem__)][0]
        return self.rng.choices([s for s, _ in followers], weights)[0]

    def _next(self, history: Sequence[Symbol], order: int, temperature: float, density: float,
              allowed: frozenset[int] | None) -> tuple[Symbol, int]:
        for context in reversed(self._contexts(history, order)):
            followers = [(s, c) for s, c in self.counts[context].items()
                         if allowed is None or s.pitch % 12 in allowed]
            if followers:
                return self._choose(followers, temperature, density), len(context)
        if () not in self.counts or allowed is None:
            raise ValueError("the partner has learned nothing")
        pick = self._choose(list(self.counts[()].items()), temperature, density)
        pitch = min(range(128), key=lambda p: (p % 12 not in allowed, abs(p - pick.pitch)))
        return pick._replace(pitch=pitch), -1

    def generate(self, history: Sequence[Symbol], notes: int | None = None,
                 beats: float | None = None, temperature: float = 1.0, density: float = 1.0,
                 allowed: frozenset[int] | None = None,
                 order: int | None = None) -> tuple[list[Symbol], list[int]]:
        """Symbols after ``history``: ``notes`` of them, or as many as start within ``beats``.

        ``temperature`` 0 plays the most frequent continuation each time.
        """
        if notes is None and beats is None:
            raise ValueError("say how long: notes or beats")
        if density <= 0:
            raise ValueError(f"a density is above 0, got {density}")
        order = self.max_order if order is None else min(order, self.max_order)
        context = list(history)
        symbols: list[Symbol] = []
        orders: list[int] = []
        elapsed = 0.0
        while len(symbols) < (MAX_NOTES if notes is None else notes):
            symbol, used = self._next(context, order, temperature, density, allowed)
            elapsed += GAPS[symbol.gap]
            if beats is not None and elapsed >= beats and symbols:
                break
            symbols.append(symbol)
            orders.append(used)
            context.append(symbol)
        return symbols, orders

    def continue_(self, seed: Sequence[Note], notes: int | None = None, bars: float | None = None,
                  temperature: float = 1.0, density: float = 1.0,
                  allowed: frozenset[int] | None = None, order: int | None = None) -> Phrase:
        """What comes after ``seed``: ``notes`` notes or ``bars`` bars, from its last onset on."""
        beats = None if bars is None else bars * self.beats_per_bar
        history = self.encode(seed)
        symbols, orders = self.generate(history, notes, beats, temperature, density, allowed, order)
        after = max((n.onset for n in seed), default=0.0)
        return Phrase(self.decode(symbols, after), symbols, orders)

    def answer(self, phrase: Sequence[Note], notes: int | None = None, start: float | None = None,
               temperature: float = 1.0, density: float = 1.0,
               allowed: frozenset[int] | None = None, order: int | None = None) -> Phrase:
        """Learn ``phrase``, then answer it in its style: as many notes (or ``notes``).

        The answer's first note falls at ``start`` (default: when the phrase ends).
        """
        self.learn(phrase)
        made = self.continue_(phrase, notes or len(phrase), None, temperature, density,
                              allowed, order)
        begin = max((n.end for n in phrase), default=0.0) if start is None else start
        shift = begin - made.notes[0].onset if made.notes else 0.0
        moved = [n._replace(onset=n.onset + shift) for n in made.notes]
        return made._replace(notes=moved)

    def infill(self, left: Sequence[Note], right: Sequence[Note], notes: int,
               temperature: float = 1.0, allowed: frozenset[int] | None = None,
               tries: int = 64, order: int | None = None) -> Phrase:
        """``notes`` notes after ``left`` that lead into ``right`` and end before it starts.

        Of ``tries`` continuations of ``left`` it keeps the one that leads into
        ``right``'s first note at the highest order, then the one whose end lies
        nearest its onset; ``join`` says the order of that lead-in (0: none found).
        ``order`` caps the contexts it continues from (a lower one when the longest
        always ran into the right phrase).
        """
        if not left or not right:
            raise ValueError("an infill goes between two phrases, each of one note or more")
        history = self.encode(left)
        after = max(n.onset for n in left)
        first = min(right)
        beat = 60.0 / self.bpm
        best: tuple[tuple[int, float], Phrase] | None = None
        for _ in range(tries):
            symbols, orders = self.generate(history, notes, None, temperature, 1.0, allowed,
                                            order)
            made = self.decode(symbols, after)
            room = (first.onset - made[-1].onset) / beat if made else 0.0
            if room < CHORD:
                continue  # runs into the right phrase
            into = self.encode([first])[0]._replace(gap=_nearest(room, GAPS))
            full = history + symbols
            join = max((k for k in range(1, min(self.max_order, len(full)) + 1)
                        if into in self.counts.get(tuple(full[len(full) - k:]), ())), default=0)
            score = (join, -abs(math.log(room / GAPS[into.gap])))
            if best is None or score > best[0]:
                best = (score, Phrase(made, symbols, orders, join))
            if join == min(self.max_order, len(full)) and score[1] == 0:
                break
        if best is None:
            raise ValueError(f"no {notes} notes fit between the phrases")
        return best[1]
