"""Memory benchmark: what restoring buffers and loading sessions cost, against baselines.

Run: ``.venv/bin/python -m bench.rooms.memory``. Prints, each against a baseline measured
in the same run:
- a scsynth SIGKILL to RESTORED with N sample buffers, against the same room
  without buffers; and scorch's buffer restore on its own against a bare
  ``/b_allocRead`` x N + ``/sync`` to the same scsynth;
- a session load that sets M params (one diff, M changes) against M ``set`` calls.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from actors.room.processes import restore_buffers
from bench.report import write_section
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.client import OscClient
from scorch.state.desired import SAMPLE_BUFFER_BASE, BufferState, DesiredState
from scorch.state.events import Kind

JACK = "scorch-bench-memory"


def _config(tmp: Path) -> str:
    return (f'state_dir = "{tmp / "state"}"\n[audio]\njack_server = "{JACK}"\n'
            f'[samples]\npaths = ["{tmp / "samples"}"]\n[sessions]\nautosave = 0\n'
            "[watchdog]\ninterval = 0.25\nmissed = 8\nbackoff_min = 0.01\n"
            "[instances.plain]\nsynthdefs = [\"sampler\", \"sine\"]\n"
            "[instances.sampled]\nsynthdefs = [\"sampler\"]\n")


def _kill_to_restored(orch: Orchestra, room: str) -> float:
    view = orch.views[room]
    mark = view.events.mark()
    pid = view.snapshot.scsynth_pid
    assert pid is not None
    started = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    event = view.events.wait_for((Kind.RESTORED, Kind.FAILED), mark, 30.0)
    assert event is not None and event.kind == Kind.RESTORED, orch.rooms.events(room)
    return time.monotonic() - started


def _bare_reads(port: int, paths: list[Path]) -> float:
    osc = OscClient(port)
    try:
        started = time.monotonic()
        for i, path in enumerate(paths):
            osc.send(commands.b_alloc_read(SAMPLE_BUFFER_BASE + 100 + i, str(path)))
        osc.sync(timeout=30.0)
        took = time.monotonic() - started
        for i in range(len(paths)):
            osc.send(commands.b_free(SAMPLE_BUFFER_BASE + 100 + i))
        osc.sync(timeout=30.0)
        return took
    finally:
        osc.close()


def _scorch_restore(port: int, paths: list[Path], frames: int) -> float:
    desired = DesiredState()
    for i, path in enumerate(paths):
        desired.buffers[f"b{i}"] = BufferState(f"b{i}", SAMPLE_BUFFER_BASE + 100 + i,
                                               str(path), frames, 1, 48000.0)
    osc = OscClient(port)
    try:
        started = time.monotonic()
        problems = restore_buffers(osc, desired)
        took = time.monotonic() - started
        assert problems == [], problems
        for i in range(len(paths)):
            osc.send(commands.b_free(SAMPLE_BUFFER_BASE + 100 + i))
        osc.sync(timeout=30.0)
        return took
    finally:
        osc.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--buffers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each sample")
    parser.add_argument("--params", type=int, default=40, help="params a session load sets")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        (tmp / "samples").mkdir()
        frames = int(48000 * args.seconds)
        tone = 0.3 * np.sin(np.arange(frames) * 2 * np.pi * 440 / 48000)
        paths = []
        for i in range(args.buffers):
            paths.append(tmp / "samples" / f"s{i}.wav")
            sf.write(paths[-1], tone, 48000, subtype="FLOAT")
        path = tmp / "config.toml"
        path.write_text(_config(tmp))
        orch = Orchestra(parse_config(path.read_text(), path))
        try:
            assert all(e is None for e in orch.start().values())
            api = LocalService(orch)
            for p in paths:
                api.call("buffer", {"action": "load", "instance": "sampled", "path": p.name})
            with_buffers = [_kill_to_restored(orch, "sampled") for _ in range(args.runs)]
            without = [_kill_to_restored(orch, "plain") for _ in range(args.runs)]
            port = orch.views["plain"].snapshot.port or 0
            bare = [_bare_reads(port, paths) for _ in range(args.runs)]
            ours = [_scorch_restore(port, paths, frames) for _ in range(args.runs)]

            nodes = max(1, args.params // 4)
            for n in range(nodes):
                api.call("play", {"instance": "plain", "synthdef": "sine", "name": f"n{n}",
                                  "params": {"amp": 0.0}})
            api.call("session", {"action": "save", "name": "bench"})
            names = {"freq": 200.0, "pan": 0.1, "vibRate": 5.0, "drive": 1.5}

            def change(k: int) -> None:
                for n in range(nodes):
                    for name, base in names.items():
                        api.call("set", {"instance": "plain", "node": f"n{n}",
                                         "params": {name: base + 0.01 * (k + 1)}})

            sets, loads = [], []
            for k in range(args.runs):
                started = time.monotonic()
                change(k)
                sets.append(time.monotonic() - started)
                started = time.monotonic()
                out = api.call("session", {"action": "load", "name": "bench"})
                loads.append(time.monotonic() - started)
                assert len(out.changes) == nodes and out.failure() is None  # type: ignore[attr-defined]
        finally:
            orch.stop()
    med = statistics.median
    lines = [
        "## Memory: buffer restore and session load",
        "",
        "`python -m bench.rooms.memory` (medians of "
        f"{args.runs} runs; {args.buffers} mono float WAVs of {args.seconds:g} s each):",
        "",
        "| figure | scorch | baseline | ratio |",
        "|---|---|---|---|",
        f"| scsynth SIGKILL to RESTORED, {args.buffers} buffers vs none | "
        f"{med(with_buffers) * 1000:.0f} ms | {med(without) * 1000:.0f} ms | "
        f"{med(with_buffers) / med(without):.2f} |",
        f"| buffer restore vs bare /b_allocRead x{args.buffers} + /sync | "
        f"{med(ours) * 1000:.1f} ms | {med(bare) * 1000:.1f} ms | {med(ours) / med(bare):.2f} |",
        f"| session load setting {nodes * len(names)} params ({nodes} nodes) vs as many `set` "
        f"calls | {med(loads) * 1000:.1f} ms | {med(sets) * 1000:.1f} ms | "
        f"{med(loads) / med(sets):.2f} |",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if not args.no_write:
        write_section(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
