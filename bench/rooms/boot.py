"""Foundation benchmark: boot against the bare floor, and what scorch adds to a round trip.

Run: ``.venv/bin/python -m bench.rooms.boot``. Prints
- per number of rooms (1, 4, 8, 12), interleaved run by run on one JACK server:
  the bare floor (N scsynth + N sclang started at once, each sclang attached,
  :mod:`bench.rooms.floor`) and ``scorch run`` to its status table with every room
  READY; their medians, scorch / floor per run (goal: <= 1.3 at 4, 8 and 12 rooms,
  every run), and the attaches that had to ask scsynth again (0 expected);
- ``execute`` round trip for trivial code through the Orchestra, against a bare
  sclang stdin pipe measured in the same run (goal: under 1 ms added at the median).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.report import write_section
from bench.rooms.floor import floor_once, shared_jackd
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.sclang.launch import SCLANG_ENV
from scorch.primitives.system.process import DIE_WITH_PARENT

#: Its own JACK server; SCORCH_TEST_JACK keeps two checkouts' runs apart, as in the tests.
JACK = os.environ.get("SCORCH_TEST_JACK", "scorch-bench") + "-boot"
#: The goal: scorch within this factor of the floor at these sizes, every run.
GOAL, GOAL_SIZES = 1.3, (4, 8, 12)
#: What scorch logs when an attach asked scsynth again, or a room's boot failed.
ASKED_AGAIN = r"more time\(s\) before its login was confirmed"
RESTARTED = r"RESTARTING: restarting sclang|BOOT_FAILED"


def config_text(state: Path, rooms: int, jack: str | None = None) -> str:
    """``rooms`` rooms; on the running JACK server ``jack``, or a private headless one."""
    body = "".join(f"\n[instances.room{i}]\nsynthdefs = [\"sine\"]\n" for i in range(rooms))
    driver = "jack" if jack else "dummy"
    return (f'state_dir = "{state}"\n[audio]\ndriver = "{driver}"\n'
            f'jack_server = "{jack or JACK}"\n{body}')


@dataclass
class ScorchRun:
    """One ``scorch run`` to every room READY."""

    seconds: float
    asked_again: int
    """Attaches that asked scsynth again before it confirmed the login."""
    restarts: int
    """sclangs restarted (or rooms failed) during the boot."""


def boot_once(tmp: Path, rooms: int, jack: str | None = None) -> ScorchRun:
    """Seconds from spawning ``scorch run`` to the last row of its status table."""
    path = tmp / f"boot{rooms}.toml"
    path.write_text(config_text(tmp / "state", rooms, jack))
    log = tmp / f"boot{rooms}.log"
    with open(log, "w") as err:
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config",
                                 str(path)], stdout=subprocess.PIPE, stderr=err, text=True,
                                preexec_fn=DIE_WITH_PARENT)
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2 + rooms)]
        took = time.monotonic() - started
        proc.terminate()
        proc.wait(timeout=30)
    assert all("READY" in line for line in lines[2:]), lines
    text = log.read_text(errors="replace")
    return ScorchRun(took, len(re.findall(ASKED_AGAIN, text)), len(re.findall(RESTARTED, text)))


def floor_rows(tmp: Path, sizes: list[int], runs: int) -> list[tuple[str, str]]:
    """Interleave floor and scorch boots run by run at each size; one row per size."""
    rows = []
    with shared_jackd(JACK + "-shared") as jack:
        for rooms in sizes:
            floors, scorches = [], []
            for _ in range(runs):
                floors.append(floor_once(rooms, jack))
                scorches.append(boot_once(tmp, rooms, jack))
            ratios = [s.seconds / f.seconds for s, f in zip(scorches, floors, strict=True)]
            asked = sum(s.asked_again for s in scorches)
            restarts = sum(s.restarts for s in scorches)
            goal = ""
            if rooms in GOAL_SIZES:
                goal = f" (goal <= {GOAL}: {'met' if max(ratios) <= GOAL else 'MISSED'})"
            rows.append((
                f"{rooms} room(s): floor / `scorch run` to all READY",
                f"median {statistics.median(f.seconds for f in floors):.2f} s / "
                f"{statistics.median(s.seconds for s in scorches):.2f} s; scorch/floor "
                f"median {statistics.median(ratios):.2f}, max {max(ratios):.2f}{goal}; "
                f"attaches asked again: {asked}, restarts: {restarts}; bare sclangs that "
                f"logged in again: {sum(f.relogins for f in floors)} ({runs} runs each)"))
            print(rows[-1][0], "|", rows[-1][1], flush=True)
    return rows


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
    parser.add_argument("--runs", type=int, default=5, help="boots per size and side")
    parser.add_argument("--sizes", default="1,4,8,12", help="numbers of rooms")
    parser.add_argument("--count", type=int, default=500, help="round trips per side")
    parser.add_argument("--no-write", action="store_true", help="leave BENCHMARKS.md alone")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scorch-bench-boot-"))
    load_before = os.getloadavg()
    rows = floor_rows(tmp, [int(n) for n in args.sizes.split(",")], args.runs)
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
    load = ", ".join(f"{x:.1f}" for x in (*load_before, *os.getloadavg()[:1]))
    section = "\n".join([
        "## Foundation", "",
        f"`.venv/bin/python -m bench.rooms.boot --runs {args.runs} --sizes {args.sizes}` "
        f"({time.strftime('%Y-%m-%d')}; load average before 1/5/15 min, then after: "
        f"{load}):", "",
        "| what | figure |", "|---|---|", *(f"| {what} | {figure} |" for what, figure in rows),
        "",
        "Floor and scorch boot on one headless jackd started for the run (scorch joins it:",
        "driver `jack`), alternating run by run. The floor spawns N scsynth + N sclang at",
        "once; each sclang attaches `Server.remote` (alive thread at 0.02 s) once its welcome",
        "is posted, and the floor ends at the last confirmed login. scorch's time runs from",
        "spawning `scorch run` (Python start-up and imports included) to its status table.",
        "\"Attaches asked again\": scorch's login (`Scorch.login`) asks scsynth at once and",
        "again every 0.5 s until it answers; each extra ask is logged, and counted here.",
        "\"Bare sclangs that logged in again\": SuperCollider's own status watcher sent a",
        "second /notify before the first was answered (it posts \"a login after a loss of",
        "network contact\"): common under load, harmless, not a loss.",
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
