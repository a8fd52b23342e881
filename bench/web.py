"""What the technician's page costs: scorch's CPU with the page open (meters at 20 Hz) or
closed, and the MIDI end-to-end time into scsynth either way, in one run.

Run: ``.venv/bin/python -m bench.web [--seconds 30] [--samples 200] [--runs 2] [--write]``.
Each run starts
``scorch run`` with 4 headless rooms (a JACK dummy server), ``[web] listen`` on
loopback with ``meter_hz = 20``, and a MIDI control route from a JACK port this
benchmark plays (CC 1) to room0's named node ``hum`` (``freq``). Then, page closed
and page open (one stream of ``/api/stream`` read as a browser reads it: the server's
work is the same whatever shows it):

- CPU of scorch's own process (utime + stime, its threads, not scsynth or sclang) over
  ``--seconds``, as % of one core;
- the rooms' scsynths' CPU, two ways: their processes' own (utime + stime of the 4,
  summed, % of one core) and what ``/status`` reports (average CPU, asked of every room
  once a second and averaged; on JACK it is ``jack_cpu_load``, the whole JACK server's
  DSP load, % of the audio period): the meter synths' cost inside the rooms (page open)
  against none (page closed);
- MIDI end to end: from ``send_message`` on the JACK port to the moment scsynth holds
  the new value, read by ``/s_get`` polled back to back (each poll a loopback round
  trip, so a figure is an upper bound, within about one poll).
The load average is printed beside: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.idle import NAMES, cpu_seconds, per_thread, threads
from bench.report import write_section
from scorch.primitives.system.process import DIE_WITH_PARENT
from scorch.wire.access import TOKEN_FILE

JACK = os.environ.get("SCORCH_TEST_JACK", "scorch-bench") + "-web"
ROOMS = 4
PORT_NAME = "benchweb"
SETTLE = 5.0
#: Threads of scorch named in the report, the busiest first.
BUSIEST = 5


def config_text(state: Path, port: int) -> str:
    rooms = "".join(f'\n[instances.room{i}]\nsynthdefs = ["sine"]\n' for i in range(ROOMS))
    return f"""state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{JACK}"
[docs]
build = "on-demand"
[web]
listen = "127.0.0.1:{port}"
meter_hz = 20
[midi]
backend = "jack"
inputs = ["{PORT_NAME}"]
[[midi.controls]]
port = "{PORT_NAME}"
cc = 1
instance = "room0"
node = "hum"
param = "freq"
range = [100, 1370]
takeover = "immediate"
{rooms}
[instances.room0.nodes.hum]
synthdef = "sine"
params = {{ freq = 100, amp = 0.05 }}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Reader:
    """A page's stream, read in a thread until closed."""

    def __init__(self, url: str, token: str) -> None:
        self.events = 0
        self._response = urllib.request.urlopen(urllib.request.Request(
            url + "api/stream", headers={"Authorization": f"Bearer {token}"}), timeout=10)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self._response:
                if line.startswith(b"event:"):
                    self.events += 1
        except (OSError, ValueError, AttributeError):
            pass  # closed under the reader (http.client drops its file on close)

    def close(self) -> None:
        self._response.close()


def latency(out: Any, osc: Any, node: int, samples: int) -> dict[str, float]:
    """Send CC 1 = v and poll /s_get until freq = 100 + 10 v; the times in ms.

    A message that never arrives within a second (JACK drops the MIDI of the cycles
    its dummy driver missed, on a loaded machine) is counted as lost.
    """
    from scorch.primitives.scsynth.commands import Cmd, Reply

    times = []
    lost = 0
    value = 0
    for _ in range(samples):
        value = value % 126 + 1
        want = 100.0 + 10.0 * value
        start = time.perf_counter()
        out.send_message([0xB0, 1, value])
        while True:
            reply = osc.request(Cmd.S_GET, node, "freq", reply=Reply.N_SET, timeout=1.0,
                                match=lambda m: m.args[0] == node)
            if abs(float(reply.args[2]) - want) < 0.01:
                times.append((time.perf_counter() - start) * 1000)
                break
            if time.perf_counter() - start > 1.0:
                lost += 1
                break
        time.sleep(0.02)
    times.sort()
    return {"p50": times[len(times) // 2], "p99": times[int(len(times) * 0.99)],
            "max": times[-1], "lost": lost}


def phase(proc: subprocess.Popen[str], seconds: float, out: Any, osc: Any, node: int,
          samples: int, rooms: list[Any], pids: list[int]) -> dict[str, Any]:
    time.sleep(SETTLE)
    cpu0, look0, t0 = cpu_seconds(proc.pid), threads(proc.pid), time.monotonic()
    synths0 = sum(cpu_seconds(pid) for pid in pids)
    scsynth: list[float] = []
    while time.monotonic() - t0 < seconds:  # scsynth's own figure, once a second
        scsynth.extend(room.status().avg_cpu for room in rooms)
        time.sleep(1.0)
    span = time.monotonic() - t0
    cpu = 100 * (cpu_seconds(proc.pid) - cpu0) / span
    _, by_thread, _ = per_thread(look0, threads(proc.pid), span)
    synths = 100 * (sum(cpu_seconds(pid) for pid in pids) - synths0) / span
    busiest = dict(sorted(by_thread.items(), key=lambda kv: -kv[1])[:BUSIEST])
    return {"cpu": cpu, "threads": busiest, "scsynths": synths,
            "scsynth": sum(scsynth) / len(scsynth), "load": os.getloadavg()[0],
            "midi": latency(out, osc, node, samples)}


def run(seconds: float, samples: int) -> dict[str, Any]:
    from scorch.api.remote import RemoteService
    from scorch.primitives.scsynth.client import OscClient

    with tempfile.TemporaryDirectory(prefix="scorch-web-") as work:
        port = free_port()
        path = Path(work) / "config.toml"
        path.write_text(config_text(Path(work) / "state", port))
        # Its threads named after themselves (bench/thread_names): where the time goes.
        paths = [str(NAMES), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config",
                                 str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, preexec_fn=DIE_WITH_PARENT, env=env)
        assert proc.stdout is not None
        out = None
        try:
            lines = [proc.stdout.readline() for _ in range(2 + ROOMS)]
            assert all("READY" in line for line in lines[2:]), lines
            os.environ["JACK_DEFAULT_SERVER"] = JACK
            os.environ["JACK_NO_START_SERVER"] = "1"
            import rtmidi

            out = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name=PORT_NAME)
            out.open_virtual_port(PORT_NAME)
            api = RemoteService(Path(work) / "state" / "control.sock")
            status = {r["name"]: r for r in api.call("status", {}).model_dump()["instances"]}
            node = status["room0"]["nodes"]["hum"]["node_id"]
            osc = OscClient(status["room0"]["port"])
            rooms = [OscClient(status[f"room{i}"]["port"]) for i in range(ROOMS)]
            pids = [status[f"room{i}"]["pids"]["scsynth"] for i in range(ROOMS)]
            deadline = time.monotonic() + 20
            while not any(PORT_NAME in p for p in
                          api.call("midi", {"action": "ports"}).model_dump()["result"]["inputs"]):
                assert time.monotonic() < deadline, "the router did not open the port"
                time.sleep(0.2)
            url = f"http://127.0.0.1:{port}/"
            closed = phase(proc, seconds, out, osc, node, samples, rooms, pids)
            token = (Path(work) / "state" / TOKEN_FILE).read_text().strip()
            reader = Reader(url, token)
            try:
                opened = phase(proc, seconds, out, osc, node, samples, rooms, pids)
                view = json.loads(urllib.request.urlopen(urllib.request.Request(
                    url + "api/view", headers={"Authorization": f"Bearer {token}"}),
                    timeout=10).read())
                metered = sum(r["meter"] is not None for r in view["rooms"])
                events = reader.events
            finally:
                reader.close()
            for client in (osc, *rooms):
                client.close()
            api.close()
        finally:
            if out is not None:
                out.delete()
            proc.terminate()
            proc.wait(timeout=60)
    return {"closed": closed, "open": opened, "metered": metered, "events": events,
            "seconds": seconds, "samples": samples}


def report(runs: list[dict[str, Any]]) -> str:
    rows = []
    for i, r in enumerate(runs, 1):
        for name in ("closed", "open"):
            p = r[name]
            m = p["midi"]
            rows.append(f"| {i} | page {name} | {p['cpu']:.1f} % | {p['scsynths']:.1f} % | "
                        f"{p['scsynth']:.1f} % | "
                        f"{m['p50']:.2f} | {m['p99']:.2f} | {m['max']:.2f} | {m['lost']} | "
                        f"{p['load']:.2f} |")
    busiest = [f"- run {i}, page {name}: " + ", ".join(
        f"`{thread}` {cpu:.1f} %" for thread, cpu in run[name]["threads"].items())
        for i, run in enumerate(runs, 1) for name in ("closed", "open")]
    r = runs[0]
    events = ", ".join(str(run["events"]) for run in runs)
    metered = ", ".join(f"{run['metered']} of {ROOMS}" for run in runs)
    return "\n".join([
        "## Technician's page",
        "",
        f"`python -m bench.web --runs {len(runs)} --write`: each run one `scorch run` of "
        f"{ROOMS} headless rooms, `[web] meter_hz = 20`, measured page closed then page open "
        f"(one `/api/stream` reader; events received: {events}; rooms metered: {metered}) "
        f"over {r['seconds']:g} s each. scorch: its own process (scsynth and sclang not "
        f"counted), % of one core. scsynths: the 4 rooms' scsynth processes, summed, % of one "
        f"core; page open, each runs the meter synth. JACK DSP: what the rooms' `/status` "
        f"reports as average CPU, every room asked once a second and averaged; on JACK it is "
        f"`jack_cpu_load`, the whole server's DSP load (% of the audio period), not one "
        f"room's. MIDI end to end: CC sent on a JACK port until scsynth holds the new "
        f"value, read by `/s_get` polled back to back, {r['samples']} samples, ms (an upper "
        f"bound by about one poll); lost: never arrived within 1 s (JACK's dummy driver drops "
        f"the MIDI of the cycles it misses on a loaded machine). load: the 1-minute load "
        f"average at the end of the phase (2 cores, shared).",
        "",
        "| run | | scorch CPU | scsynths | JACK DSP | MIDI p50 | p99 | max | lost | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "scorch's busiest threads (% of one core; room numbers folded, `bench/thread_names`):",
        "",
        *busiest,
        "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="replace BENCHMARKS.md's section")
    args = parser.parse_args()
    text = report([run(args.seconds, args.samples) for _ in range(args.runs)])
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
