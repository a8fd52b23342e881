"""Benchmark the knowledge layer: docs build, the check at start, search, lookup, history.

Run with ``python -m bench.knowledge`` (about 30 s). It runs the docs builder as
scorch does (``python -m scorch.knowledge.build``, a child process: a headless
sclang dumps the class library, the installed help is parsed, the index is
written) into a temporary file, then again with nothing changed, times the
in-process stamp check a start does, then 200 varied searches (natural
questions, class and method names, typos, hostile strings), lookups and
suggestions, and the history's writes and searches over 100,000 rows. Writes
the "Knowledge" section of BENCHMARKS.md (``--no-write`` leaves it alone).

Goals: build < 10 s, search < 20 ms (p50 and p99).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from bench.report import write_section
from scorch.knowledge.build import SOURCES
from scorch.knowledge.docs_index import DocsIndex
from scorch.knowledge.history import History
from scorch.knowledge.introspect import Introspection, introspect
from scorch.knowledge.sources import Sources, stamp

T = TypeVar("T")

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


def spread(ms: list[float]) -> str:
    """Return median, p99 and max of ``ms`` as one figure."""
    return (f"p50 {statistics.median(ms):.2f} ms, p99 {percentile(ms, 99):.2f} ms, "
            f"max {max(ms):.2f} ms (n={len(ms)})")


def goal(ms: list[float], limit: float) -> str:
    """Say whether p50 and p99 are under ``limit`` milliseconds."""
    met = statistics.median(ms) < limit and percentile(ms, 99) < limit
    return f"< {limit:g} ms: {'met' if met else 'MISSED'}"


def run_builder(index: Path) -> tuple[float, dict[str, Any]]:
    """Run the docs builder as scorch does; return its wall time and its report."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "scorch.knowledge.build", str(index)],
                          capture_output=True, text=True, check=True, timeout=300)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return time.monotonic() - started, report


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


def main() -> int:
    """Measure, print and record the knowledge layer's figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-write", action="store_true", help="leave BENCHMARKS.md alone")
    args = parser.parse_args()
    rng = random.Random(0)
    rows: list[tuple[str, str, str]] = []
    load = os.getloadavg()[0]  # the machine is shared: say how busy it was

    started = time.monotonic()
    dump = introspect()
    methods = sum(len(c.class_methods) + len(c.instance_methods) for c in dump.classes)
    rows.append(("class library dump (headless sclang, alone)",
                 f"{time.monotonic() - started:.2f} s, {dump.seconds * 1000:.0f} ms of it inside "
                 f"sclang; {len(dump.classes)} classes, {methods} methods", ""))

    with tempfile.TemporaryDirectory(prefix="scorch-bench-knowledge-") as work:
        path = Path(work) / "docs.sqlite"
        wall, built = run_builder(path)
        rows.append(("docs build: builder process, first run (dump + help + index)",
                     f"{wall:.2f} s wall ({built['introspection_seconds']:.2f} s dump, "
                     f"{built['build_seconds']:.2f} s index); {built['documents']} documents, "
                     f"{path.stat().st_size / 1e6:.1f} MB", f"< 10 s: "
                     f"{'met' if wall < 10 else 'MISSED'}"))
        wall, again = run_builder(path)
        rows.append(("docs check: builder process, nothing changed", f"{wall:.2f} s wall, "
                     f"rebuilt: {again['rebuilt']}", ""))
        index = DocsIndex(path)
        sources = Sources.from_json(index.meta()[SOURCES])
        checks = timed(lambda _: stamp(sources), range(20))
        rows.append(("docs check at start: stamp of the sources, in process "
                     "(no child when current)", spread(checks), ""))

        texts = queries(dump, args.queries, rng)
        cold = timed(index.search, texts)
        warm = timed(index.search, texts)
        rows.append(("search, first pass (questions, names, typos, hostile text)", spread(cold),
                     goal(cold, 20)))
        rows.append(("search, second pass", spread(warm), goal(warm, 20)))
        names = rng.sample([c.name for c in dump.classes], 200)
        rows.append(("lookup of a class name", spread(timed(index.lookup, names)), ""))
        typos = [n[:-1] + "x" for n in names[:100]]
        rows.append(("closest names for a typo", spread(timed(index.suggest, typos)), ""))
        index.close()

        history = History(Path(work) / "history.sqlite", max_rows=ROWS)
        now = time.time()

        def record(i: int) -> None:
            history.record(now + i, f"room{i % 3}", f"{{ SinOsc.ar({i}) * 0.1 }}.play",
                           "a Synth", "", None if i % 50 else "ERROR: x", 1.0)

        rows.append((f"history record (to {ROWS:,} rows)", spread(timed(record, range(ROWS))),
                     ""))
        words = ["SinOsc", "play", "Synth", "123", "ERROR", "nothing-matches"]
        rows.append((f"history search ({ROWS:,} rows)",
                     spread(timed(history.search, words * 20)), ""))
        rows.append((f"history search with since ({ROWS:,} rows)", spread(timed(
            lambda w: history.search(w, since=now + ROWS - 5), words * 20)), ""))
        rows.append(("history, latest 20", spread(timed(lambda _: history.search(limit=20),
                                                         range(100))), ""))
        history.close()

    section = "\n".join([
        "## Knowledge", "",
        f"`.venv/bin/python -m bench.knowledge` ({time.strftime('%Y-%m-%d')}): "
        f"SuperCollider {dump.version}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {load:.1f} at the start.", "",
        "| what | figure | goal |", "|---|---|---|",
        *(f"| {what} | {figure} | {aim} |" for what, figure, aim in rows), "",
        "scorch runs the builder in the background once the rooms are READY, at niceness 10,",
        "and only when the stamp of its sources (the sclang binary, the person's",
        "sclang_conf.yaml, the library's .sc files and the .schelp files) changed; a `docs`",
        "call meanwhile waits for the first build within its timeout. Searches mix 40",
        "questions, 15 hostile strings, class and method names, typos and pairs of",
        "questions. History rows are written one transaction each, in WAL mode.", "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
