"""Benchmark the MIDI router's hot path in process: the callback called directly, no JACK.

Run with ``python -m bench.midi.hotpath`` (a few seconds). It builds a router
(not started: no ports, no helper threads) with the same routes as
``bench.midi.latency``, and times what the input thread does with one queued
message (the router's lock, the engine, the datagram) with raw MIDI bytes, so
what it shows is the CPU cost per message. A UDP socket stands in for scsynth
and is drained between batches, outside the timing.

The baseline, timed the same way in the same run, is the least a Python
callback can do: pack one float into a cached ``/n_set`` and ``sendto``.

Prints per-message p50/p99/max in microseconds for control changes and for
note on/off, each with the garbage collector on, off, and on after
``gc.freeze()``. ``--profile`` runs cProfile over the control changes instead.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import socket
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.midi.latency import NODE, PARAMS, ListenerTargets, bench_config, percentile

PORT = "benchrouter:router"
BATCH = 1000
#: Messages timed one at a time after a sleep of COLD_GAP seconds, per round.
COLD = 300
COLD_GAP = 0.003


def make_router(listener: tuple[str, int], state_dir: Path, coalesce: float) -> Any:
    """Return a router with the latency benchmark's routes, its tables built, not started."""
    from actors.router.actor import MidiRouter
    from midi.engine import TargetSnapshot
    from midi.routes import compile_table, resolve_all

    config = bench_config(coalesce)
    targets = ListenerTargets(listener)
    router = MidiRouter(config, targets, state_dir, bus=targets.bus)
    # What _refresh_targets does once the port is open, without a backend.
    entries = router._entries()
    resolved, _ = resolve_all(entries, targets.resolve)
    router._engine.tables = {PORT: compile_table(PORT, entries, resolved)}
    router._engine.snapshot = TargetSnapshot({"bench": listener}, {("bench", "n"): NODE})
    return router


def input_path(router: Any) -> Callable[[str, list[int]], None]:
    """What the input thread does with one queued message: lock, engine, send."""
    clock, lock, handle = time.monotonic_ns, router._lock, router._input._handle

    def call(port: str, data: list[int]) -> None:
        start = clock()
        with lock:
            handle(port, [(data, 0.0)], start)

    return call


def cc_stream(count: int) -> list[list[int]]:
    """Control changes over the routed parameters, values moving (no takeover waits)."""
    return [[0xB0, 1 + i % PARAMS, (i * 37) % 128] for i in range(count)]


def note_stream(count: int) -> list[list[int]]:
    """Note-on/note-off pairs over four octaves."""
    out = []
    for i in range(count // 2):
        note = 36 + i % 48
        out += [[0x90, note, 100], [0x80, note, 0]]
    return out


def time_calls(
    call: Callable[[str, list[int]], None], messages: Sequence[list[int]], drain: socket.socket,
    gap: float = 0.0
) -> list[int]:
    """Return the ns each call took; drain the listener between batches, untimed.

    ``gap``: seconds slept before each call (a thread woken for one message, its caches
    cold: the router's case when MIDI comes a few milliseconds apart).
    """
    clock, sleep = time.perf_counter_ns, time.sleep
    took = [0] * len(messages)
    for base in range(0, len(messages), BATCH):
        for i in range(base, min(base + BATCH, len(messages))):
            data = messages[i]
            if gap:
                sleep(gap)
            start = clock()
            call(PORT, data)
            took[i] = clock() - start
        try:
            while True:
                drain.recv(65536)
        except BlockingIOError:
            pass
    return took


def summary(took: Sequence[int]) -> dict[str, float]:
    return {
        "p50": percentile(took, 0.5) / 1000,
        "p99": percentile(took, 0.99) / 1000,
        "max": max(took) / 1000,
    }


def run(count: int, coalesce: float) -> dict[str, dict[str, float]]:
    """Time the router and the baseline per stream and gc mode; return us figures."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    address = listener.getsockname()

    base_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    from scorch.primitives.osc import encode_message

    prefix = encode_message("/n_set", NODE, "p1", 0.0)[:-4]
    pack = struct.Struct(">f").pack

    def baseline(_port: str, data: list[int]) -> None:
        base_sock.sendto(prefix + pack(float(data[2])), address)

    streams = {"cc": cc_stream(count), "notes": note_stream(count // 5)}
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as state:
        router = make_router(address, Path(state), coalesce)
        callback = input_path(router)
        try:
            for mode in ("gc on", "gc off", "gc frozen"):
                gc.collect()
                if mode == "gc off":
                    gc.disable()
                elif mode == "gc frozen":
                    gc.freeze()
                try:
                    for name, messages in streams.items():
                        time_calls(callback, messages[:BATCH], listener)  # warm up
                        figures[f"router {name}, {mode}"] = summary(
                            time_calls(callback, messages, listener)
                        )
                    figures[f"baseline, {mode}"] = summary(
                        time_calls(baseline, streams["cc"], listener)
                    )
                finally:
                    gc.enable()
                    gc.unfreeze()
            cold = streams["cc"][:COLD]
            for _ in range(2):  # interleaved, the second round of each kept
                figures["router cc, 3 ms apart"] = summary(
                    time_calls(callback, cold, listener, COLD_GAP))
                figures["baseline, 3 ms apart"] = summary(
                    time_calls(baseline, cold, listener, COLD_GAP))
        finally:
            router._sender.stop()
            base_sock.close()
            listener.close()
    return figures


def profile(count: int, coalesce: float) -> None:
    """Print cProfile's top functions over ``count`` control changes."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    with tempfile.TemporaryDirectory() as state:
        router = make_router(listener.getsockname(), Path(state), coalesce)
        callback = input_path(router)
        messages = cc_stream(count)
        profiler = cProfile.Profile()
        profiler.enable()
        time_calls(callback, messages, listener)
        profiler.disable()
        router._sender.stop()
    listener.close()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def report(figures: dict[str, dict[str, float]], count: int) -> str:
    lines = [f"Per message, {count} control changes and {count // 5} note messages, in us:", "",
             "| | p50 | p99 | max |", "|---|---|---|---|"]
    for name, f in figures.items():
        lines.append(f"| {name} | {f['p50']:.1f} | {f['p99']:.1f} | {f['max']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument(
        "--coalesce", type=float, default=0.0,
        help="coalesce interval in s; 0 (default) sends every value, the costliest path",
    )
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.profile:
        profile(args.count, args.coalesce)
        return
    print(report(run(args.count, args.coalesce), args.count))


if __name__ == "__main__":
    main()
