"""Run every benchmark in turn (``make bench``); each prints its own figures."""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = (
    "bench.rooms.boot", "bench.rooms.chaos", "bench.rooms.chaos_phases", "bench.midi.latency",
    "bench.midi.clock", "bench.mcp_roundtrip", "bench.mcp_handshake",
    "bench.knowledge", "bench.tool_fuzz",
    "bench.rooms.execute_diff", "bench.rooms.memory", "bench.audio.analysis",
    "bench.audio.listen", "bench.audio.render", "bench.audio.record", "bench.hosts",
    "bench.notes_capture", "bench.partner_quality", "bench.midi.answer", "bench.tool_list",
)


def main() -> int:
    failed = []
    for module in BENCHMARKS:
        print(f"\n=== python -m {module}", flush=True)
        if subprocess.run([sys.executable, "-m", module], check=False).returncode != 0:
            failed.append(module)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
