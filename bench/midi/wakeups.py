"""How often the MIDI input thread wakes while nothing is played, and what it costs.

Run with ``python -m bench.midi.wakeups`` (about a minute). It starts a private
jackd and, in turn, routers whose one input is a virtual port nobody plays: one
reading rtmidi's queue by polling it (before), one on scorch's own JACK input
client, woken by an eventfd (after), ``--rounds`` rounds interleaved. For each,
from /proc/self/task/TID/schedstat of the thread ``midi-router-input``: its
wake-ups per second (timeslices run) and its CPU, from 1.5 s after start (the
poll's idle rate, after a quiet second) and from 11 s (its quiet rate, after ten).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median
from typing import Any

from bench.midi.latency import ROOT, ListenerTargets
from midi.schema import MidiConfig

WINDOWS = {"idle (after 1 s)": 1.5, "quiet (after 10 s)": 11.0}


def schedstat(tid: int) -> tuple[int, int]:
    """Nanoseconds on a CPU and timeslices run (each one a wake-up) of one thread."""
    fields = Path(f"/proc/self/task/{tid}/schedstat").read_text().split()
    return int(fields[0]), int(fields[2])


def input_thread() -> int:
    for thread in threading.enumerate():
        if thread.name == "midi-router-input" and thread.native_id is not None:
            return thread.native_id
    raise RuntimeError("no MIDI input thread")


def measure(reader: str, seconds: float, state: Path) -> dict[str, dict[str, float]]:
    """Start a router reading its virtual input as ``reader`` says; wake-ups per window."""
    from actors.router.actor import MidiRouter

    config = MidiConfig.model_validate({"backend": "jack", "virtual_port": "benchwake",
                                        "inputs": []})
    os.environ["SCORCH_MIDI_INPUT"] = reader
    try:
        targets = ListenerTargets(("127.0.0.1", 9))
        router = MidiRouter.start(config, targets, state, bus=targets.bus)
        router.proxy().ports().get(timeout=10)
    finally:
        os.environ.pop("SCORCH_MIDI_INPUT", None)
    started = time.monotonic()
    figures = {}
    try:
        tid = input_thread()
        for window, after in WINDOWS.items():
            time.sleep(max(0.0, started + after - time.monotonic()))
            cpu0, runs0 = schedstat(tid)
            time.sleep(seconds)
            cpu1, runs1 = schedstat(tid)
            figures[window] = {"wakeups": (runs1 - runs0) / seconds,
                               "cpu": (cpu1 - cpu0) / seconds / 1e9 * 100}
    finally:
        router.stop(timeout=10)
    return figures


def run(seconds: float, rounds: int) -> dict[str, Any]:
    """Measure both inputs ``rounds`` times, interleaved, on a private jackd."""
    sys.path.insert(0, str(ROOT))
    from tests.support.harness import jack_server

    runs: dict[str, list[Any]] = {"rtmidi": [], "own": []}
    loads = []
    with jack_server("scorch-bench-wake") as jack, tempfile.TemporaryDirectory() as state:
        os.environ["JACK_DEFAULT_SERVER"] = jack
        os.environ["JACK_NO_START_SERVER"] = "1"
        for round_ in range(rounds):
            for reader in ("rtmidi", "own"):
                where = Path(state) / f"{reader}{round_}"
                where.mkdir()
                runs[reader].append(measure(reader, seconds, where))
                loads.append(os.getloadavg()[0])
    return {"runs": runs, "loads": loads, "seconds": seconds, "rounds": rounds}


def lines(figures: dict[str, Any]) -> list[str]:
    """The table, in BENCHMARKS.md's words."""
    names = {"rtmidi": "rtmidi's queue, polled (before)", "own": "own JACK client (after)"}
    loads = figures["loads"]
    out = [f"The MIDI input thread while nothing is played (`python -m bench.midi.wakeups`, "
           f"run by the command above): {figures['rounds']} rounds of {figures['seconds']:.0f} "
           "s per window, the two inputs interleaved, medians; wake-ups are the thread's "
           "timeslices from /proc/self/task/TID/schedstat; load average "
           f"{min(loads):.1f}-{max(loads):.1f}.", "",
           "| input | window | wake-ups/s | CPU of a core |", "|---|---|---|---|"]
    for reader, rounds in figures["runs"].items():
        for window in WINDOWS:
            wake = median(r[window]["wakeups"] for r in rounds)
            cpu = median(r[window]["cpu"] for r in rounds)
            out.append(f"| {names[reader]} | {window} | {wake:.1f} | {cpu:.3f} % |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print("\n".join(lines(run(args.seconds, args.rounds))))


if __name__ == "__main__":
    main()
