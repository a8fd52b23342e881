"""Time the audio analysis and picture of 3 s of 48 kHz stereo (``python -m bench.audio.analysis``).

Each is run 20 times on the same sound after one warm-up call (which pays for
the imports); the median is printed, with the fastest and slowest. The sound
is a kick pattern over a detuned sawtooth pad, slightly different in each
channel, so every part of the analysis has work to do.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.report import write_section

RATE = 48000
SECONDS = 3.0


def stereo_mix() -> Any:
    """Return 3 s of stereo: four kicks over a pad, the right channel a little delayed."""
    import numpy as np

    t = np.arange(round(SECONDS * RATE)) / RATE
    pad = sum(0.1 * np.sin(2 * np.pi * hz * n * t) / n
              for hz in (219.3, 220.7, 330.0) for n in range(1, 20))
    kicks = np.zeros(len(t))
    for start in (0.0, 0.5, 1.0, 1.5):
        first = round(start * RATE)
        hit = t[: round(0.4 * RATE)]
        kicks[first : first + len(hit)] += 0.7 * np.sin(2 * np.pi * 55 * hit) * np.exp(-hit / 0.08)
    mono = kicks + pad * np.minimum(t / 0.5, 1.0)
    return np.stack([mono, np.roll(mono, 24)], axis=1).astype(np.float32)


def timed(call: Callable[[], object], runs: int) -> list[float]:
    """Return the wall-clock milliseconds of ``runs`` calls, after one warm-up call."""
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    from scorch.audio.analysis import analyse
    from scorch.audio.picture import picture

    samples = stereo_mix()
    report = analyse(samples, RATE)
    rows = []
    for name, call in (("analyse", lambda: analyse(samples, RATE)),
                       ("picture", lambda: picture(samples, RATE, "bench: kicks over a pad"))):
        times = timed(call, args.runs)
        rows.append(f"| `{name}` | median {statistics.median(times):.1f} ms "
                    f"(min {min(times):.1f}, max {max(times):.1f}; {args.runs} runs) |")
    section = "\n".join([
        "## Audio analysis",
        "",
        f"`.venv/bin/python -m bench.audio.analysis --runs {args.runs}` "
        f"({time.strftime('%Y-%m-%d')}): {SECONDS:g} s of {samples.shape[1]}-channel "
        f"{samples.dtype} at {RATE} Hz (four kicks over a pad), after one warm-up call.",
        f"It reads: \"{report.summary}\"",
        "",
        "| what | time |",
        "|---|---|",
        *rows,
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
