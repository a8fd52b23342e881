"""Idle benchmark: what ``scorch run`` costs with rooms that do nothing, and how often it wakes.

Run: ``.venv/bin/python -m bench.idle [--seconds 60] [--rooms 1 4 12]``. For each
count of rooms, starts ``scorch run`` (its own JACK dummy server, no client, no MIDI
played, docs built on demand so no builder runs), waits for every room READY and a
settling pause, then measures over ``--seconds``:
- CPU of scorch's own process (utime + stime of /proc/PID/stat: its threads, not
  its children scsynth and sclang), as % of one core;
- its context switches per second, voluntary (the wake-ups of waits and sleeps) and
  not, summed over /proc/PID/task/*/status, with the threads that switch most;
- its RSS (VmRSS), before anything plays.
The load average is printed beside: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.report import write_section
from scorch.primitives.system.process import DIE_WITH_PARENT

JACK = os.environ.get("SCORCH_TEST_JACK", "scorch-bench") + "-idle"
TICKS = os.sysconf("SC_CLK_TCK")
NAMES = Path(__file__).resolve().parent / "thread_names"
#: Seconds after the last READY before measuring (start-up's own work settles).
SETTLE = 5.0


def config_text(state: Path, rooms: int) -> str:
    body = "".join(f"\n[instances.room{i}]\n" for i in range(rooms))
    return (f'state_dir = "{state}"\n[audio]\ndriver = "dummy"\njack_server = "{JACK}"\n'
            f'[docs]\nbuild = "on-demand"\n{body}')


def cpu_seconds(pid: int) -> float:
    """User plus system time of the process's own threads (children excluded)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def switches(pid: int) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """Voluntary and involuntary context switches and CPU ticks of each thread, by name."""
    voluntary: Counter[str] = Counter()
    involuntary: Counter[str] = Counter()
    ticks: Counter[str] = Counter()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            status = (task / "status").read_text().splitlines()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        ticks[name] += int(fields[11]) + int(fields[12])
        for line in status:
            key, _, value = line.partition(":")
            if key == "voluntary_ctxt_switches":
                voluntary[f"{name}/{task.name}"] += int(value)
            elif key == "nonvoluntary_ctxt_switches":
                involuntary[f"{name}/{task.name}"] += int(value)
    return voluntary, involuntary, ticks


def rss_mb(pid: int) -> tuple[float, float]:
    """VmRSS, and the part of it that is shared memory (JACK's segment, mostly), in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssShmem"):
            found[key] = int(value.split()[0]) / 1024
    return found.get("VmRSS", 0.0), found.get("RssShmem", 0.0)


@dataclass(frozen=True)
class Idle:
    """One count of rooms, measured."""

    rooms: int
    cpu: float
    """% of one core."""
    voluntary: float
    """Per second."""
    involuntary: float
    top: list[tuple[str, float]]
    """The threads that switch most, and their voluntary switches per second."""
    busiest: list[tuple[str, float]]
    """The threads (by name) that use the most CPU, and their % of a core."""
    rss: float
    """MB."""
    shared: float
    """MB of the RSS that is shared memory (JACK's)."""
    load: float


def measure(tmp: Path, rooms: int, seconds: float) -> Idle:
    path = tmp / f"idle{rooms}.toml"
    path.write_text(config_text(tmp / f"state{rooms}", rooms))
    # Its threads named after themselves (bench/thread_names), so the busiest can be told.
    paths = [str(NAMES), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=DIE_WITH_PARENT,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)})
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline() for _ in range(2 + rooms)]
        assert all("READY" in line for line in lines[2:]), lines
        time.sleep(SETTLE)
        rss, shared = rss_mb(proc.pid)
        cpu0, (vol0, inv0, tick0), t0 = cpu_seconds(proc.pid), switches(proc.pid), time.monotonic()
        time.sleep(seconds)
        cpu1, (vol1, inv1, tick1), t1 = cpu_seconds(proc.pid), switches(proc.pid), time.monotonic()
        took = t1 - t0
        vol = vol1 - vol0
        return Idle(rooms, 100 * (cpu1 - cpu0) / took, sum(vol.values()) / took,
                    sum((inv1 - inv0).values()) / took,
                    [(name.split("/")[0], n / took) for name, n in vol.most_common(6)],
                    [(name, 100 * n / TICKS / took) for name, n in (tick1 - tick0).most_common(5)],
                    rss, shared, os.getloadavg()[0])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rooms", type=int, nargs="+", default=[1, 4, 12])
    parser.add_argument("--write", action="store_true", help="replace BENCHMARKS.md's section")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="scorch-idle-") as work:
        for rooms in args.rooms:
            row = measure(Path(work), rooms, args.seconds)
            rows.append(row)
            top = ", ".join(f"{name} {rate:.0f}" for name, rate in row.top)
            print(f"{rooms:>2} rooms: CPU {row.cpu:.2f} % of a core, "
                  f"{row.voluntary:.0f} voluntary + {row.involuntary:.0f} involuntary "
                  f"switches/s (most: {top}), RSS {row.rss:.0f} MB "
                  f"({row.shared:.0f} MB shared), CPU by thread: "
                  f"{', '.join(f'{name} {pct:.2f} %' for name, pct in row.busiest)}, "
                  f"load {row.load:.2f}", flush=True)
    if args.write:
        table = "\n".join(f"| {r.rooms} | {r.cpu:.2f} % | {r.voluntary:.0f} | "
                          f"{r.rss:.0f} MB ({r.shared:.0f}) | {r.load:.2f} |" for r in rows)
        write_section(f"## Idle\n\n`python -m bench.idle --seconds {args.seconds:g}`\n\n"
                      "| rooms | CPU (own) | voluntary switches/s | RSS (shared) | load avg |\n"
                      f"|---|---|---|---|---|\n{table}\n")


if __name__ == "__main__":
    main()
