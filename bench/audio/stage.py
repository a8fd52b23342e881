"""Benchmark the safety stage: its CPU in scsynth, its latency, and ScorchStage per message.

Run with ``python -m bench.audio.stage`` (about two minutes). One scsynth on a private
JACK server (dummy driver, 64 frames at 48 kHz) plays a sine; the stage is freed and
started again in turns (on, off, on, off... ``ROUNDS`` times each, ``WINDOW`` s each),
and each window reads scsynth's own process CPU (psutil, % of one core) and its
``/status`` average CPU (on JACK: the server's DSP load, this scsynth alone on it). The
shapes measured: 2 channels, 2 with the loudness limit, 8 channels.

The latency is read from an impulse rendered by ``scsynth -N`` with and without the
stage. ScorchStage's part of NetAddr's sends (after issue 37's guard) is timed in a
headless sclang with scorch's classes: 20,000 ``sendMsg`` to a port nobody listens on,
with the room's port set and not, for a message it reads (``/n_set``), one it rewrites
(``/s_new`` at the root's tail) and one it passes by (``/status``).

The figures replace the ``## Safety stage`` section of BENCHMARKS.md (``--no-write``
to skip).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import soundfile

from bench.report import write_section
from scorch.primitives.osc import encode_message
from scorch.primitives.sclang.launch import SCLANG_ENV, class_library_conf
from scorch.primitives.scsynth import placement
from scorch.primitives.scsynth.nrt import bundle, encode_score, end_marker, render
from scorch.primitives.scsynth.server import Scsynth, ScsynthOptions
from scorch.primitives.synthdefs.graph import Graph
from scorch.primitives.synthdefs.scgf import AUDIO
from scorch.primitives.synthdefs.stage import LATENCY, stage_name, stage_synthdef
from scorch.primitives.system.console import Console
from scorch.primitives.system.process import DIE_WITH_PARENT, child_env
from scorch.primitives.system.udp_ports import free_udp_port
from tests.support.harness import jack_server

WINDOW = 6.0
ROUNDS = 3
SHAPES = ((2, False), (2, True), (8, False))


def sine(channels: int) -> bytes:
    """A sine on every output: something for the stage to pass."""
    g = Graph()
    (amp,) = g.controls(amp=0.25)
    tone = g.one("SinOsc", AUDIO, 440.0, 0.0) * amp
    g.ugen("Out", AUDIO, (0.0, *([tone] * channels)), outputs=0)
    return g.synthdef(f"bench_sine_{channels}")


def cpu_window(server: Scsynth, seconds: float) -> tuple[float, float]:
    """scsynth's process CPU (% of a core) and its /status average over ``seconds``."""
    proc = psutil.Process(server.pid)
    before, start = proc.cpu_times(), time.monotonic()
    loads = []
    while time.monotonic() - start < seconds:
        time.sleep(0.25)
        loads.append(server.osc.status(timeout=2.0).avg_cpu)
    after, took = proc.cpu_times(), time.monotonic() - start
    used = (after.user + after.system) - (before.user + before.system)
    return 100 * used / took, statistics.median(loads)


def stage_cpu(jack: str, channels: int, lufs: bool) -> dict[str, tuple[float, float]]:
    """Median (process %, /status %) with and without the stage, alternating."""
    name = stage_name(channels, lufs)
    controls = (("ceiling", -1.0), ("gain", 0.0), *((("lufs", -23.0),) if lufs else ()))
    stage = placement.Stage(name, stage_synthdef(channels, lufs), controls)
    options = ScsynthOptions(name="stagebench", port=free_udp_port(), jack_server=jack,
                             outputs=channels, connect=("none",))
    server = Scsynth.start(options, Console(), lambda proc, code: None, 10.0, stage)
    try:
        server.osc.send(encode_message("/d_recv", sine(channels)))
        server.osc.sync()
        server.osc.send(encode_message("/s_new", f"bench_sine_{channels}", 2000, 0, 1))
        found: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
        for _ in range(ROUNDS):
            found["with"].append(cpu_window(server, WINDOW))
            server.osc.send(encode_message("/n_free", placement.STAGE_NODE))
            server.osc.sync()
            found["without"].append(cpu_window(server, WINDOW))
            server.osc.send(stage.start())
            server.osc.sync()
        return {k: (statistics.median(p for p, _ in v), statistics.median(s for _, s in v))
                for k, v in found.items()}
    finally:
        server.stop()


def latency() -> int:
    """Samples between an impulse in and out of the stage, rendered by scsynth -N."""
    g = Graph()
    g.controls(amp=1.0)
    g.ugen("Out", AUDIO, (0.0, g.one("Impulse", AUDIO, 2.0, 0.0) * 0.5), outputs=0)
    click = g.synthdef("bench_click")
    onsets = []
    with tempfile.TemporaryDirectory() as folder:
        for staged in (False, True):
            score = Path(folder) / f"s{staged}.osc"
            out = Path(folder) / f"s{staged}.wav"
            first = [encode_message("/d_recv", click),
                     encode_message("/d_recv", stage_synthdef(1, False))]
            starts = [encode_message("/s_new", "bench_click", 1000, 0, 0)]
            bundles = [bundle(0.0, *first)]
            if staged:
                bundles.append(bundle(0.01, encode_message("/s_new", stage_name(1), 1001, 1, 0)))
            bundles += [bundle(0.2, *starts), end_marker(1.0)]
            score.write_bytes(encode_score(bundles))
            render(score, out, sample_rate=48000, channels=1, fmt="wav", timeout=60)
            sound, _ = soundfile.read(out)
            onsets.append(int(np.argmax(np.abs(sound) > 0.1)))
    return onsets[1] - onsets[0]


GUARD_SCRIPT = """
(
var addr = NetAddr("127.0.0.1", PORT), n = 20000, time = { |msg|
    var t = Main.elapsedTime; n.do { addr.sendMsg(*msg) }; (Main.elapsedTime - t) / n * 1e6 };
[["/n_set", 1000, "freq", 440], ["/s_new", "x", -1, 1, 0], ["/status"]].do { |msg|
    ScorchStage.port = nil;
    time.(msg); // warm
    ("GUARD " ++ msg[0] ++ " " ++ time.(msg) ++ " " ++ {
        ScorchStage.port = PORT; time.(msg) }.value).postln;
};
)
"""


def guard_cost() -> dict[str, tuple[float, float]]:
    """Microseconds per sendMsg without and with ScorchStage, by command."""
    port = free_udp_port()
    with tempfile.TemporaryDirectory() as folder:
        env = child_env({**SCLANG_ENV, "XDG_CONFIG_HOME": f"{folder}/config",
                         "XDG_DATA_HOME": f"{folder}/data"})
        out = subprocess.run(["sclang", "-i", "scorch", "-l", str(class_library_conf())],
                             input=GUARD_SCRIPT.replace("PORT", str(port)) + "\x0c",
                             env=env, cwd=folder, capture_output=True, text=True, timeout=300,
                             preexec_fn=DIE_WITH_PARENT).stdout
    return {m.group(1): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^GUARD (\S+) (\S+) (\S+)$", out, re.MULTILINE)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print, do not write")
    args = parser.parse_args()
    rows = []
    with jack_server("stagebench", period=64) as jack:
        for channels, lufs in SHAPES:
            found = stage_cpu(jack, channels, lufs)
            (p_on, s_on), (p_off, s_off) = found["with"], found["without"]
            rows.append(f"| {channels}{' + max_lufs' if lufs else ''} | {p_off:.1f} | "
                        f"{p_on:.1f} | {p_on - p_off:+.1f} | {s_off:.2f} | {s_on:.2f} | "
                        f"{s_on - s_off:+.2f} |")
            print(rows[-1], flush=True)
    measured = latency()
    guard = guard_cost()
    guard_rows = [f"| `{cmd}` | {off:.2f} | {on:.2f} | {on - off:+.2f} |"
                  for cmd, (off, on) in guard.items()]
    section = "\n".join([
        "## Safety stage",
        "",
        "`python -m bench.audio.stage` (scsynth on a private dummy-driver JACK server, 64 "
        f"frames at 48 kHz, a sine playing; the stage freed and started again in turns, "
        f"{ROUNDS} windows of {WINDOW:g} s each way, medians; this machine's 2 cores are "
        "shared with other work, so single figures move by a few tenths).",
        "",
        "| outputs | scsynth CPU without, % of a core | with | stage | /status avg without, "
        "% | with | stage |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Latency: {LATENCY} samples by design (the look-ahead's {LATENCY - 7}, the "
        f"interpolator's 6, the inter-sample peak's 1: {LATENCY / 48:.2f} ms at 48 kHz); an "
        f"impulse rendered by `scsynth -N` came out {measured} samples later.",
        "",
        "ScorchStage's part of NetAddr's sends (ScorchStage.sc, after the guard), "
        "microseconds per `sendMsg` to this room's scsynth port, 20,000 each:",
        "",
        "| message | unguarded | guarded | cost |",
        "|---|---|---|---|",
        *guard_rows,
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
