"""Record benchmark: four rooms recording at once, against the same four not recording.

Run: ``.venv/bin/python -m bench.audio.record [--seconds 10]``. Boots four rooms,
each playing a sine, on one private headless jackd, and measures two windows of
the same length: first without recording, then with every room recording its
outputs (stereo 32-bit float WAV, DiskOut inside scsynth). For each window:
xruns (jackd's own reports in its output), the CPU of the processes that do the
work (4 scsynth, jackd, and this Python process, which runs the recorders'
watchers), and scsynth's own average DSP load (``/status``). The figures replace
the ``## Record`` section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from bench.report import write_section
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config

ROOMS = ("north", "south", "east", "west")
#: jackd's reports: a cycle that ran late ("JackTimedDriver::Process XRun = 58 usec"),
#: and each client not finished in that cycle ("JackEngine::XRun: client = ...").
LATE_CYCLE = re.compile(r"Driver::Process XRun")
LATE_CLIENT = re.compile(r"JackEngine::XRun: client")


def config_text(state: Path) -> str:
    rooms = "".join(f"""
[instances.{name}]
synthdefs = ["sine"]
[instances.{name}.nodes.tone]
synthdef = "sine"
params = {{ freq = {220 * (i + 1)}, amp = 0.1 }}
""" for i, name in enumerate(ROOMS))
    return f"""
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "scorch-bench-record"
[midi]
enabled = false
{rooms}"""


def window(orch: Orchestra, seconds: float) -> dict[str, float]:
    """xruns, CPU percent of the working processes, and scsynth's DSP load over ``seconds``."""
    pids = [pid for role, pid in orch.rooms.pids().items() if pid and not role.endswith("sclang")]
    procs = [psutil.Process(pid) for pid in pids] + [psutil.Process()]
    for proc in procs:
        proc.cpu_percent(None)
    mark = orch.jack_console.mark()
    loads: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)  # sampling scsynth's load at a steady pace
        loads += [orch.rooms.status(name).server.avg_cpu for name in ROOMS]
    cpu = sum(proc.cpu_percent(None) for proc in procs)
    lines = [line.text for line in orch.jack_console.since(mark)]
    return {"xruns": sum(bool(LATE_CYCLE.search(text)) for text in lines),
            "late": sum(bool(LATE_CLIENT.search(text)) for text in lines),
            "cycles": seconds * 48000 / 64, "cpu": cpu, "dsp": statistics.mean(loads)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]  # the machine is shared: say how busy it was
    with tempfile.TemporaryDirectory(prefix="scorch-bench-record-") as name:
        folder = Path(name)
        orch = Orchestra(parse_config(config_text(folder / "state"), folder / "config.toml"))
        try:
            assert all(error is None for error in orch.start().values())
            service = LocalService(orch)
            quiet = window(orch, args.seconds)
            for room in ROOMS:
                service.call("record", {"action": "start", "instance": room})
            recording = window(orch, args.seconds)
            rows = []
            for room in ROOMS:
                [row] = service.call("record", {"action": "stop", "instance": room}
                                     ).model_dump()["recordings"]
                rows.append(row)
        finally:
            orch.stop()
    written = sum(row["size"] for row in rows) / 2**20
    lengths = ", ".join(f"{row['seconds']:.2f}" for row in rows)
    section = "\n".join([
        "## Record",
        "",
        f"`.venv/bin/python -m bench.audio.record --seconds {args.seconds:g}` "
        f"({time.strftime('%Y-%m-%d')}, load average {load:.1f} at the start): "
        f"four rooms, each playing a sine, on one headless "
        f"jackd (48 kHz, 64 frames); two windows of {args.seconds:g} s, the second with "
        "every room recording its outputs (stereo float WAV).",
        "",
        "| | xruns (late cycles of about 7500) | late clients reported | CPU % (4 scsynth "
        "+ jackd + scorch) | scsynth DSP load, mean % |",
        "|---|---|---|---|---|",
        *(f"| {label} | {row['xruns']:.0f} | {row['late']:.0f} | {row['cpu']:.1f} | "
          f"{row['dsp']:.1f} |" for label, row in (("not recording", quiet),
                                                   ("all four recording", recording))),
        "",
        f"The four files hold {lengths} s ({written:.1f} MiB in all), recorded over a little "
        f"more than {args.seconds:g} s by the wall clock: the headless driver's blocks run a "
        "few percent slow on this machine. DiskOut writes from "
        "scsynth's own disk thread, half a buffer (16384 frames) at a time; the audio "
        "thread only copies samples into the buffer. The xruns are the headless dummy "
        "driver's without realtime scheduling at 64 frames on a shared machine, recording "
        "or not. CPU % is per core (200 % is both cores of this machine).",
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
