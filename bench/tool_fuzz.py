"""Feed every MCP tool thousands of generated calls and the hostile cases; count the outcomes.

Run with ``python -m bench.tool_fuzz [--calls N]`` (default 3000 generated calls,
a few minutes). The same room, client and input as tests/integration/rooms/test_tool_edges.py,
which makes 80: a real room with a named node, MIDI on JACK, every tool's
inputSchema drawn from by hypothesis-jsonschema with some arguments spoiled.
Every call must end in a result or a clear error, never an internal one or a
hang, and the room must come out READY with every node it means to keep on scsynth. The figures
replace the ``## Tool edges`` section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from bench.report import write_section
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import node_exists
from tests.support.tool_fuzz import (
    HOSTILE,
    Tally,
    Target,
    fuzz_target,
    generated,
    is_finite_json,
    run_call,
)

JACK = "scorch-bench-fuzz"


def storm(target: Target, calls: int, seed: int) -> tuple[Tally, Counter[str]]:
    """``calls`` generated calls after the hostile ones; the room rebooted when one quit it."""
    tally = Tally()
    reboots: Counter[str] = Counter()
    for tool, args in HOSTILE:
        run_call(target.call, tool, args, tally)
    names = sorted(target.schemas)
    strategies = {name: generated(target.schemas[name]).filter(is_finite_json)
                  for name in names}

    @settings(max_examples=calls, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        tool = data.draw(st.sampled_from(names))
        args: dict[str, Any] = data.draw(strategies[tool])
        run_call(target.call, tool, args, tally)
        if target.orchestra.rooms.status("room").state != "READY":
            reboots[tool] += 1
            target.orchestra.rooms.boot("room")
        if tally.calls % 250 == 0:
            print(f"  {tally.calls} calls", flush=True)

    hypothesis_seed(seed)(one)()
    return tally, reboots


def report(tally: Tally, reboots: Counter[str], seconds: float, sound: bool,
           calls: int) -> str:
    generated_calls = tally.calls - len(HOSTILE)
    per_tool = ", ".join(f"{tool} {n}" for tool, n in sorted(tally.by_tool.items()))
    lines = [
        "## Tool edges",
        "",
        f"`.venv/bin/python -m bench.tool_fuzz --calls {calls}` ({date.today()}): one room"
        " with a named node, MIDI on JACK, a real `mcp.Client` in process; the hostile cases"
        f" of tests/support/tool_fuzz.py ({len(HOSTILE)}), then {generated_calls} calls drawn from"
        " each tool's inputSchema by hypothesis-jsonschema, some with one argument spoiled"
        " (wrong type, unknown key), waits capped at 1 s.",
        "",
        "| what | figure | goal |",
        "|---|---|---|",
        f"| calls | {tally.calls} in {seconds:.0f} s |  |",
        f"| results | {tally.results} |  |",
        f"| clear errors (what was wrong, and where) | {tally.clear_errors} |  |",
        f"| internal errors | {len(tally.internal)} | 0: {_met(not tally.internal)} |",
        f"| hangs (no answer in 60 s) | {len(tally.hangs)} | 0: {_met(not tally.hangs)} |",
        f"| slowest call | {tally.slowest:.2f} s |  |",
        f"| room rebooted after a generated call stopped it | {sum(reboots.values())}"
        f" ({', '.join(f'{t} {n}' for t, n in sorted(reboots.items())) or 'none'}) |  |",
        f"| room READY, every desired node on scsynth, none declared hung | {sound} | True:"
        f" {_met(sound)} |",
        "",
        f"Calls per tool: {per_tool}.",
        "",
    ]
    for problem in tally.internal[:10] + tally.hangs[:10]:
        lines.insert(-1, f"- {problem}")
    return "\n".join(lines)


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="scorch-bench-fuzz-") as folder, \
            fuzz_target(Path(folder), JACK, SynthDefLibrary()) as target:
        tally, reboots = storm(target, args.calls, args.seed)
        orch = target.orchestra
        osc = orch.doors["room"].scsynth
        # every node scorch means to keep (a generated release may have ended 'hum') is playing
        sound = (orch.rooms.status("room").state == "READY" and osc is not None
                 and all(node_exists(osc, node.node_id)
                         for node in orch.rooms.nodes("room").values())
                 and not [e for e in orch.rooms.events("room") if e.kind == Kind.HUNG])
    section = report(tally, reboots, time.monotonic() - started, sound, args.calls)
    sys.stdout.write(section)
    if not args.no_write:
        write_section(section)
    return 0 if sound and not tally.internal and not tally.hangs else 1


if __name__ == "__main__":
    sys.exit(main())
