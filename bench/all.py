"""Run every benchmark in turn (``make bench``); each prints its own figures."""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = ("bench.boot", "bench.chaos", "bench.chaos_phases", "bench.midi_latency",
              "bench.midi_clock",
              "bench.mcp_roundtrip", "bench.knowledge", "bench.tool_fuzz", "bench.execute_diff",
              "bench.memory", "bench.audio_analysis", "bench.audio_listen", "bench.audio_render",
              "bench.audio_record", "bench.hosts", "bench.notes_capture", "bench.partner_quality")


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
