"""Benchmark the knowledge layer: class dump, docs build, search, lookup, history.

Run with ``python -m bench.knowledge`` (about 20 s). It dumps the class library
with a headless sclang, builds the docs index from the installed help plus that
dump into a temporary file, then times 200 varied searches (natural questions,
class and method names, typos, hostile strings), lookups and suggestions, and
the history's writes and searches over 100,000 rows.

Goals: build < 10 s, search < 20 ms (p50 and p99). Prints one figure per line.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from scorch.knowledge.docs_index import DocsIndex
from scorch.knowledge.history import History
from scorch.knowledge.introspect import Introspection, introspect

T = TypeVar("T")

HELP = Path("/usr/share/SuperCollider/HelpSource")

QUESTIONS = [
    "reverb", "how do I make a reverb", "sine oscillator", "delay line feedback",
    "envelope adsr", "random melody pattern", "lowpass filter resonant", "stop all sounds",
    "record to disk", "live coding proxy", "granular synthesis", "play a sound file",
    "midi note on", "buffer", "bus routing", "pan stereo", "noise", "compressor limiter",
    "pitch shift", "fft spectral freeze", "tempo clock", "sequencer pattern", "osc message",
    "load synthdef", "server boot options", "wavetable", "distortion", "chorus flanger",
    "sample rate", "control bus map", "array collect", "string format", "if then else",
    "routine wait", "event default keys", "Pbind dur legato", "multichannel expansion",
    "demand rate", "trigger gate", "audio input microphone",
]
ROWS = 100_000
HOSTILE = ["", "AND", "\"", "*", "NEAR(a b)", "(", "OR NOT", "x" * 10_000, "é", "日本語",
           "col:x", "-", "^a", "\"unterminated", ";DROP TABLE docs;--"]


def percentile(values: list[float], q: float) -> float:
    """Return the q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def timed(call: Callable[[T], object], items: Iterable[T]) -> list[float]:
    """Call ``call`` on each item once; return the durations in milliseconds."""
    out = []
    for item in items:
        started = time.perf_counter()
        call(item)
        out.append((time.perf_counter() - started) * 1000)
    return out


def report(label: str, ms: list[float]) -> None:
    """Print median, p99 and max of ``ms``."""
    print(f"{label:34s} n={len(ms):4d}  p50 {statistics.median(ms):7.2f} ms  "
          f"p99 {percentile(ms, 99):7.2f} ms  max {max(ms):7.2f} ms")


def queries(dump: Introspection, count: int, rng: random.Random) -> list[str]:
    """Return ``count`` varied queries: questions, names, methods, typos, hostile text."""
    names = [c.name for c in dump.classes]
    methods = [m.name for c in dump.classes for m in c.class_methods + c.instance_methods]
    pool = list(QUESTIONS) + list(HOSTILE)
    while len(pool) < count:
        kind = rng.randrange(4)
        if kind == 0:
            pool.append(rng.choice(names))
        elif kind == 1:
            pool.append(rng.choice(methods))
        elif kind == 2:
            name = rng.choice(names)
            cut = rng.randrange(len(name))
            pool.append(name[:cut] + name[cut + 1:])  # a typo
        else:
            pool.append(" ".join(rng.sample(QUESTIONS, 2)))
    return pool[:count]


def main() -> None:
    """Print the knowledge layer's figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(0)

    started = time.monotonic()
    dump = introspect()
    print(f"introspection (headless sclang)     {time.monotonic() - started:7.2f} s total, "
          f"{dump.seconds * 1000:.0f} ms inside sclang, {len(dump.classes)} classes, "
          f"{sum(len(c.class_methods) + len(c.instance_methods) for c in dump.classes)} methods")

    with tempfile.TemporaryDirectory(prefix="scorch-bench-knowledge-") as work:
        index = DocsIndex(Path(work) / "docs.sqlite")
        stats = index.build(HELP if HELP.is_dir() else None, dump.classes, version=dump.version)
        size = (Path(work) / "docs.sqlite").stat().st_size
        print(f"docs build (help + dump)            {stats.seconds:7.2f} s  "
              f"{stats.documents} documents from {stats.help_files} help files, "
              f"{stats.classes_without_help} classes without help, {size / 1e6:.1f} MB"
              + (f"  [{stats.note}]" if stats.note else ""))

        texts = queries(dump, args.queries, rng)
        report("search (cold, first pass)", timed(index.search, texts))
        report("search (warm, second pass)", timed(index.search, texts))
        names = rng.sample([c.name for c in dump.classes], 200)
        report("lookup (class names)", timed(index.lookup, names))
        typos = [n[:-1] + "x" for n in names[:100]]
        report("suggest (typos)", timed(index.suggest, typos))
        index.close()

        history = History(Path(work) / "history.sqlite", max_rows=100_000)
        now = time.time()
        def record(i: int) -> None:
            history.record(now + i, f"room{i % 3}", f"{{ SinOsc.ar({i}) * 0.1 }}.play",
                           "a Synth", "", None if i % 50 else "ERROR: x", 1.0)

        report(f"history record ({ROWS:,} rows)", timed(record, range(ROWS)))
        words = ["SinOsc", "play", "Synth", "123", "ERROR", "nothing-matches"]
        report(f"history search ({ROWS:,} rows)", timed(history.search, words * 20))
        report(f"history search since ({ROWS:,} rows)",
               timed(lambda w: history.search(w, since=now + ROWS - 5), words * 20))
        report("history latest 20", timed(lambda _: history.search(limit=20), range(100)))
        history.close()


if __name__ == "__main__":
    main()
