"""What the installation's hours cost ``scorch run``'s start-up: reading a config with and
without a schedule, each in a fresh Python, against this checkout without one (the baseline).

``python -m bench.hours_startup [--runs 9]``: the median seconds to import the config's
models and read each file, the ratio to the baseline, and the schedule's packages each
imports (croniter, astral, holidays: only where a config has a schedule, and holidays only
where it names a country).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

BASE = 'state_dir = "/tmp/hours-bench"\n[instances.hall]\n'
CONFIGS = {
    "no schedule (baseline)": "",
    "a cron schedule": textwrap.dedent("""
        [[schedule]]
        from = "10:00"
        until = "18:00"
        days = "mon-fri"
        do = [{ op = "scene", action = "recall", name = "day" }]
        """),
    "sun, holidays, cues": textwrap.dedent("""
        [location]
        timezone = "Europe/Berlin"
        latitude = 52.52
        longitude = 13.405
        country = "DE"
        [[schedule]]
        when = "sunset-30m"
        except = ["holidays"]
        do = [{ op = "scene", action = "recall", name = "evening" }]
        [[cues]]
        number = 1
        do = [{ op = "stop", instance = "*" }]
        """),
}
PROBE = ("import sys, time, json; t = time.perf_counter(); "
         "from scorch.config.installation import load_config; load_config(sys.argv[1]); "
         "print(json.dumps([time.perf_counter() - t, sorted({m.split('.')[0] for m in "
         "sys.modules} & {'croniter', 'astral', 'holidays', 'dateutil'})]))")


def main() -> None:
    """Print each config's median load time, its ratio to the baseline and what it imported."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, body in CONFIGS.items():
            paths[name] = Path(folder) / f"{len(paths)}.toml"
            paths[name].write_text(BASE + body)
        times: dict[str, list[float]] = {name: [] for name in CONFIGS}
        loaded: dict[str, list[str]] = {}
        for _ in range(runs):  # interleaved: a load spike hits every config alike
            for name, path in paths.items():
                out = subprocess.run([sys.executable, "-c", PROBE, str(path)], check=True,
                                     capture_output=True, text=True).stdout
                took, modules = json.loads(out)
                times[name].append(took)
                loaded[name] = modules
    base = statistics.median(times["no schedule (baseline)"])
    for name, found in times.items():
        median = statistics.median(found)
        print(f"{name}: median {median * 1000:.0f} ms ({median / base:.2f}x the baseline); "
              f"imports {', '.join(loaded[name]) or 'none of them'} ({runs} runs)")


if __name__ == "__main__":
    main()
