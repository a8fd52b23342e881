"""Benchmark the hook that sees each event a pattern plays (``ScorchPatternEvents.sc``).

Run with ``python -m bench.pattern_events`` (about a minute: it boots one room).
Two measures, in the same run:

- in the room's sclang, per event: a Pbind's events computed and played (sent
  to the room's scsynth), without the hook and with it (the default event's
  callback, and a ``flush`` every 500 events, as the batches go), in
  interleaved rounds; microseconds per event, medians, and the hook's cost as a
  share of the event's own.
- in scorch's process, per event: reading a batch of 500 (``parse_events``)
  and keeping its notes in the pattern's ring, as the sclang reader thread does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import timeit
from pathlib import Path

from actors.room.patterns import keep
from bench.report import write_section
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.notes.capture import Capture
from scorch.primitives.sclang.pattern_events import parse_events
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.tempo import Timeline

#: One round in sclang: EVENTS events of a Pbind played (sent to scsynth) without the hook,
#: then with it (the other way round on odd rounds), a flush and the synths freed every
#: 500; the answer is "bare hooked" in seconds.
ROUND = """
var n = {events}, chunk = 500, parent = Event.parentEvents.default, hook = parent[\\callback];
var run = {{ |on|
    var st = Pbind(\\degree, Pseq((0..7), inf), \\dur, 0.25, \\amp, 0.001,
        \\sendGate, false).asStream, t0, spent = 0;
    parent[\\callback] = if(on) {{ hook }} {{ nil }};
    (n div: chunk).do {{
        t0 = Main.elapsedTime;
        chunk.do {{ st.next(Event.default).play }};
        if(on) {{ ScorchPatternEvents.flush }};
        spent = spent + (Main.elapsedTime - t0);
        Server.default.defaultGroup.freeAll;
    }};
    parent[\\callback] = hook;
    spent }};
var bare, hooked;
if({odd}) {{ hooked = run.(true); bare = run.(false) }} {{
    bare = run.(false); hooked = run.(true) }};
bare.asString ++ " " ++ hooked.asString
"""


def in_sclang(rounds: int, events: int) -> tuple[list[float], list[float]]:
    """Microseconds per event, without and with the hook, one figure per round."""
    folder = Path(tempfile.mkdtemp(prefix="scorch-bench-events-"))
    jack = f"scorch-bench-ev-{os.getpid()}"
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack}"\n[docs]\nbuild = "on-demand"\n[midi]\nenabled = false\n'
            "[instances.bench]\n")
    orch = Orchestra(parse_config(text, folder / "config.toml"), SynthDefLibrary())
    bare: list[float] = []
    hooked: list[float] = []
    try:
        assert orch.start() == {"bench": None}
        for index in range(rounds):
            code = ROUND.format(events=events, odd="true" if index % 2 else "false")
            result = orch.rooms.execute_one("bench", code, timeout=120)
            assert result.ok and result.value is not None, result
            plain, hook = (float(x) for x in result.value.split())
            bare.append(plain / events * 1e6)
            hooked.append(hook / events * 1e6)
    finally:
        orch.stop()
    return bare, hooked


def in_python(repeat: int) -> float:
    """Microseconds per event to read a 500-event batch and keep its notes (best of)."""
    # each event with its beat on the grid's clock (the onset is that beat's time)
    lines = [f"{10 + i * 0.125:.6f}\t{20 + i * 0.25:g}\t0.1\t0.2\t{60 + i % 12}\tPdef bench"
             for i in range(500)]
    payload = "1700000000.0\n" + "\n".join(lines)
    capture = Capture(2048)
    grid = Timeline(120.0, 4, beat=0.0, at=0.0)

    def once() -> None:
        keep(capture, "bench", parse_events(payload), -1700000000.0, grid)

    best = min(timeit.repeat(once, number=20, repeat=repeat)) / 20
    return best / 500 * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    bare, hooked = in_sclang(args.rounds, args.events)
    python = in_python(7)
    load = os.getloadavg()[0]
    b, h = statistics.median(bare), statistics.median(hooked)
    ratios = [y / x - 1 for x, y in zip(bare, hooked, strict=True)]
    report = (
        "## Pattern events\n\n"
        f"`.venv/bin/python -m bench.pattern_events` ({time.strftime('%Y-%m-%d')}; load "
        f"average {load:.1f} on {os.cpu_count()} cores, so compare within a run): "
        f"{args.rounds} interleaved rounds of {args.events} events of an 8-step Pbind in "
        "one room's sclang, each computed and played (sent to scsynth), without the hook "
        "and with it (`ScorchPatternEvents.heard` as the default event's callback, a flush "
        "per 500 events); medians.\n\n"
        "| per event | µs |\n|---|---|\n"
        f"| an event computed and played (baseline) | {b:.2f} |\n"
        f"| the same and the hook | {h:.2f} |\n"
        f"| the hook alone (difference) | {h - b:.2f} |\n"
        f"| hook / baseline | {statistics.median(ratios):.0%} "
        f"(rounds {min(ratios):.0%} to {max(ratios):.0%}) |\n"
        f"| scorch: read the batch and keep the notes (best of 7) | {python:.2f} |\n\n"
        "The rounds run in one request (``execute``), so nothing else runs in sclang "
        "meanwhile; the synths are freed between chunks, outside the timed part.\n")
    print(report)
    if args.write:
        write_section(report)


if __name__ == "__main__":
    main()
