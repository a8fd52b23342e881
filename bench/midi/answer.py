"""Benchmark the partner's live answer: its delay after the pause, its stop, its hot-path cost.

Run with ``python -m bench.midi.answer`` (about a minute for 10 rounds). Two measures:

- On the MIDI hot path, in process: ns per message of the answer's hook
  (:meth:`Answerer.heard`, what the input thread calls after keeping a message)
  beside the capture it follows (:meth:`NoteRing.message`), ``timeit``, best of 7.
- End to end, on real processes: an orchestra (one room on a dummy JACK server,
  MIDI on JACK), a performer on a JACK MIDI virtual port playing a phrase of 8
  notes, the partner answering after 1 beat of pause (120 bpm), the performer
  coming back in during a note of the answer. scsynth's own ``/n_go`` and
  ``/n_end`` notifications time it (tests/support/midi/answer.py): the first
  voice against the grid beat it was due on, and the held voices' end against the
  key press.

The figures replace the ``## Partner answer`` section of BENCHMARKS.md (``--no-write``
to skip).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from actors.router.answer import Answerer
from bench.report import write_section
from scorch.notes.capture import NoteRing
from scorch.notes.partner import Phrase
from scorch.state.tempo import Timeline

if TYPE_CHECKING:
    from scorch.app.partner import Controls


def hot_path(count: int = 200_000, repeat: int = 7) -> dict[str, float]:
    """ns per note message: the capture, the capture and the answer's hook, a bare call."""
    messages = [(float(i) * 0.01, status, 36 + (i // 2) % 48, velocity)
                for i in range(count // 2) for status, velocity in ((0x90, 100), (0x80, 0))]
    ring = NoteRing("bench", 4096)
    answerer = Answerer("bench", ring, lambda heard: Phrase([], [], []),
                        lambda: Timeline(120.0), _NoVoices())

    def bare(t: float, status: int, data1: int, data2: int) -> None:
        pass

    def body(*calls: Callable[[float, int, int, int], None]) -> Callable[[], None]:
        def run() -> None:
            for t, status, data1, data2 in messages:
                for call in calls:
                    call(t, status, data1, data2)
        return run

    variants = {"bare": body(bare), "capture": body(ring.message),
                "capture + answer hook": body(ring.message, answerer.heard),
                "answer hook": body(answerer.heard)}
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeat):  # interleaved: a burst of load spoils one round of each, not one
        for name, run in variants.items():
            best[name] = min(best[name], timeit.timeit(run, number=1))
    return {name: seconds / len(messages) * 1e9 for name, seconds in best.items()}


class _NoVoices:
    def start(self, note: object) -> int:
        return 0

    def end(self, handle: int) -> None:
        pass

    def cut(self, handles: list[int]) -> None:
        pass

    def close(self) -> None:
        pass


def end_to_end(rounds: int) -> dict[str, list[float]]:
    """Answer ``rounds`` phrases on real processes; the delays and stops measured."""
    from scorch.app.orchestra import Orchestra
    from scorch.config.installation import parse_config
    from scorch.primitives.synthdefs.library import SynthDefLibrary
    from tests.support.midi.answer import NodeWatch, Uncut, answer_once
    from tests.support.midi.devices import Hardware

    folder = Path(tempfile.mkdtemp(prefix="bench-answer-"))
    jack = f"bench-answer-{os.getpid() % 1000}"
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack}"\n[docs]\nbuild = "on-demand"\n[tempo]\nbpm = 120\n'
            '[midi]\nbackend = "jack"\nrescan_interval = 0.1\n'
            '[instances.lobby]\nsynthdefs = ["sine"]\n')
    orch = Orchestra(parse_config(text, folder / "config.toml"), SynthDefLibrary())
    orch.start()
    keys = watch = None
    figures: dict[str, list[float]] = {"late": [], "stop": [], "freed": [], "uncut": []}
    try:
        keys = Hardware("bench-partner", "bench-hw", orch.config.audio.jack_server)
        deadline = time.monotonic() + 10
        while "bench-partner" not in " ".join(orch.notes.capture().rings):
            assert time.monotonic() < deadline, "the router never captured the port"
            keys.send(0x90, 21, 1)
            keys.send(0x80, 21, 0)
            time.sleep(0.05)
        port = orch.rooms.status("lobby").port
        assert port is not None
        watch = NodeWatch(port)
        source = orch.partner.source("bench-partner")
        orch.partner.answer_on(source, orch.partner.room_voices("lobby", "sine"), 1.0, 6,
                               _controls())
        while len(figures["late"]) < rounds:
            try:
                measured = answer_once(orch, keys, watch, pause_beats=1.0)
            except Uncut:
                figures["uncut"].append(1.0)
                assert len(figures["uncut"]) <= rounds, "the answers keep ending too soon"
                continue
            figures["late"].append(measured.late)
            figures["stop"].append(measured.stop)
            answer = measured.answer
            assert answer.cut is not None and answer.cut_by is not None
            figures["freed"].append(answer.cut - answer.cut_by)
    finally:
        if watch is not None:
            watch.close()
        if keys is not None:
            keys.unplug()
        orch.stop()
    return figures


def _controls() -> Controls:
    from scorch.app.partner import Controls
    return Controls(seed=1)


def _row(name: str, values: list[float]) -> str:
    ms = sorted(v * 1e3 for v in values)
    p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
    return (f"| {name} | {statistics.median(ms):.2f} | {p90:.2f} | {ms[0]:.2f} | "
            f"{ms[-1]:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    cost = hot_path()
    figures = end_to_end(args.rounds)
    load = os.getloadavg()[0]
    section = "\n".join([
        "## Partner answer",
        "",
        f"`.venv/bin/python -m bench.midi.answer --rounds {args.rounds}` "
        f"({time.strftime('%Y-%m-%d')}; load average {load:.1f} on {os.cpu_count()} cores). "
        "A performer on a JACK MIDI virtual port (dummy JACK server, 48 kHz, 64 frames: one "
        "period is 1.33 ms) plays 8 notes; the partner answers after 1 beat of pause at "
        "120 bpm, in a room on scsynth, from the next beat; the performer comes back in "
        "40 ms into the answer's first note held 0.1 s or longer. Times from scsynth's "
        "own `/n_go` and `/n_end`. Rounds whose answer had ended before the key press (not timed): "
        f"{len(figures['uncut'])}.",
        "",
        "| ms | median | p90 | min | max |",
        "|---|---|---|---|---|",
        _row("first voice's /n_go after the grid beat it was due on", figures["late"]),
        _row("key press sent to the held voices' /n_end", figures["stop"]),
        _row("of which: the key press taken by the router's input thread to the voices "
             "freed (by that thread, in the answer's hook)", figures["freed"]),
        "",
        "On the MIDI hot path, in process (`timeit`, 200000 note messages, best of 7 rounds, "
        "the variants interleaved; each message a call of each function in the row, so "
        "`bare` is a call's own cost):",
        "",
        "| ns per message | figure |",
        "|---|---|",
        *(f"| {name} | {value:.0f} |" for name, value in cost.items()),
        "",
        "Reading: the answer starts on its beat within about a JACK period and a scsynth "
        "block. The router's input thread wakes when a JACK cycle brings the key press "
        "(scorch's own JACK client writes its eventfd) and frees the held voices itself, in "
        "the answer's hook, before it goes on; the rest of the stop is the JACK MIDI hop (to "
        "the next cycle: up to a period), scsynth taking the `/n_free` at the start of a "
        "later cycle (the one after the key press's: scsynth has read its commands for that "
        "cycle before the router sends), its notification coming back, and a loaded "
        "machine's scheduling. So a stop measured from the key press sent to `/n_end` is "
        "about two periods at best (one to reach the router, one to reach scsynth's next "
        "cycle); from the key press taken to the voices freed it is a fraction of one. The "
        "hook costs the input thread less than the capture it follows.",
    ])
    print(section)
    if not args.no_write:
        write_section(section + "\n")


if __name__ == "__main__":
    main()
