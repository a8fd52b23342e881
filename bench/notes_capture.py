"""Benchmark the note capture on the MIDI hot path: ns per message, and beside the router.

Run with ``python -m bench.notes_capture`` (about ten seconds). Two measures:

- ``timeit``: a :class:`NoteRing` fed note-on/note-off pairs through
  ``message()`` (raw bytes, as the router's input thread has them), the ring
  full and wrapping, against a bare Python callback with the same arguments;
  ns per message, best of several repeats.
- beside the router: ``bench.midi.hotpath``'s in-process router (lock, engine,
  datagram; no JACK) timed per note message, its input thread's capture hook off
  and on, in the same run; the capture's share of the router's time per call, and
  of its time from the callback to the datagram sent (what a musician waits for).
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

from bench.midi.hotpath import input_path, make_router, note_stream, summary, time_calls
from bench.report import write_section
from scorch.notes.capture import Capture, NoteRing

ROUNDS = 5
"""Rounds of the router with and without the capture, interleaved; the best p50 of each."""


def per_message(count: int, repeat: int) -> dict[str, float]:
    """ns per message for the capture and a bare callback (best of ``repeat``)."""
    messages = [(float(i) * 0.01, status, 36 + (i // 2) % 48, velocity)
                for i in range(count // 2)
                for status, velocity in ((0x90, 100), (0x80, 0))]
    ring = NoteRing("bench", 4096)
    for message in messages[: 2 * 4096]:  # fill the ring: what is timed wraps it
        ring.message(*message)

    def bare(t: float, status: int, data1: int, data2: int) -> None:
        pass

    def feeding(call: Callable[[float, int, int, int], None]) -> Callable[[], None]:
        def run() -> None:
            for message in messages:
                call(*message)
        return run

    figures = {}
    for name, call in (("bare callback", bare), ("capture (NoteRing.message)", ring.message)):
        best = min(timeit.repeat(feeding(call), number=1, repeat=repeat))
        figures[name] = best / len(messages) * 1e9
    figures["capture, less the bare callback"] = (figures["capture (NoteRing.message)"]
                                                  - figures["bare callback"])
    return figures


def beside_router(count: int) -> dict[str, dict[str, float]]:
    """The router's note path per message, alone and with the capture, in us (best round)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as state:
        router = make_router(listener.getsockname(), Path(state), 0.0)
        callback = input_path(router)
        capture = Capture(4096)  # the input thread's hook feeds it, as [midi] capture_notes does

        messages = note_stream(count)
        try:
            gc.collect()
            for _ in range(ROUNDS):  # interleaved: both meet the same machine
                for name, kept in (("router notes", None), ("router notes + capture", capture)):
                    router._input.capture = kept  # and the rooms' notes, as on_start does
                    router._engine.played = None if kept is None else router._input.played
                    time_calls(callback, messages[:1000], listener)
                    router._sender.timed = 0
                    got = summary(time_calls(callback, messages, listener))
                    sender = router._sender  # its own clock: callback to datagram sent
                    sent = summary(sender.timings[:min(sender.timed, len(sender.timings))])
                    if name not in figures or got["p50"] < figures[name]["p50"]:
                        figures[name] = got
                    if (late := f"{name}, to the datagram") not in figures or \
                            sent["p50"] < figures[late]["p50"]:
                        figures[late] = sent
        finally:
            router._sender.stop()
            listener.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000, help="messages for timeit")
    parser.add_argument("--router-count", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true", help="print, leave BENCHMARKS.md")
    args = parser.parse_args()
    ns = per_message(args.count, repeat=7)
    router = beside_router(args.router_count)
    alone, both = router["router notes"]["p50"], router["router notes + capture"]["p50"]
    sent_alone = router["router notes, to the datagram"]["p50"]
    sent_both = router["router notes + capture, to the datagram"]["p50"]
    lines = [
        "## Notes capture",
        "",
        f"`.venv/bin/python -m bench.notes_capture` ({time.strftime('%Y-%m-%d')}; load "
        f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, so compare within a run): "
        f"`timeit` over {args.count} note-on/note-off messages (raw bytes through "
        "`NoteRing.message`, the ring full and wrapping), best of 7, beside a bare Python "
        "callback with the same four arguments:",
        "",
        "| ns per message | figure |",
        "|---|---|",
        *(f"| {name} | {value:.0f} |" for name, value in ns.items()),
        "",
        f"Beside the router in the same run ({args.router_count} note messages through "
        "`bench.midi.hotpath`'s in-process router, timed per call; the capture through the "
        "input thread's and the engine's hooks, off (`capture = None`) and on (4096-note "
        f"rings, full and wrapping), {ROUNDS} rounds interleaved, the round with the best "
        "median of each): "
        "the capture adds "
        f"{both - alone:.2f} us to the router's {alone:.2f} us per call at the median "
        f"({(both - alone) / alone:.1%}): the input thread's time. It keeps the notes once "
        "the batch's datagrams are out, so from the callback to the datagram sent (the "
        "router's own clock, its last 4096 messages) it adds "
        f"{sent_both - sent_alone:.2f} us to {sent_alone:.2f} us "
        f"({(sent_both - sent_alone) / sent_alone:.1%}).",
        "",
        "| us per note message | p50 | p99 | max |",
        "|---|---|---|---|",
        *(f"| {name} | {f['p50']:.2f} | {f['p99']:.2f} | {f['max']:.1f} |"
          for name, f in router.items()),
        "",
        "Reading: on a loaded machine every figure is several times a quiet one's; the "
        "ratios within the run are what to read. The capture here is both what the input "
        "played and what the router started in the room (`room:NAME`). End to end through "
        "JACK, with capture on and off beside a bare callback: BENCHMARKS.md, MIDI.",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
