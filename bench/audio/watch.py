"""Benchmark the watch on the sound: scorch's CPU and each scsynth's, with and without it.

Run with ``python -m bench.audio.watch`` (about a minute and a half). An orchestra of
``ROOMS`` rooms on a private dummy-driver JACK server, each playing a sine and
watched (``expect_sound``); the watch is closed and made again in turns (``ROUNDS``
windows of ``WINDOW`` s each way), and each window reads this process's CPU (scorch:
every thread, the rooms' OSC receive threads that feed the watch included) and each
scsynth's (psutil, % of one core). The watch adds no synth to scsynth (it reads the
stage's reports, sent whether or not anyone reads them), so scsynth's columns are
the control: they should not move. The readings are of a sine: tone-like, so the
howl's test runs on each.

The cost of one reading is also timed alone: a stage reading through the watch's
listener (detector, status, no event) against the same reading with no listener,
``READINGS`` times each, in microseconds.

The figures replace the ``## Sound watch`` section of BENCHMARKS.md (``--no-write`` to
skip).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from bench.report import write_section
from scorch.app.orchestra import Orchestra
from scorch.app.soundwatch import SoundWatch
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.synthdefs.stage import REPORT_HZ, StageReading
from scorch.state.view import RoomView

ROOMS = 4
WINDOW = 8.0
ROUNDS = 3
READINGS = 100_000
BODY = """
state_dir = "{folder}/state"
[audio]
driver = "dummy"
jack_server = "scorch-bench-watch"
period = 256
[docs]
build = "on-demand"
[midi]
enabled = false
[watch]
expect_sound = true
"""
SINE = "~sine = { SinOsc.ar(440, 0, 0.2) ! 2 }.play; 1"


def per_reading() -> tuple[float, float]:
    """Microseconds per stage reading delivered without a listener, and through the watch."""
    config = parse_config("[instances.a.watch]\nexpect_sound = true\n")

    class Tree:  # what the watch reads of the tree: the config and the views
        def __init__(self) -> None:
            self.config = config
            self.views = {"a": RoomView("a", None)}

    tree = Tree()
    reading = StageReading(3, 0.2, 0.2, 1.0, 0.0, False, 0.02)  # a sine: the howl's path too
    readings = tree.views["a"].stage_readings
    times = []
    for watched in (False, True):
        watch = SoundWatch(tree) if watched else None  # type: ignore[arg-type]
        start = time.perf_counter()
        for _ in range(READINGS):
            readings.add(reading)
        times.append((time.perf_counter() - start) / READINGS * 1e6)
        if watch is not None:
            watch.close()
    return times[0], times[1]


def window(orch: Orchestra, seconds: float) -> tuple[float, list[float]]:
    """This process's CPU and each scsynth's (% of a core) over ``seconds``."""
    me = psutil.Process()
    synths = [psutil.Process(pid) for view in orch.views.values()
              if (pid := view.snapshot.scsynth_pid) is not None]
    before = [p.cpu_times() for p in (me, *synths)]
    start = time.monotonic()
    time.sleep(seconds)
    took = time.monotonic() - start
    after = [p.cpu_times() for p in (me, *synths)]
    used = [100 * ((a.user + a.system) - (b.user + b.system)) / took
            for a, b in zip(after, before, strict=True)]
    return used[0], used[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print, do not write")
    args = parser.parse_args()
    bare, watched = per_reading()
    print(f"per reading: {bare:.2f} us bare, {watched:.2f} us watched", flush=True)
    found: dict[str, list[tuple[float, list[float]]]] = {"with": [], "without": []}
    with tempfile.TemporaryDirectory() as folder:
        text = BODY.format(folder=folder) + "".join(f"[instances.r{n}]\n" for n in range(ROOMS))
        orch = Orchestra(parse_config(text, Path(folder) / "config.toml"), SynthDefLibrary())
        try:
            orch.start()
            for name in orch.views:
                assert orch.rooms.execute_one(name, SINE, 10.0).ok
            time.sleep(2.0)
            for _ in range(ROUNDS):
                found["with"].append(window(orch, WINDOW))
                orch.sound.close()
                found["without"].append(window(orch, WINDOW))
                orch.sound = SoundWatch(orch._tree)  # the bench remakes it
            sounds = {name: orch.rooms.status(name, live=False).sound for name in orch.views}
        finally:
            orch.stop()
    med = {k: (statistics.median(c for c, _ in v),
               statistics.median(statistics.mean(s) for _, s in v)) for k, v in found.items()}
    (me_on, sc_on), (me_off, sc_off) = med["with"], med["without"]
    heard = sorted({str(s) for s in sounds.values()})
    section = "\n".join([
        "## Sound watch",
        "",
        f"`python -m bench.audio.watch` ({ROOMS} rooms on a private dummy-driver JACK server, "
        f"256 frames at 48 kHz, each playing a sine and watched with expect_sound; the watch "
        f"closed and made again in turns, {ROUNDS} windows of {WINDOW:g} s each way, medians; "
        "this machine's 2 cores are shared with other work). The watch reads the safety "
        f"stage's reports ({REPORT_HZ:g} a second per room, sent anyway): it adds no synth to "
        "scsynth, whose column is the control (the input's power the stage measures for "
        "the howl, one OnePole, is part of the stage's own cost).",
        "",
        "| | scorch CPU, % of a core | scsynth CPU (mean of the rooms), % of a core |",
        "|---|---|---|",
        f"| without the watch | {me_off:.2f} | {sc_off:.2f} |",
        f"| with the watch | {me_on:.2f} | {sc_on:.2f} |",
        f"| watch | {me_on - me_off:+.2f} | {sc_on - sc_off:+.2f} |",
        "",
        f"One stage reading delivered ({READINGS:,} times): {bare:.2f} µs with no listener, "
        f"{watched:.2f} µs through the watch (+{watched - bare:.2f} µs; at {REPORT_HZ:g} "
        f"readings a second that is {(watched - bare) * REPORT_HZ / 1e4:.4f} % of a core "
        f"per room). What the rooms sounded as at the end: {heard}.",
        "",
    ])
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
