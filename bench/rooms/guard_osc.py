"""What sclang's guard costs each OSC message sclang sends (issue 37).

Run: ``.venv/bin/python -m bench.rooms.guard_osc``. A headless sclang with scorch's
guard classes sends the same messages to a closed UDP port three ways, in
interleaved rounds: straight through the primitive (the baseline, as sclang sends
without scorch), through ``NetAddr:sendMsg`` before the guard is on, and after it
is on (each message's first and last arguments looked at: ``/b_write``, a
completion message). Prints microseconds per message, median of the rounds, and
the ratios; writes the "sclang's guard" section of BENCHMARKS.md.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from scorch.primitives.disk.folders import Folders
from scorch.primitives.sclang.guard import ENV, write_guard
from scorch.primitives.sclang.launch import SCLANG_ENV, guard_library_conf

ROUNDS = 7
MESSAGES = 20_000
SCRIPT = r"""
(
var addr = NetAddr("127.0.0.1", 9), n = %(n)d, msg = [\n_set, 1000, \freq, 440.0, \amp, 0.1];
var time = { |f| var t = Main.elapsedTime; n.do(f); (Main.elapsedTime - t) / n * 1e6 };
var round = { |label|
    ("@@ " ++ label ++ " raw " ++ time.({ addr.prScorchSendMsg(*msg) })).postln;
    ("@@ " ++ label ++ " guard " ++ time.({ addr.sendMsg(*msg) })).postln;
};
%(rounds)d.do { round.("off") };
ScorchGuard.activate;
%(rounds)d.do { round.("on") };
0.exit;
)
"""


def run() -> dict[tuple[str, str], list[float]]:
    """Microseconds per message, each round, by (guard off/on, raw/guard)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        guard = write_guard(work / "guard.txt", False, Folders.of([work], [], []))
        script = work / "bench.scd"
        script.write_text(SCRIPT % {"n": MESSAGES, "rounds": ROUNDS})
        env = {**SCLANG_ENV, ENV: str(guard), "XDG_CONFIG_HOME": str(work / "config")}
        done = subprocess.run(["sclang", "-l", str(guard_library_conf()), str(script)],
                              env={**os.environ, **env}, cwd=work,
                              capture_output=True, text=True, timeout=600, check=False)
    found: dict[tuple[str, str], list[float]] = {}
    for state, way, micros in re.findall(r"^@@ (off|on) (raw|guard) ([\d.e+-]+)$",
                                         done.stdout, re.MULTILINE):
        found.setdefault((state, way), []).append(float(micros))
    return found


def main() -> None:
    started = time.monotonic()
    found = run()
    median = {key: statistics.median(values) for key, values in found.items()}
    base = statistics.median([*found[("off", "raw")], *found[("on", "raw")]])
    rows = [("straight through the primitive (baseline)", base),
            ("NetAddr:sendMsg, guard not yet on", median[("off", "guard")]),
            ("NetAddr:sendMsg, guard on", median[("on", "guard")])]
    lines = [
        "## sclang's guard",
        "",
        f"`.venv/bin/python -m bench.rooms.guard_osc` ({time.strftime('%Y-%m-%d')}): "
        f"{MESSAGES} `/n_set` messages from a headless sclang to a closed UDP port, "
        f"{ROUNDS} interleaved rounds of each way, median microseconds per message "
        f"({time.monotonic() - started:.0f} s). Every OSC message sclang sends passes the "
        "guard (a `/b_write` goes only where the installation allows); the MIDI path never "
        "goes through sclang.",
        "",
        "| way | µs per message | against the baseline |",
        "|---|---|---|",
        *(f"| {label} | {value:.2f} | {value / base:.2f}x |" for label, value in rows),
    ]
    text = "\n".join(lines)
    print(text)
    write_section(text)


if __name__ == "__main__":
    main()
