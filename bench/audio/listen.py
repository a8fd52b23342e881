"""Listen benchmark: what a 3 s ``listen`` costs beyond its 3 s of sound, through MCP.

Run: ``.venv/bin/python -m bench.audio.listen [--runs 8]``. Boots one room
playing a 440 Hz sine on a private headless jackd, then calls the ``listen``
tool through an in-memory MCP client (the PNG travels as image content) and
times each call from ``call_tool`` to its result. The first call in the process
is shown apart: it also loads the analysis libraries. Beside the total, the
parts measured on their own in the same process: the capture inside scsynth
(DiskOut, started and stopped by scsynth's own block count) and ``hear`` (the
analysis and the picture, side by side). The figures replace the ``## Listen``
section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from bench.report import write_section
from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.app.studio.capture import Capture, Source
from scorch.app.studio.hearing import hear
from scorch.config.installation import parse_config

SECONDS = 3.0
GOAL = 0.3
CONFIG = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "scorch-bench-listen"
[midi]
enabled = false
[instances.room]
synthdefs = ["sine"]
[instances.room.nodes.tone]
synthdef = "sine"
params = {{ freq = 440, amp = 0.3 }}
"""


async def measure(orch: Orchestra, folder: Path, runs: int,
                  ) -> tuple[float, list[float], list[float], list[float]]:
    """Seconds beyond SECONDS: of the first listen, then of ``runs`` more; and of a bare
    capture and ``hear`` measured apart, each right after its listen (same conditions)."""
    beyond, captured, heard = [], [], []
    async with Client(build_server(LocalService(orch))) as client:
        await client.call_tool("list_instances", {})  # the client's own first-call costs
        for run in range(runs + 1):
            started = time.perf_counter()
            result = await client.call_tool("listen", {"instance": "room", "seconds": SECONDS})
            beyond.append(time.perf_counter() - started - SECONDS)
            assert not result.is_error and len(result.content) == 2, result
            if run:
                lag, took = parts(orch, folder / f"part{run}.wav")
                captured.append(lag)
                heard.append(took)
    return beyond[0], beyond[1:], captured, heard


def parts(orch: Orchestra, path: Path) -> tuple[float, float]:
    """A bare capture's seconds beyond SECONDS, then ``hear``'s seconds on its file."""
    started = time.perf_counter()
    capture = Capture.start("room", orch.rooms.view("room"), orch.studio.slots, path, "wav",
                            Source(), SECONDS)
    while not capture.wait(0.05):
        pass
    capture.finish()
    lag = time.perf_counter() - started - SECONDS
    started = time.perf_counter()
    hear(path, path.with_suffix(".png"), "bench")
    return lag, time.perf_counter() - started


def ms(values: list[float]) -> str:
    return (f"median {statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f},"
            f" max {max(values) * 1000:.0f}; {len(values)} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]  # the machine is shared: say how busy it was
    with tempfile.TemporaryDirectory(prefix="scorch-bench-listen-") as name:
        folder = Path(name)
        config = parse_config(CONFIG.format(state=folder / "state"), folder / "config.toml")
        orch = Orchestra(config)
        try:
            assert orch.start() == {"room": None}
            first, beyond, captured, heard = anyio.run(measure, orch, folder, args.runs)
        finally:
            orch.stop()
    median = statistics.median(beyond)
    verdict = "met" if median < GOAL else "MISSED"
    section = "\n".join([
        "## Listen",
        "",
        f"`.venv/bin/python -m bench.audio.listen --runs {args.runs}` "
        f"({time.strftime('%Y-%m-%d')}, load average {load:.1f} at the start): "
        f"the `listen` tool through an in-memory MCP client, "
        f"{SECONDS:g} s of a room playing a 440 Hz sine, stereo at 48 kHz.",
        "",
        "| what | figure |",
        "|---|---|",
        f"| `listen` {SECONDS:g} s: time beyond the {SECONDS:g} s | {ms(beyond)}; "
        f"goal < {GOAL:g} s: {verdict} |",
        f"| the first `listen` in a process (libraries load during the capture) | "
        f"{first * 1000:.0f} ms beyond |",
        f"| a bare capture in scsynth (each right after a listen), beyond {SECONDS:g} s | "
        f"{ms(captured)} |",
        f"| `hear` on its file: analysis and picture side by side | {ms(heard)} |",
        "",
        "The capture ends when scsynth has counted the seconds in its own blocks; the "
        "headless dummy driver runs its blocks slower than the wall clock on a busy machine "
        f"({statistics.median(captured) / SECONDS * 100:.1f} % here at the median), which is "
        "most of the capture's share: a sound card's clock does not lag so. The rest of "
        "the total is the MCP round trip with the PNG (about 70 kB) as image content.",
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
