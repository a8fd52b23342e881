"""Chaos in every phase: faults injected while a room boots, restores, re-attaches, runs code.

Run: ``.venv/bin/python -m bench.rooms.chaos_phases [--repeats 5] [--only TEXT]``. One room with a
named node; each phase is entered on purpose (a restart, a crash) and its
fault injected at the exact step, from the thread in that step: a wrapper
around the step (the attach record being built, the restore being sent)
signals the real process, then lets the step go on. Reports per phase: faults
injected and recovered, time from the fault to the room READY again with sclang
attached and the node's last value on scsynth, and nodes lost. The figures
replace the ``## Supervision by phase`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

import actors.room.processes
from bench.report import write_section
from bench.rooms.chaos import WIDE_OPEN, node_value
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import ScorchError
from scorch.primitives.sclang import protocol as sclang_protocol
from scorch.primitives.system.process import pid_alive
from scorch.state.events import State

ROOM = "room"
#: Seconds a room may take to come back before the fault counts as not recovered.
GIVE_UP = 30.0
#: Seconds a room plays undisturbed between two faults.
SETTLE = 0.5


def config_text(state: Path) -> str:
    return f"""
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "scorch-bench-phases"
[midi]
enabled = false
[docs]
build = "on-demand"
{WIDE_OPEN}
[instances.{ROOM}]
synthdefs = ["sine"]
[instances.{ROOM}.nodes.tone]
synthdef = "sine"
params = {{ freq = 220, amp = 0.01 }}
"""


def child(name: str, but: frozenset[int] = frozenset()) -> int:
    """The newest child process called ``name``."""
    found = [p for p in psutil.Process().children(recursive=True)
             if p.name() == name and p.pid not in but]
    return max(found, key=lambda p: p.create_time()).pid


class Trap:
    """Wrap a step once: the next call signals a process first, and notes when."""

    def __init__(self) -> None:
        self.armed: dict[tuple[int, str], Callable[[], None]] = {}
        self.fired: list[float] = []

    def install(self, owner: Any, attr: str) -> None:
        real = getattr(owner, attr)
        key = (id(owner), attr)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            fault = self.armed.pop(key, None)
            if fault is not None:
                fault()
                self.fired.append(time.monotonic())
            return real(*args, **kwargs)

        setattr(owner, attr, wrapped)

    def arm(self, owner: Any, attr: str, fault: Callable[[], None]) -> None:
        self.armed[(id(owner), attr)] = fault


@dataclass
class Phase:
    """One phase's figures."""

    name: str
    injected: int = 0
    recovered: int = 0
    lost: int = 0
    times: list[float] = field(default_factory=list)


def back(orch: Orchestra, freq: float, since: float) -> float | None:
    """Seconds from ``since`` until READY, sclang up and the node at ``freq``; None: never."""
    view = orch.views[ROOM]
    deadline = since + GIVE_UP
    while time.monotonic() < deadline:
        snap = view.snapshot
        if snap.state == State.READY and snap.sclang_state == "ready":
            value = node_value(orch, ROOM)
            if value is not None and abs(value - freq) < 0.05:
                return time.monotonic() - since
        time.sleep(0.01)
    return None


def kill(name: str, sig: signal.Signals = signal.SIGKILL,
         but: Callable[[], frozenset[int]] = frozenset) -> Callable[[], None]:
    return lambda: os.kill(child(name, but()), sig)


def run_phase(orch: Orchestra, trap: Trap, phase: Phase, freq: float,
              arm: Callable[[], None] | None, enter: Callable[[], None]) -> None:
    """Set the node's value, arm the fault, enter the phase, and time the way back.

    ``arm`` None: ``enter`` injects the fault itself.
    """
    time.sleep(SETTLE)
    orch.rooms.set(ROOM, "tone", {"freq": freq})
    if arm is not None:
        arm()
    fired = len(trap.fired)
    started = time.monotonic()
    try:
        enter()
    except ProcessLookupError:
        trap.armed.clear()
        print(f"{phase.name}: the process went by itself; skipped", file=sys.stderr)
        return  # the process went by itself meanwhile: no fault of ours to count
    except ScorchError:
        pass  # a boot that saw the fault may say so; what counts is whether the room is back
    deadline = time.monotonic() + GIVE_UP
    while arm is not None and len(trap.fired) == fired and time.monotonic() < deadline:
        time.sleep(0.01)  # a crash's restart reaches the step later, from the keeper
    if arm is not None and len(trap.fired) == fired:
        print(f"{phase.name}: the step was not reached; skipped", file=sys.stderr)
        trap.armed.clear()
        return  # the step was not reached this time: no fault to count
    phase.injected += 1
    took = back(orch, freq, trap.fired[-1] if arm is not None else started)
    if took is not None:
        phase.recovered += 1
        phase.times.append(took)
        return
    value = node_value(orch, ROOM)
    if value is None or abs(value - freq) >= 0.05:
        phase.lost += 1
    print(f"{phase.name}: not back within {GIVE_UP:g} s: {orch.rooms.status(ROOM).state} "
          f"{orch.rooms.status(ROOM).reason}; node value {value}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--only", default="", help="run only the phases whose name holds this "
                        "text (the figures are then not written)")
    args = parser.parse_args()
    trap = Trap()
    for owner, attr in ((sclang_protocol, "attach"), (sclang_protocol, "install"),
                        (sclang_protocol, "reattach"),
                        (actors.room.processes, "restore_nodes")):
        trap.install(owner, attr)
    state = Path(tempfile.mkdtemp(prefix="scorch-phases-"))
    path = state / "phases.toml"
    path.write_text(config_text(state / "state"))
    orch = Orchestra(parse_config(path.read_text(), path))
    assert orch.start() == {ROOM: None}
    seen: set[int] = set()

    def scsynth() -> frozenset[int]:
        pid = orch.rooms.status(ROOM).pids["scsynth"]
        seen.add(pid)
        return frozenset({pid})

    def restart() -> None:
        orch.rooms.restart(ROOM)

    def crash_scsynth() -> None:
        os.kill(next(iter(scsynth())), signal.SIGKILL)

    def long_code() -> None:
        runner = threading.Thread(target=orch.rooms.execute_one, args=(
            ROOM, "var t = Main.elapsedTime; while { Main.elapsedTime - t < 5 } { 1 }; 1", 10))
        runner.start()
        time.sleep(0.3)
        os.kill(orch.rooms.status(ROOM).pids["sclang"], signal.SIGKILL)
        runner.join(timeout=15)

    phases: list[tuple[str, Callable[[], None] | None, Callable[[], None]]] = [
        ("READY: scsynth SIGKILL", None, crash_scsynth),
        ("boot: scsynth SIGKILL while sclang attaches",
         lambda: trap.arm(sclang_protocol, "attach", kill("scsynth")), restart),
        ("boot: scsynth SIGSTOP while sclang attaches",
         lambda: trap.arm(sclang_protocol, "attach", kill("scsynth", signal.SIGSTOP)),
         restart),
        ("boot: sclang SIGKILL while it starts",
         lambda: trap.arm(sclang_protocol, "install", kill("sclang")), restart),
        ("boot: sclang SIGSTOP while it attaches",
         lambda: trap.arm(sclang_protocol, "attach", kill("sclang", signal.SIGSTOP)), restart),
        ("boot: jackd SIGKILL while sclang attaches",
         lambda: trap.arm(sclang_protocol, "attach", kill("jackd")), restart),
        ("restore: new scsynth SIGKILL while its nodes are restored",
         lambda: trap.arm(actors.room.processes, "restore_nodes",
                          kill("scsynth", but=lambda: frozenset(seen))), crash_scsynth),
        ("re-attach: new scsynth SIGKILL while sclang re-attaches",
         lambda: trap.arm(sclang_protocol, "reattach",
                          kill("scsynth", but=lambda: frozenset(seen))), crash_scsynth),
        ("code: sclang SIGKILL while it runs code", None, long_code),
    ]
    phases = [p for p in phases if args.only in p[0]]
    results = [Phase(name) for name, _, _ in phases]
    freq = 300.0
    try:
        for _ in range(args.repeats):
            for (_, arm, enter), phase in zip(phases, results, strict=True):
                freq += 1.0
                run_phase(orch, trap, phase, freq, arm, enter)
                if phase.times:
                    print(f"{phase.name}: {phase.times[-1] * 1000:.0f} ms", file=sys.stderr)
                seen.update(p for p in orch.rooms.pids().values() if p)
        for pid in orch.rooms.status(ROOM).pids.values():
            os.kill(pid, signal.SIGSTOP)
        started = time.monotonic()
    finally:
        seen.update(p for p in orch.rooms.pids().values() if p)
        orch.stop()
    shutdown = time.monotonic() - started
    left = sorted(pid for pid in seen if pid_alive(pid))
    section = report(results, args.repeats, shutdown, left)
    print(section)
    if not args.no_write and not args.only:
        write_section(section)
    ok = all(p.recovered == p.injected and p.lost == 0 for p in results) and not left
    return 0 if ok else 1


def report(results: list[Phase], repeats: int, shutdown: float, left: list[int]) -> str:
    rows = []
    for phase in results:
        times = sorted(phase.times)
        figure = (f"median {statistics.median(times) * 1000:.0f} ms, max {times[-1] * 1000:.0f} "
                  "ms" if times else "n/a")
        rows.append(f"| {phase.name} | {phase.injected} / {phase.recovered} | {figure} | "
                    f"{phase.lost} |")
    return "\n".join([
        "## Supervision by phase", "",
        f"`.venv/bin/python -m bench.rooms.chaos_phases --repeats {repeats}` "
        f"({time.strftime('%Y-%m-%d')}): one room with a named node whose value changes before "
        "every fault; each fault is injected at its step by the thread in that step, then the "
        "step goes on. Back means READY, sclang attached, and the node's last value read back "
        "from scsynth. Restart policy opened wide (1000 per 60 s, backoff 0.05 to 0.5 s).", "",
        "| phase and fault | injected / recovered | fault to back | nodes lost |",
        "|---|---|---|---|", *rows, "",
        f"Shutdown with scsynth and sclang both SIGSTOPped: {shutdown:.2f} s, "
        f"{len(left)} processes left.", "",
    ])


if __name__ == "__main__":
    sys.exit(main())
