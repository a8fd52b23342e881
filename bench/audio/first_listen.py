"""First-listen benchmark: a fresh ``scorch mcp``'s first ``listen``, and ``scorch run``'s start.

Run: ``.venv/bin/python -m bench.audio.first_listen [--runs 3] [--before /work/main]``.
Spawns ``scorch mcp`` over stdio as Claude Desktop does (one room playing a 440 Hz
sine on a private headless jackd), waits for READY, waits some seconds (a model's
first few calls), then calls ``listen`` twice: the time beyond its seconds of each.
``--listen 4@0 4@10 1@10``: a listen of 4 s right at READY, of 4 s and of 1 s 10 s
after it (a short capture hides less of the libraries' load). Then ``scorch run``:
spawn to its READY table, and its RSS at READY and 20 s later. With ``--before TREE``
every figure is measured for that checkout too, run for run interleaved with this one
(the same hour, the same load): its code, this interpreter and packages. The figures
replace the ``## First listen`` section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import anyio
import psutil
from mcp import Client, StdioServerParameters

from bench.report import write_section

HERE = Path(__file__).resolve().parents[2]
#: Seconds between two measurements, for the last one's processes to end.
SETTLE = 3.0
CONFIG = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "scorch-bench-firstlisten"
[docs]
build = "on-demand"
[midi]
enabled = false
[instances.room]
synthdefs = ["sine"]
[instances.room.nodes.tone]
synthdef = "sine"
params = {{ freq = 440, amp = 0.3 }}
"""


def environment(tree: Path) -> dict[str, str]:
    """This interpreter's environment, importing scorch from ``tree``."""
    return {**os.environ, "PYTHONPATH": str(tree)}


async def listens(tree: Path, folder: Path, seconds: float, after: float,
                  ) -> tuple[float, float, float]:
    """Seconds from spawn to READY, and beyond ``seconds`` of the first and second listen."""
    config = folder / "config.toml"
    config.write_text(CONFIG.format(state=folder / "state"))
    params = StdioServerParameters(  # its log to a file, as Claude Desktop keeps it
        command="sh", args=["-c", 'exec "$0" -m scorch.cli.main mcp --config "$1" 2>>"$2"',
                            sys.executable, str(config), str(folder / "mcp.log")],
        env=environment(tree), cwd=str(tree))
    spawned = time.perf_counter()
    async with Client(params) as client:
        while True:
            listed = await client.call_tool("list_instances", {})
            rows = (listed.structured_content or {}).get("instances", [])
            if rows and all(r["state"] == "READY" for r in rows):
                break
            await anyio.sleep(0.05)
        ready = time.perf_counter() - spawned
        await anyio.sleep(after)
        beyond = []
        for _ in range(2):
            started = time.perf_counter()
            heard = await client.call_tool("listen", {"instance": "room", "seconds": seconds},
                                           read_timeout_seconds=120)
            assert not heard.is_error, heard
            beyond.append(time.perf_counter() - started - seconds)
    return ready, beyond[0], beyond[1]


def in_session(tree: Path, seconds: float, after: float, folder: Path,
               ) -> tuple[float, float, float]:
    """:func:`listens` in its own event loop."""
    return anyio.run(listens, tree, folder, seconds, after)


def run_start(tree: Path, folder: Path) -> tuple[float, float, float]:
    """``scorch run``: seconds from spawn to its READY table, RSS in MB then and 20 s later."""
    config = folder / "config.toml"
    config.write_text(CONFIG.format(state=folder / "state"))
    spawned = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config",
                             str(config)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=environment(tree), cwd=tree)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if " READY" in line:
                break
        ready = time.perf_counter() - spawned
        rss = psutil.Process(proc.pid).memory_info().rss / 1e6
        time.sleep(20.0)
        later = psutil.Process(proc.pid).memory_info().rss / 1e6
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return ready, rss, later


def med(values: list[float], scale: float = 1.0, unit: str = "s", digits: int = 2) -> str:
    return (f"{statistics.median(values) * scale:.{digits}f} {unit} "
            f"({min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--listen", nargs="*", default=["4@0", "4@10", "1@10"],
                        help="SECONDS@AFTER: a listen of SECONDS, AFTER seconds past READY")
    parser.add_argument("--before", type=Path, help="a checkout to measure beside this one")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    trees = {"after": HERE, **({"before": args.before.resolve()} if args.before else {})}
    load = os.getloadavg()[0]  # the machine is shared: say how busy it was
    found: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    scenarios = {text: tuple(float(x) for x in text.split("@")) for text in args.listen}

    def measure(key: tuple[str, str], how: Callable[[Path], tuple[float, ...]]) -> None:
        time.sleep(SETTLE)  # the last one's processes end first
        with tempfile.TemporaryDirectory(prefix="scorch-bench-first-") as name:
            found.setdefault(key, []).append(how(Path(name)))
            print(key, found[key][-1], flush=True)

    for _ in range(args.runs):
        for label, tree in trees.items():
            for text, (seconds, after) in scenarios.items():
                measure((label, text), partial(in_session, tree, seconds, after))
            measure((label, "run"), partial(run_start, tree))
    rows = []
    for text, (seconds, after) in scenarios.items():
        for label in trees:
            got = found[(label, text)]
            rows.append(f"| {label} | {seconds:g} s, {after:g} s after | "
                        f"{med([g[0] for g in got])} | {med([g[1] for g in got])} | "
                        f"{med([g[2] for g in got])} |")
    runs = [f"| {label} | {med([g[0] for g in found[(label, 'run')]])} | "
            f"{med([g[1] for g in found[(label, 'run')]], unit='MB', digits=0)} | "
            f"{med([g[2] for g in found[(label, 'run')]], unit='MB', digits=0)} |"
            for label in trees]
    section = "\n".join([
        "## First listen",
        "",
        f"`.venv/bin/python -m bench.audio.first_listen --runs {args.runs}"
        + (f" --before {args.before}" if args.before else "")
        + f"` ({time.strftime('%Y-%m-%d %H:%M')}, load average {load:.1f} at the start): "
        "a fresh `scorch mcp` over stdio (one room playing a sine), `listen` twice, first "
        "right at READY or some seconds after it; then `scorch run`. Medians (min-max) of "
        "the runs, the two checkouts interleaved run for run.",
        "",
        "| code | listen: seconds, when | spawn to READY | first listen: beyond its seconds | "
        "second listen |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "| code | `scorch run`: spawn to READY | RSS at READY | RSS 20 s later |",
        "|---|---|---|---|",
        *runs,
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
