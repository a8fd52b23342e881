"""Benchmark the partner's model on Bach chorales no one here wrote (music21's own corpus).

Run with ``python -m bench.partner_quality`` (about two minutes, more the
first time, while music21 caches its parses; ``--chorales`` fewer for a quick
look). It reads the chorales bundled inside music21 (each voice is one
phrase), trains on four in five of them and scores the rest, note by note:

- log-likelihood: mean log2 P(next note | what came before), in bits per note
  (closer to 0 is better), with its perplexity;
- accuracy: how often the most probable next note is the real one, whole
  (pitch, length, loudness, onset gap) and by pitch alone;

for the unigram (order 0) and first-order Markov baselines and higher orders,
all with the same Witten-Bell estimator, so the orders are what differ. Then,
for each held-out soprano, it continues the first 16 notes by 16 more and asks
music21's key analysis (Krumhansl-Schmuckler) whether the continuation is in
the seed's key, beside the same question for Bach's own next 16 notes.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.report import write_section
from scorch.notes.capture import Note
from scorch.notes.partner import Partner, Symbol, scale

ORDERS = (0, 1, 2, 3, 4)
PARTNER_ORDER = 4
"""The order the partner plays at by default (scorch.notes.partner.Partner)."""
SEED_NOTES = CONTINUATION = 16
TRIES = 5
"""Continuations of each seed whose key is asked."""
PITCH_CLASSES = {name: pc for pc, names in enumerate(
    ("C B#", "C# D-", "D", "E- D#", "E F-", "F E#", "F# G-", "G", "G# A-", "A", "B- A#", "B C-"))
    for name in names.split()}
"""music21's tonic names (flats written ``-``) to pitch classes."""


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


@dataclass
class Score:
    """One model's figures on the held-out notes."""

    bits: float = 0.0
    hits: int = 0
    pitch_hits: int = 0
    notes: int = 0

    def add(self, model: Partner, history: Sequence[Symbol], actual: Symbol) -> None:
        self.bits += math.log2(model.probability(history, actual))
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


def score_order(order: int, keys_too: bool, transpose: Sequence[int], train: list[list[Note]],
                held: list[list[list[Note]]],
                seed: int) -> tuple[Score, dict[str, tuple[int, int]]]:
    """One model's held-out score, and its continuations' key agreement (hits, same signature)."""
    model = Partner(max_order=order, bpm=60.0, seed=seed)
    for voice in train:
        model.learn(voice, transpose)
    score = Score()
    for voices in held:
        for voice in voices:
            symbols = model.encode(voice)
            for j, actual in enumerate(symbols):
                score.add(model, symbols[:j], actual)
    agreement: dict[str, tuple[int, int]] = {}
    if keys_too:
        for constrained in (False, True) if order == PARTNER_ORDER else (False,):
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
            agreement["constrained" if constrained else "free"] = (hits, same_signature)
    return score, agreement


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chorales", type=int, default=100, help="how many to read (of 413)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print, leave BENCHMARKS.md")
    args = parser.parse_args()

    began = time.perf_counter()
    corpus = chorales(args.chorales)
    read = time.perf_counter() - began
    train = [voice for i, (_, voices) in enumerate(corpus) if i % 5 != 4 for voice in voices]
    held = [voices for i, (_, voices) in enumerate(corpus) if i % 5 == 4]
    names = {0: "unigram (order 0, baseline)", 1: "first-order Markov (baseline)"}
    rows = ["| model | learned as played: bits per note | accuracy | pitch accuracy "
            "| in all 12 keys: bits per note | perplexity | accuracy | pitch accuracy |",
            "|---|---|---|---|---|---|---|---|"]
    key_rows = ["| continuation of the first 16 soprano notes (learned in all 12 keys) "
                "| same key | same key signature |", "|---|---|---|"]
    bach = bach_signature = 0
    for voices in seeded(held):
        want = key_of(voices[0][:SEED_NOTES])
        real = key_of(voices[0][SEED_NOTES:SEED_NOTES + CONTINUATION])
        bach += real[:2] == want[:2]
        bach_signature += real[2] == want[2]
    n = len(seeded(held))
    key_rows.append(f"| Bach's own next 16 notes (reference) | {bach / n:.0%} "
                    f"| {bach_signature / n:.0%} |")
    notes = 0
    for order in ORDERS:
        cells = []
        for transpose in ((0,), range(-6, 6)):
            keys_too = len(transpose) > 1 and order in (0, 1, PARTNER_ORDER)
            score, agreement = score_order(order, keys_too, transpose, train, held, args.seed)
            bits = score.bits / score.notes
            notes = score.notes
            cells.append(f"{bits:.2f} | " + (f"{2 ** -bits:.1f} | " if len(transpose) > 1 else "")
                         + f"{score.hits / notes:.1%} | {score.pitch_hits / notes:.1%}")
            for how, (hits, signature) in agreement.items():
                who = names.get(order, f"the partner (order {order})").replace(" (baseline)", "")
                if how == "constrained":
                    who += ", constrained to the seed's key"
                key_rows.append(f"| {who} | {hits / n / TRIES:.0%} "
                                f"| {signature / n / TRIES:.0%} |")
        name = names.get(order, f"variable order, up to {order}")
        if order == PARTNER_ORDER:
            name += " (the partner's default)"
        rows.append(f"| {name} | {' | '.join(cells)} |")
        print(rows[-1], flush=True)
    elapsed = time.perf_counter() - began

    n_train = sum(len(v) for v in train)
    section = "\n".join([
        "## Partner",
        "",
        f"`.venv/bin/python -m bench.partner_quality --chorales {args.chorales}` "
        f"({time.strftime('%Y-%m-%d')}, {elapsed:.0f} s of which {read:.0f} s reading; "
        f"{time.process_time():.0f} s of CPU; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores): "
        f"the first {len(corpus)} of the Bach chorales bundled in music21, each voice one "
        f"phrase; trained on the voices of four chorales in five ({len(train)} voices, "
        f"{n_train} notes), scored on the {len(held)} others ({notes} notes), predicting each "
        "note from those before it. A note is (pitch, length class, loudness class, "
        "onset-gap class); every model is the partner's Witten-Bell estimate at its order, "
        "so only the order differs. Bits per note: mean log2 P(actual next note), closer to "
        "0 is better; accuracy: the most probable next note is the actual one (whole, or by "
        "pitch). \"In all 12 keys\": each phrase also learned transposed from -6 to +5 "
        "semitones (`Partner.learn(phrase, transpose=range(-6, 6))`), as the Continuator does.",
        "",
        *rows,
        "",
        f"Key agreement ({n} held-out sopranos, {TRIES} continuations of each; music21's "
        "Krumhansl-Schmuckler analysis of the first 16 notes and of the 16 after them; same "
        "key = same tonic and mode, same key signature also counts the relative key; "
        "temperature 1):",
        "",
        *key_rows,
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
