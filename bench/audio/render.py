"""Render benchmark: how many times faster than real time a 10 s ``render`` is.

Run: ``.venv/bin/python -m bench.audio.render [--runs 5]``. No room is booted:
``render`` needs none. Each run renders the library's ``sine`` held for 10 s
(plus its 0.3 s release) at a different pitch, so nothing comes from the cache,
through the operation as MCP and the CLI call it; the figures are scsynth -N
alone, and the whole call (scsynth -N, then the analysis and the picture of
the file). A last call repeats a render and comes from the cache. The figures
replace the ``## Render`` section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config

SECONDS = 10.0
GOAL = 50.0
CONFIG = """
state_dir = "{state}"
[instances.unused]
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]  # the machine is shared: say how busy it was
    with tempfile.TemporaryDirectory(prefix="scorch-bench-render-") as name:
        folder = Path(name)
        service = LocalService(Orchestra(parse_config(CONFIG.format(state=folder / "state"),
                                                      folder / "config.toml")))
        call = service.call
        scsynth, whole, length = [], [], 0.0
        for run in range(args.runs + 1):  # the first warms the libraries up
            started = time.perf_counter()
            out = call("render", {"synthdef": "sine", "duration": SECONDS,
                                  "params": {"freq": 220.0 + run}})
            took = time.perf_counter() - started
            dump = out.model_dump()
            assert not dump["cached"] and dump["fundamental_hz"] is not None, dump
            length = dump["seconds"]
            if run:
                scsynth.append(dump["render_seconds"])
                whole.append(took)
        started = time.perf_counter()
        assert call("render", {"synthdef": "sine", "duration": SECONDS,
                               "params": {"freq": 220.0}}).model_dump()["cached"]
        cached = time.perf_counter() - started

    def speed(values: list[float]) -> str:
        median = statistics.median(values)
        return (f"{length / median:.0f}x (median {median * 1000:.0f} ms, max "
                f"{max(values) * 1000:.0f} ms; {len(values)} runs)")

    verdict = "met" if length / statistics.median(scsynth) > GOAL else "MISSED"
    whole_verdict = "met" if length / statistics.median(whole) > GOAL else "missed"
    section = "\n".join([
        "## Render",
        "",
        f"`.venv/bin/python -m bench.audio.render --runs {args.runs}` "
        f"({time.strftime('%Y-%m-%d')}, load average {load:.1f} at the start): "
        f"the library's `sine` held for {SECONDS:g} s, then "
        f"released: {length:.2f} s of stereo at 48 kHz, a new pitch each run (no cache).",
        "",
        "| what | times real time |",
        "|---|---|",
        f"| `scsynth -N`: the render | {speed(scsynth)}; goal > {GOAL:g}x: {verdict} |",
        f"| the whole `render` call: render, analysis and picture | {speed(whole)}; "
        f"{GOAL:g}x: {whole_verdict} |",
        f"| the same render again, from the cache | {cached * 1000:.1f} ms |",
        "",
        "Most of the whole call is the analysis and the picture of the file, which run "
        "side by side once scsynth -N has finished.",
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
