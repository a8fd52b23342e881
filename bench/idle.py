"""Idle benchmark: what ``scorch run`` costs with rooms that do nothing, and how often it wakes.

Run: ``.venv/bin/python -m bench.idle [--seconds 60] [--rooms 1 4 12] [--against DIR]``.
For each count of rooms, starts ``scorch run`` (its own JACK dummy server, no client,
no MIDI played, docs built on demand so no builder runs), waits for every room READY
and a settling pause, then measures over ``--seconds``:
- CPU of scorch's own process (utime + stime of /proc/PID/stat: its threads, not
  its children scsynth and sclang), as % of one core;
- its wake-ups per second: the times each thread was put on a CPU
  (/proc/PID/task/*/schedstat, third field), by thread name (threads are named
  through ``bench/thread_names``; room numbers are folded, ``roomN-scsynth-osc``);
- the MIDI input thread's share (``midi-router-input``), said apart;
- its memory before anything plays: RSS, the part of it that is JACK's shared
  segment (libjack maps and mlocks it in every client), and PSS.
``--against DIR`` runs the same config from another source tree (``/work/main``: the
baseline) alternately with this one, and prints this tree's figures as ratios of it.
The load average is printed beside: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.report import write_section
from scorch.primitives.system.process import DIE_WITH_PARENT

JACK = os.environ.get("SCORCH_TEST_JACK", "scorch-bench") + "-idle"
TICKS = os.sysconf("SC_CLK_TCK")
NAMES = Path(__file__).resolve().parent / "thread_names"
HERE = Path(__file__).resolve().parent.parent
#: Seconds after the last READY before measuring (start-up's own work settles).
SETTLE = 5.0
#: The thread whose wait the MIDI path owns (actors/router/input.py).
MIDI_INPUT = "midi-router-inp"
#: JACK's process thread of scorch's MIDI input client (midi/io/backends/jack_in.c names it):
#: like any JACK client's, it wakes every cycle of the server, MIDI or not.
JACK_CYCLE = "midi-jack-cycle"


def config_text(state: Path, rooms: int, midi: bool = True) -> str:
    body = "".join(f"\n[instances.room{i}]\n" for i in range(rooms))
    return (f'state_dir = "{state}"\n[audio]\ndriver = "dummy"\njack_server = "{JACK}"\n'
            f'[docs]\nbuild = "on-demand"\n' + ("" if midi else "[midi]\nenabled = false\n")
            + body)


def cpu_seconds(pid: int) -> float:
    """User plus system time of the process's own threads (children excluded)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def folded(name: str) -> str:
    """A thread's name with its numbers folded: one row for the twelve rooms' readers.

    Linux keeps 15 characters of a name, so ``room1-scsynth-o`` and ``room10-scsynth-``
    fold to the same 13.
    """
    short = re.sub(r"\d+", "N", name)
    return short[:13] if short != name and len(name) == 15 else short


def threads(pid: int) -> dict[str, tuple[str, int, int]]:
    """Each thread's name, nanoseconds on a CPU, and times it was put on one (schedstat)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            ran, _waited, slices = (task / "schedstat").read_text().split()
        except (OSError, ValueError):  # the thread ended meanwhile
            continue
        found[task.name] = (name, int(ran), int(slices))
    return found


def per_thread(before: dict[str, tuple[str, int, int]], after: dict[str, tuple[str, int, int]],
               took: float) -> tuple[dict[str, float], dict[str, float], Counter[str]]:
    """Wake-ups per second, % of a core and thread count, by folded name, between two looks."""
    wakes: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    count: Counter[str] = Counter()
    for tid, (name, ran, slices) in after.items():
        ran0, slices0 = before[tid][1:] if tid in before else (0, 0)
        key = folded(name)
        wakes[key] += (slices - slices0) / took
        cpu[key] += 100 * (ran - ran0) / 1e9 / took
        count[key] += 1
    return wakes, cpu, count


def memory(pid: int) -> dict[str, float]:
    """VmRSS, RssShmem (JACK's segment), VmLck and PSS, in MB."""
    found: dict[str, float] = {}
    for name in ("status", "smaps_rollup"):
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssShmem", "RssAnon", "RssFile", "VmLck", "Pss"):
                found[key] = int(value.split()[0]) / 1024
    return found


@dataclass(frozen=True)
class Idle:
    """One count of rooms, measured."""

    tree: str
    """The source tree that ran (``this`` or the baseline's folder)."""
    rooms: int
    cpu: float
    """% of one core (the process's utime + stime)."""
    wakes: dict[str, float]
    """Wake-ups per second by thread name (folded)."""
    thread_cpu: dict[str, float]
    """% of a core by thread name (folded), from schedstat."""
    count: Counter[str]
    memory: dict[str, float]
    """5 s after the last READY."""
    memory_after: dict[str, float]
    """At the end of the measurement (a first autosave, caches filled)."""
    events: list[str]
    """Lifecycle events of the rooms during the window (a restart: then it was not idle)."""
    load: float

    @property
    def wakeups(self) -> float:
        return sum(self.wakes.values())

    @property
    def midi_input(self) -> float:
        """% of a core the MIDI input thread used."""
        return self.thread_cpu.get(MIDI_INPUT, 0.0)

    @property
    def jack_cycle(self) -> float:
        """% of a core JACK's process thread of the MIDI input client used."""
        return self.thread_cpu.get(JACK_CYCLE, 0.0)


def measure(tmp: Path, rooms: int, seconds: float, tree: Path, midi: bool = True) -> Idle:
    path = tmp / f"idle{rooms}.toml"
    path.write_text(config_text(tmp / f"state{rooms}-{tree.name}", rooms, midi))
    # Its threads named after themselves (bench/thread_names), so the busiest can be told.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(NAMES), str(tree)])}
    proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=DIE_WITH_PARENT, cwd=tree, env=env)
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline() for _ in range(2 + rooms)]
        assert all("READY" in line for line in lines[2:]), lines
        time.sleep(SETTLE)
        mem = memory(proc.pid)
        cpu0, look0, t0 = cpu_seconds(proc.pid), threads(proc.pid), time.monotonic()
        time.sleep(seconds)
        cpu1, look1, t1 = cpu_seconds(proc.pid), threads(proc.pid), time.monotonic()
        took = t1 - t0
        wakes, cpu, count = per_thread(look0, look1, took)
        after, load = memory(proc.pid), os.getloadavg()[0]
        return Idle("this" if tree == HERE else str(tree), rooms, 100 * (cpu1 - cpu0) / took,
                    wakes, cpu, count, mem, after, events(path, tree, env, time.time() - took),
                    load)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def events(config: Path, tree: Path, env: dict[str, str], since: float) -> list[str]:
    """The rooms' lifecycle events since the Unix time ``since`` (asked after the window)."""
    out = subprocess.run([sys.executable, "-m", "scorch.cli.main", "events", "--config",
                          str(config), "--json"], capture_output=True, text=True, cwd=tree,
                         env=env, timeout=60, check=False)
    try:
        found = json.loads(out.stdout)["events"]
    except (ValueError, KeyError):
        return [f"events not read: {out.stderr.strip()[-200:]}"]
    return [f"{e['instance']} {e['kind']}" for e in found if e["time"] >= since]


def describe(row: Idle, top: int = 8) -> str:
    """One run's figures on a few lines."""
    mem = row.memory
    busiest = ", ".join(
        f"{name}{'' if row.count[name] == 1 else f' x{row.count[name]}'} "
        f"{row.wakes[name]:.0f}/s {row.thread_cpu[name]:.2f} %"
        for name in sorted(row.thread_cpu, key=lambda n: -row.thread_cpu[n])[:top])
    return (f"{row.rooms:>2} rooms [{row.tree}]: CPU {row.cpu:.2f} % of a core "
            f"(MIDI input thread {row.midi_input:.2f} %, JACK's cycle of the MIDI client "
            f"{row.jack_cycle:.2f} %), {row.wakeups:.0f} wake-ups/s; "
            f"RSS {mem.get('VmRSS', 0):.1f} MB (JACK's locked shared segment "
            f"{mem.get('RssShmem', 0):.1f}, anon {mem.get('RssAnon', 0):.1f}, "
            f"file {mem.get('RssFile', 0):.1f}), PSS {mem.get('Pss', 0):.1f} MB; "
            f"{row.memory_after.get('VmRSS', 0):.1f} MB RSS at the end; "
            f"load {row.load:.2f}"
            + (f"\n    NOT IDLE, events in the window: {', '.join(row.events)}"
               if row.events else "") + f"\n    by thread (wake-ups/s, % of a core): {busiest}")


def summary(rows: list[Idle], against: str | None) -> list[str]:
    """Medians per count of rooms (and tree), with ratios to the baseline's."""
    out = []
    for rooms in sorted({r.rooms for r in rows}):
        mine = [r for r in rows if r.rooms == rooms and r.tree == "this"]
        line = (f"{rooms:>2} rooms: CPU {statistics.median(r.cpu for r in mine):.2f} %, "
                f"{statistics.median(r.wakeups for r in mine):.0f} wake-ups/s, "
                f"RSS {statistics.median(r.memory['VmRSS'] for r in mine):.1f} MB, "
                f"MIDI input {statistics.median(r.midi_input for r in mine):.2f} %, "
                f"JACK cycle {statistics.median(r.jack_cycle for r in mine):.2f} %")
        base = [r for r in rows if r.rooms == rooms and r.tree != "this"]
        if base and against:
            ratio = [statistics.median(getattr(r, k) if k != "rss" else r.memory["VmRSS"]
                                       for r in group)
                     for group in (mine, base) for k in ("cpu", "wakeups", "rss")]
            line += (f"; baseline {ratio[3]:.2f} %, {ratio[4]:.0f}/s, {ratio[5]:.0f} MB; "
                     f"this / baseline: CPU {ratio[0] / ratio[3]:.2f}x, wake-ups "
                     f"{ratio[1] / ratio[4]:.2f}x, RSS {ratio[2] / ratio[5]:.2f}x")
        out.append(line)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rooms", type=int, nargs="+", default=[1, 4, 12])
    parser.add_argument("--against", type=Path, default=None,
                        help="a baseline source tree, run alternately (e.g. /work/main)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each tree per count")
    parser.add_argument("--write", action="store_true", help="replace BENCHMARKS.md's section")
    parser.add_argument("--no-midi", action="store_true",
                        help="[midi] enabled = false: an installation without MIDI")
    args = parser.parse_args()
    trees = [HERE] + ([args.against.resolve()] if args.against else [])
    rows: list[Idle] = []
    print(f"load before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="scorch-idle-") as work:
        for rooms in args.rooms:
            for run in range(args.runs):
                # Alternate which tree goes first, so neither always meets the same load.
                for tree in trees if run % 2 == 0 else trees[::-1]:
                    row = measure(Path(work), rooms, args.seconds, tree, not args.no_midi)
                    rows.append(row)
                    print(describe(row), flush=True)
    lines = summary(rows, str(args.against) if args.against else None)
    print("\n".join(lines))
    if args.write:
        table = "\n".join(
            f"| {r.rooms} | {r.tree} | {r.cpu:.2f} % | {r.midi_input:.2f} % | {r.wakeups:.0f} | "
            f"{r.memory['VmRSS']:.0f} MB ({r.memory.get('RssShmem', 0):.0f}) | "
            f"{r.memory.get('Pss', 0):.0f} MB | {r.load:.2f} |" for r in rows)
        write_section(f"## Idle\n\n`python -m bench.idle --seconds {args.seconds:g}`\n\n"
                      "| rooms | tree | CPU (own) | of which MIDI input | wake-ups/s | "
                      "RSS (JACK shared) | PSS | load avg |\n"
                      f"|---|---|---|---|---|---|---|---|\n{table}\n")


if __name__ == "__main__":
    main()
