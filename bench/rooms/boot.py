"""Foundation benchmark: boot wall time, and what scorch adds to an sclang round trip.

Run: ``.venv/bin/python -m bench.rooms.boot``. Prints
- wall time from starting ``scorch run`` to its status table (every instance
  READY), for 1 and 4 instances, median of several runs;
- ``execute`` round trip for trivial code through the Orchestra, against a bare
  sclang stdin pipe measured in the same run (goal: under 1 ms added at the median).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.sclang.interpreter import SCLANG_ENV
from scorch.primitives.system.process import DIE_WITH_PARENT

#: Its own JACK server; SCORCH_TEST_JACK keeps two checkouts' runs apart, as in the tests.
JACK = os.environ.get("SCORCH_TEST_JACK", "scorch-bench") + "-boot"


def config_text(state: Path, rooms: int) -> str:
    body = "".join(f"\n[instances.room{i}]\nsynthdefs = [\"sine\"]\n" for i in range(rooms))
    return f'state_dir = "{state}"\n[audio]\ndriver = "dummy"\njack_server = "{JACK}"\n{body}'


def boot_once(tmp: Path, rooms: int) -> float:
    """Seconds from spawning ``scorch run`` to the last row of its status table."""
    path = tmp / f"boot{rooms}.toml"
    path.write_text(config_text(tmp / "state", rooms))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=DIE_WITH_PARENT)
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(2 + rooms)]
    took = time.monotonic() - started
    assert all("READY" in line for line in lines[2:]), lines
    proc.terminate()
    proc.wait(timeout=30)
    return took


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def bare_sclang_round_trips(count: int) -> list[float]:
    """Round trips of ``1`` through a plain sclang stdin pipe: write, read ``-> 1``."""
    proc = subprocess.Popen(["sclang", "-i", "scorch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, **SCLANG_ENV}, preexec_fn=DIE_WITH_PARENT)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line in iter(proc.stdout.readline, b""):
            if b"Welcome to SuperCollider" in line:
                break
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            proc.stdin.write(b"1\x0c")
            proc.stdin.flush()
            while proc.stdout.readline().rstrip() != b"-> 1":
                pass
            samples.append(time.perf_counter() - started)
        return samples
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=10)


def orchestra_round_trips(tmp: Path, count: int) -> list[float]:
    path = tmp / "exec.toml"
    path.write_text(config_text(tmp / "state", 1))
    orch = Orchestra(parse_config(path.read_text(), path))
    try:
        orch.start()
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            result = orch.rooms.execute_one("room0", "1")
            samples.append(time.perf_counter() - started)
            assert result.ok and result.value == "1"
        return samples
    finally:
        orch.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="boots per size")
    parser.add_argument("--count", type=int, default=500, help="round trips per side")
    parser.add_argument("--no-write", action="store_true", help="leave BENCHMARKS.md alone")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scorch-bench-boot-"))
    rows = []
    for rooms in (1, 4):
        times = [boot_once(tmp, rooms) for _ in range(args.runs)]
        rows.append((f"`scorch run` to all {rooms} instance(s) READY (status table printed)",
                     f"median {statistics.median(times):.2f} s (min {min(times):.2f}, "
                     f"max {max(times):.2f}; {args.runs} runs)"))
    # Interleave the two sides in halves so machine noise lands on both.
    half = args.count // 2
    bare = bare_sclang_round_trips(half)
    scorch = orchestra_round_trips(tmp, half)
    bare += bare_sclang_round_trips(half)
    scorch += orchestra_round_trips(tmp, half)
    b50, b99 = percentiles(bare)
    s50, s99 = percentiles(scorch)
    rows += [
        ("`execute` of `1`, bare sclang stdin pipe (baseline)",
         f"median {b50 * 1e3:.3f} ms, p99 {b99 * 1e3:.3f} ms ({len(bare)} samples)"),
        ("`execute` of `1` through the Orchestra",
         f"median {s50 * 1e3:.3f} ms, p99 {s99 * 1e3:.3f} ms ({len(scorch)} samples)"),
        ("added by scorch at the median",
         f"{(s50 - b50) * 1e3:.3f} ms (goal < 1 ms: {'met' if s50 - b50 < 1e-3 else 'MISSED'});"
         f" {s50 / b50:.1f}x the bare pipe"),
    ]
    section = "\n".join([
        "## Foundation", "",
        f"`.venv/bin/python -m bench.rooms.boot` ({time.strftime('%Y-%m-%d')}):", "",
        "| what | figure |", "|---|---|", *(f"| {what} | {figure} |" for what, figure in rows),
        "",
        "Boot includes Python start-up, the SynthDef library (cached), a private jackd and,",
        "per instance, scsynth (about 0.1 s to `server ready`) and sclang (about 0.5 s to its",
        "welcome, then the attach). Instances boot in parallel.", "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
