"""Benchmark MIDI clock out: tempo and jitter as a JACK MIDI receiver timestamps the ticks.

Run with ``python -m bench.midi.clock`` (about a minute). It starts a private
jackd, a receiver in its own process (a JACK client written with JACK-Client, as
a synth or drum machine's driver would be: each tick's time is the start of
the cycle it arrived in, as ``jack_get_cycle_times`` gives it on the system's
monotonic clock, plus its frame offset into the cycle. The dummy driver's frame
count alone is no clock: it stalls when the driver's thread is late, and JACK's
frame-to-time estimate wanders with it), and scorch's MIDI router
with a ``[[midi.clock_out]]`` to that receiver, following a tempo view. For each
tempo the receiver collects the ticks; then the same for the baseline in the
same run: the least a Python program can do, a loop that sleeps until each
tick's time and sends ``F8`` through rtmidi.

Figures: the tempo the receiver measures (least squares over the ticks), the
jitter as each tick's distance from that fitted grid (p50, p99, max of its
absolute value), the spread of tick-to-tick intervals, and how late the clock
thread itself sent. rtmidi's JACK backend writes every message at frame 0 of the
next cycle, so a tick's time is rounded up to a period boundary: the jitter
floor is the period (1.33 ms at 64 frames, 0.67 ms at 32). ``--period`` picks it.

The figures replace the ``## MIDI clock`` section of BENCHMARKS.md (``--no-write``
to skip).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import itertools
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import write_section

ROOT = Path(__file__).resolve().parents[2]
TICK = 0xF8


def _receiver(conn: Any, jack: str) -> None:
    """A JACK client with one MIDI input; answers with the frame time of every tick."""
    os.environ["JACK_DEFAULT_SERVER"] = jack
    os.environ["JACK_NO_START_SERVER"] = "1"
    import jack as jackclient

    client = jackclient.Client("clockrx", servername=jack, no_start_server=True)
    port = client.midi_inports.register("in")
    # JACK-Client does not wrap jack_get_cycle_times: call it on the same libjack.
    libjack = ctypes.CDLL(ctypes.util.find_library("jack") or "libjack.so.0")
    cycle_times = libjack.jack_get_cycle_times
    cycle_times.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
                            ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                            ctypes.POINTER(ctypes.c_float)]
    handle = int(jackclient._ffi.cast("uintptr_t", client._ptr))
    frames, start, end, period = (ctypes.c_uint32(), ctypes.c_uint64(), ctypes.c_uint64(),
                                  ctypes.c_float())
    stamps: list[float] = []
    recording = [False]
    block = client.blocksize

    @client.set_process_callback
    def process(_frames: int) -> None:
        if not recording[0]:
            return
        cycle_times(handle, frames, start, end, period)
        for offset, data in port.incoming_midi_events():
            if bytes(data) == b"\xf8":
                # When this cycle began (the driver's wake-up, microseconds on the system's
                # monotonic clock), plus the event's offset into it.
                stamps.append(start.value + offset * period.value / block)

    client.activate()
    conn.send(("ready", client.samplerate, client.blocksize))
    while True:
        command = conn.recv()
        if command == "record":
            stamps.clear()
            recording[0] = True
            conn.send("recording")
        elif command == "stop":
            recording[0] = False
            conn.send(list(stamps))
        else:
            break
    client.deactivate()
    client.close()


def jitter(times: list[float]) -> dict[str, float]:
    """Tempo and jitter of tick times (seconds): residuals from the least-squares grid."""
    fit = statistics.linear_regression(range(len(times)), times)
    residuals = sorted(abs(t - (fit.intercept + fit.slope * i)) for i, t in enumerate(times))
    intervals = [b - a for a, b in itertools.pairwise(times)]
    spread = sorted(abs(i - fit.slope) for i in intervals)

    def pick(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] * 1000.0

    return {
        "ticks": len(times), "bpm": 60.0 / (24 * fit.slope),
        "p50_ms": pick(residuals, 0.5), "p99_ms": pick(residuals, 0.99),
        "max_ms": residuals[-1] * 1000.0,
        "interval_p99_ms": pick(spread, 0.99),
    }


class NullTargets:
    """No rooms: the router only sends clock."""

    def resolve(self, selector: str) -> list[str]:
        return []

    def endpoint(self, room: str) -> tuple[str, int] | None:
        return None

    def node_id(self, room: str, node: str) -> int | None:
        return None

    def scene(self, kind: str, scene: str, room: str, value: float) -> None:
        return None


def baseline(bpm: float, seconds: float, stop: Any) -> None:
    """Sleep until each tick's time, then send it: a bare Python loop through rtmidi."""
    import rtmidi

    out = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="bareclock")
    out.open_port(out.get_ports().index("clockrx:in"))
    interval = 60.0 / bpm / 24
    due = time.monotonic() + interval
    end = due + seconds
    while due < end and not stop.is_set():
        time.sleep(max(0.0, due - time.monotonic()))
        out.send_message([TICK])
        due += interval
    out.close_port()
    out.delete()


def run(tempos: list[float], seconds: float, period: int, realtime: bool) -> dict[str, Any]:
    """Every figure, for each tempo: scorch's clock and the bare loop, the same receiver."""
    import threading

    sys.path.insert(0, str(ROOT))
    from tests.support.harness import jack_server

    figures: dict[str, Any] = {"period": period, "realtime": realtime, "tempos": {}}
    with jack_server("scorch-bench-clock", realtime=realtime, period=period) as jack:
        os.environ["JACK_DEFAULT_SERVER"] = jack
        os.environ["JACK_NO_START_SERVER"] = "1"
        from actors.router.actor import MidiRouter
        from midi.schema import MidiConfig
        from scorch.state.tempo import TempoView, Timeline

        context = multiprocessing.get_context("spawn")
        conn, child = context.Pipe()
        receiver = context.Process(target=_receiver, args=(child, jack), daemon=True)
        receiver.start()
        _, rate, block = conn.recv()
        figures["rate"], figures["block"] = rate, block

        def record(action: Any) -> list[float]:
            conn.send("record")
            conn.recv()
            action()
            conn.send("stop")
            return [us / 1e6 for us in conn.recv()]

        tempo = TempoView({"": Timeline(tempos[0], 4, 0.0, time.monotonic())})
        config = MidiConfig.model_validate({
            "backend": "jack", "virtual_port": "", "inputs": [],
            "clock_out": [{"port": "clockrx", "transport": False}]})
        with tempfile.TemporaryDirectory() as state:
            router = MidiRouter.start(config, NullTargets(), Path(state), jack,
                                      tempo=tempo).proxy()
            try:
                deadline = time.monotonic() + 10
                while "clockrx:in" not in router.ports().get(timeout=5)["outputs"]:
                    assert time.monotonic() < deadline, "the router did not open the receiver"
                    time.sleep(0.05)
                for bpm in tempos:
                    tempo.put("", tempo.get().with_tempo(bpm, time.monotonic()))
                    time.sleep(0.5)  # past the change
                    scorch = record(lambda: time.sleep(seconds))
                    late = sorted(router.clock_lateness().get(timeout=5)[""][-len(scorch):])
                    figures["tempos"][bpm] = {
                        "scorch": jitter(scorch),
                        "sender_late_p99_ms": late[int(0.99 * (len(late) - 1))] * 1000,
                    }
                router.actor_ref.stop(timeout=10)
                for bpm in tempos:
                    stop = threading.Event()
                    bare = record(lambda b=bpm, s=stop: baseline(b, seconds, s))
                    figures["tempos"][bpm]["baseline"] = jitter(bare)
            finally:
                if router.actor_ref.is_alive():
                    router.actor_ref.stop(timeout=10)
                conn.send("quit")
                receiver.join(10)
    return figures


def report(runs: list[dict[str, Any]], seconds: float) -> str:
    lines = [
        "## MIDI clock",
        "",
        f"`python -m bench.midi.clock` on this machine ({time.strftime('%Y-%m-%d')}, "
        f"{os.cpu_count()} CPUs shared with other test runs). scorch's router sends "
        "`[[midi.clock_out]]` to a JACK MIDI receiver in another process (a JACK-Client "
        "program: each tick's time is the start of its cycle on the monotonic clock, from "
        "`jack_get_cycle_times`, plus its frame offset); the "
        "baseline, in the same run and to the same receiver, is a bare Python loop that "
        "sleeps until each tick is due and sends it through rtmidi. "
        f"{seconds:g} s of ticks per tempo. Jitter is each tick's distance from the grid "
        "fitted to all of them; interval spread is each tick-to-tick interval's distance from "
        "the fitted one. rtmidi's JACK backend writes a message at frame 0 of the next cycle, "
        "so every tick lands on a period boundary: the period is the floor (goal: p99 < 1 ms).",
        "",
        "| jackd | bpm | sender | measured bpm | jitter p50 | p99 | max | interval p99 | "
        "clock thread late p99 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for figures in runs:
        period_ms = figures["block"] / figures["rate"] * 1000
        server = (f"{figures['block']} frames ({period_ms:.2f} ms)"
                  f"{', realtime' if figures['realtime'] else ''}")
        for bpm, row in figures["tempos"].items():
            for who in ("scorch", "baseline"):
                f = row[who]
                late = f"{row['sender_late_p99_ms']:.3f} ms" if who == "scorch" else ""
                lines.append(
                    f"| {server} | {bpm:g} | {who} | {f['bpm']:.3f} | {f['p50_ms']:.3f} ms | "
                    f"{f['p99_ms']:.3f} ms | {f['max_ms']:.3f} ms | "
                    f"{f['interval_p99_ms']:.3f} ms | {late} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--servers", default="64rt,32rt,64",
                        help="jackd periods to run, 'rt' for realtime scheduling")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    runs = [run([120.0, 174.0], args.seconds, int(s.removesuffix("rt")), s.endswith("rt"))
            for s in args.servers.split(",")]
    section = report(runs, args.seconds)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
