"""Benchmark the partner's model on Bach chorales no one here wrote (music21's own corpus).

Run with ``python -m bench.partner_quality`` (several minutes, more the first
time, while music21 caches its parses; ``--chorales`` fewer for a quick look).
It reads the chorales bundled inside music21 (each voice is one phrase) and
holds out one movement in five: a movement's versions (``bwv18.5-lz`` and
``bwv18.5-w``, ``bwv190.7`` and ``bwv190.7-inst``) all fall on one side, so no
held-out voice was trained in another version. It scores the held-out notes one
by one:

- cross-entropy: mean -log2 P(next note | what came before), in bits per note
  (lower is better), with its perplexity;
- accuracy: how often the most probable next note is the real one, whole
  (pitch, length, loudness, onset gap) and by pitch alone;

for the unigram (order 0) and first-order Markov baselines and every order up to
the one the partner keeps (:data:`scorch.notes.partner.MAX_ORDER`), all with the same
Witten-Bell estimator, each learned as played (what ships) and in all 12 keys.
Then, for each held-out soprano, it continues the first 16 notes by 16 more and
asks music21's key analysis (Krumhansl-Schmuckler) whether the continuation is in
the seed's key, beside the same question for Bach's own next 16 notes: every
order learned as played, and the baselines and the partner's default in all 12
keys, each free and each constrained to the seed's key.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.report import write_section
from scorch.notes.capture import Note
from scorch.notes.partner import DEFAULT_ORDER, MAX_ORDER, Partner, Symbol, scale

ORDERS = tuple(range(MAX_ORDER + 1))
LEARNING: dict[str, Sequence[int]] = {"learned as played": (0,),
                                      "in all 12 keys": range(-6, 6)}
"""How each model learns a phrase: as played (what the partner does), or transposed to
every key too (``Partner.learn(phrase, transpose=range(-6, 6))``, as the Continuator can)."""
SEED_NOTES = CONTINUATION = 16
TRIES = 5
"""Continuations of each seed whose key is asked."""
PITCH_CLASSES = {name: pc for pc, names in enumerate(
    ("C B#", "C# D-", "D", "E- D#", "E F-", "F E#", "F# G-", "G", "G# A-", "A", "B- A#", "B C-"))
    for name in names.split()}
"""music21's tonic names (flats written ``-``) to pitch classes."""
_MOVEMENT = re.compile(r"^(bwv\d+(?:\.\d+)?)")


def movement(stem: str) -> str:
    """The movement a chorale's file is a version of: ``bwv18.5-lz`` -> ``bwv18.5``."""
    found = _MOVEMENT.match(stem)
    return found.group(1) if found else stem.partition("-")[0]


def chorales(count: int) -> list[tuple[str, list[list[Note]]]]:
    """The first ``count`` Bach chorales in music21's corpus: name and one phrase per voice."""
    from music21 import corpus

    paths = sorted(p for p in corpus.getComposer("bach") if p.name.startswith("bwv"))
    out = []
    for path in paths[:count]:
        score = corpus.parse(path)
        voices = []
        for part in score.parts:
            notes: list[Note] = []
            for n in part.flatten().notes:
                onset, length = float(n.offset), float(n.quarterLength)
                if length <= 0:
                    continue  # a grace note
                pitch = max(p.midi for p in n.pitches)  # a divided voice: its top
                if n.tie is not None and n.tie.type in ("stop", "continue") and notes \
                        and notes[-1].pitch == pitch:  # tied on: one longer note
                    notes[-1] = notes[-1]._replace(duration=onset + length - notes[-1].onset)
                    continue
                notes.append(Note(onset, length, pitch, 80))
            if len(notes) > 1:
                voices.append(notes)
        out.append((path.stem, voices))
    return out


def split(corpus: list[tuple[str, list[list[Note]]]]
          ) -> tuple[list[list[Note]], list[list[list[Note]]], list[str]]:
    """Training voices, held-out chorales and the held-out movements: one movement in five
    (in catalogue order) held out with all its versions."""
    movements = sorted({movement(name) for name, _ in corpus},
                       key=lambda m: [float(x) for x in re.findall(r"\d+", m)] or [math.inf])
    held_out = {m for i, m in enumerate(movements) if i % 5 == 4}
    train = [v for name, voices in corpus if movement(name) not in held_out for v in voices]
    held = [voices for name, voices in corpus if movement(name) in held_out]
    trained = {movement(name) for name, _ in corpus} - held_out
    assert not trained & held_out, "a movement on both sides"
    return train, held, sorted(held_out)


@dataclass
class Score:
    """One model's figures on the held-out notes."""

    bits: float = 0.0
    """The sum of -log2 P(actual note): positive."""
    hits: int = 0
    pitch_hits: int = 0
    notes: int = 0

    def add(self, model: Partner, history: Sequence[Symbol], actual: Symbol) -> None:
        self.bits -= math.log2(model.probability(history, actual))
        guess = model.predict(history)
        self.hits += guess == actual
        self.pitch_hits += guess.pitch == actual.pitch
        self.notes += 1


def key_of(notes: Sequence[Note]) -> tuple[str, str, int]:
    """music21's key of a melody: tonic, mode and key signature (sharps)."""
    from music21 import key, note, stream

    melody: stream.Stream = stream.Stream()
    for n in notes:
        melody.append(note.Note(n.pitch, quarterLength=max(0.25, n.duration)))
    found = melody.analyze("key")
    assert isinstance(found, key.Key)
    return found.tonic.name, found.mode, found.sharps


def seeded(held: list[list[list[Note]]]) -> list[list[list[Note]]]:
    """The held-out chorales whose soprano is long enough for a seed and its continuation."""
    return [voices for voices in held if len(voices[0]) >= SEED_NOTES + CONTINUATION]


def trained(order: int, transpose: Sequence[int], train: list[list[Note]],
            seed: int) -> Partner:
    """A model of ``order`` that learned every training voice."""
    model = Partner(max_order=order, bpm=60.0, seed=seed)
    for voice in train:
        model.learn(voice, transpose)
    return model


def scored(model: Partner, held: list[list[list[Note]]]) -> Score:
    """The model's figures on every held-out note, each predicted from its voice before it."""
    score = Score()
    for voices in held:
        for voice in voices:
            symbols = model.encode(voice)
            for j, actual in enumerate(symbols):
                score.add(model, symbols[:j], actual)
    return score


def agreement(model: Partner, held: list[list[list[Note]]],
              constrained: bool) -> tuple[int, int]:
    """Continuations in the seed's key, and with its key signature, of :data:`TRIES` each."""
    hits = same_signature = 0
    for voices in seeded(held):
        seed_notes = voices[0][:SEED_NOTES]
        tonic, mode, sharps = key_of(seed_notes)
        allowed = scale(PITCH_CLASSES[tonic], mode) if constrained else None
        for _ in range(TRIES):
            made = model.continue_(seed_notes, notes=CONTINUATION, allowed=allowed)
            got = key_of(made.notes)
            hits += got[:2] == (tonic, mode)
            same_signature += got[2] == sharps
    return hits, same_signature


def name_of(order: int) -> str:
    """A model's name in the tables."""
    if order == 0:
        return "unigram (order 0, baseline)"
    if order == 1:
        return "first-order Markov (baseline)"
    marks = [m for o, m in ((DEFAULT_ORDER, "the partner's default"),
                            (MAX_ORDER, "the longest it keeps")) if o == order]
    return f"variable order, up to {order}" + (f" ({', '.join(marks)})" if marks else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chorales", type=int, default=100, help="how many to read (of 413)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print, leave BENCHMARKS.md")
    args = parser.parse_args()

    began = time.perf_counter()
    corpus = chorales(args.chorales)
    read = time.perf_counter() - began
    train, held, held_out = split(corpus)
    n = len(seeded(held))
    rows = ["| model | " + " | ".join(
        f"{how}: bits per note | perplexity | accuracy | pitch accuracy" for how in LEARNING)
        + " |", "|---|" + "---|" * 4 * len(LEARNING)]
    bach = bach_signature = 0
    for voices in seeded(held):
        want = key_of(voices[0][:SEED_NOTES])
        real = key_of(voices[0][SEED_NOTES:SEED_NOTES + CONTINUATION])
        bach += real[:2] == want[:2]
        bach_signature += real[2] == want[2]
    key_rows = ["| continuation of the first 16 soprano notes | learned | same key "
                "| same key signature |", "|---|---|---|---|",
                f"| Bach's own next 16 notes (reference) | | {bach / n:.0%} "
                f"| {bach_signature / n:.0%} |"]
    notes = 0
    for order in ORDERS:
        cells = []
        for how, transpose in LEARNING.items():
            model = trained(order, transpose, train, args.seed)
            score = scored(model, held)
            notes = score.notes
            bits = score.bits / notes
            cells.append(f"{bits:.2f} | {2 ** bits:.1f} | {score.hits / notes:.1%} "
                         f"| {score.pitch_hits / notes:.1%}")
            if len(transpose) == 1 or order in (0, 1, DEFAULT_ORDER, MAX_ORDER):
                for constrained in (False, True):
                    hits, signature = agreement(model, held, constrained)
                    who = name_of(order).replace(", baseline", "").replace(
                        " (baseline)", "") + (
                        ", constrained to the seed's key" if constrained else "")
                    key_rows.append(f"| {who} | {how} | {hits / n / TRIES:.0%} "
                                    f"| {signature / n / TRIES:.0%} |")
        rows.append(f"| {name_of(order)} | {' | '.join(cells)} |")
        print(rows[-1], flush=True)
    elapsed = time.perf_counter() - began

    section = "\n".join([
        "## Partner",
        "",
        f"`.venv/bin/python -m bench.partner_quality --chorales {args.chorales}` "
        f"({time.strftime('%Y-%m-%d')}, {elapsed:.0f} s of which {read:.0f} s reading; "
        f"{time.process_time():.0f} s of CPU; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores): the first {len(corpus)} of the Bach chorales bundled in "
        "music21, each voice one phrase. Held out by movement: one movement in five in "
        f"catalogue order ({len(held_out)} movements, {len(held)} files: "
        f"{', '.join(held_out[:6])}...), every version of a movement on the same side "
        "(bwv18.5-lz with bwv18.5-w); trained on the other "
        f"{len(corpus) - len(held)} files ({len(train)} voices, "
        f"{sum(len(v) for v in train)} notes), scored on the held-out ones ({notes} notes), "
        "each note predicted from those before it in its voice. A note is (pitch, length "
        "class, loudness class, onset-gap class); every model is the partner's Witten-Bell "
        "estimate at its order, so only the order and the learning differ. Bits per note: "
        "the cross-entropy, mean -log2 P(actual next note), lower is better; perplexity "
        "2^bits; accuracy: the most probable next note is the actual one (whole, or by "
        "pitch). Learned as played: what the partner does (`scorch/app/partner.py`); in "
        "all 12 keys: each phrase also learned transposed from -6 to +5 semitones.",
        "",
        *rows,
        "",
        f"Key agreement ({n} held-out sopranos, {TRIES} continuations of each at "
        "temperature 1, from the model's longest context; music21's Krumhansl-Schmuckler "
        "analysis of the first 16 notes and of the 16 after them; same key = same tonic "
        "and mode, same key signature also counts the relative key; constrained: the "
        "continuations keep to the seed's scale, as `key` makes the partner do):",
        "",
        *key_rows,
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
