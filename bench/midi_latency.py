"""Benchmark the MIDI router: latency against a bare rtmidi-to-UDP baseline, and throughput.

Run with ``python -m bench.midi_latency`` (about 15 s). It starts a private
jackd, plays two JACK MIDI virtual ports standing in for hardware (one for the
baseline, one for the router, so the two never compete for one message), and
receives the OSC datagrams on a UDP socket standing in for scsynth.

- Latency: time from ``send_message`` on the hardware port to the datagram's
  arrival, samples of the baseline and the router interleaved in one run.
- Router's own time: callback entry to ``sendto`` returned (``stats()``).
- Throughput: 20,000 control changes per second over 16 parameters with note
  on/off pairs mixed in; checks every parameter's last value and every note.
- Hot path in process (``bench.midi_hotpath``, after jackd is gone): the callback
  called directly, so the CPU cost per message without any scheduling.

The figures replace the ``## MIDI`` section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import socket
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.report import write_section
from midi.schema import MidiConfig

ROOT = Path(__file__).resolve().parent.parent
NODE = 1000
PARAMS = 16


class ListenerTargets:
    """Targets whose one instance is the benchmark's UDP listener."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self.applied: dict[str, float] = {}
        """The last value the router applied per param (reported to desired state)."""

    def resolve(self, selector: str) -> list[str]:
        return ["bench"]

    def endpoint(self, instance: str) -> tuple[str, int] | None:
        return self.address

    def node_id(self, instance: str, node: str) -> int | None:
        return NODE

    def param_changed(self, instance: str, node: str, param: str, value: float) -> None:
        self.applied[param] = value


def _player(conn: Any, jack: str) -> None:
    """The hardware and scsynth's socket, in their own process (as they are in real life).

    Commands come over ``conn``: ("latency", path, value) sends one CC on that
    path's port and answers the time until its datagram arrived; ("flood", ...)
    injects control changes and notes at a rate and answers what arrived.
    """
    os.environ["JACK_DEFAULT_SERVER"] = jack
    os.environ["JACK_NO_START_SERVER"] = "1"
    import rtmidi

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("127.0.0.1", 0))
    outs = {}
    for path in ("baseline", "router"):
        outs[path] = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name=f"bench{path}")
        outs[path].open_virtual_port(path)
    conn.send(sock.getsockname())
    clock = time.monotonic_ns
    while True:
        command = conn.recv()
        if command[0] == "latency":
            _, path, value = command
            sock.settimeout(0.5)
            start = clock()
            outs[path].send_message([0xB0, 1, value])
            try:
                sock.recv(65536)
            except TimeoutError:
                conn.send(None)
                continue
            conn.send((clock() - start) / 1000.0)
        elif command[0] == "flood":
            conn.send(_flood(outs[command[1]], sock, *command[2:]))
        else:
            break
    for out in outs.values():
        out.delete()


def _flood(out: Any, sock: socket.socket, rate: int, seconds: float) -> dict:
    received: list[bytes] = []
    done = threading.Event()

    def receive() -> None:
        sock.settimeout(0.2)
        while not done.is_set():
            try:
                received.append(sock.recv(65536))
            except TimeoutError:
                continue

    receiver = threading.Thread(target=receive, daemon=True)
    receiver.start()
    total = int(rate * seconds)
    batch = max(1, rate // 1000)  # one batch per millisecond
    expected: dict[str, float] = {}
    notes = sent = 0
    rng = random.Random(7)
    start = time.perf_counter()
    while sent < total:
        for _ in range(batch):
            cc = 1 + sent % PARAMS
            value = rng.randrange(128)
            out.send_message([0xB0, cc, value])
            expected[f"p{cc}"] = float(value)
            sent += 1
            if sent % 40 == 0:  # 500 note pairs per second among the controls
                note = 36 + (sent // 40) % 48
                out.send_message([0x90, note, 100])
                out.send_message([0x80, note, 0])
                notes += 1
        ahead = start + sent / rate - time.perf_counter()
        if ahead > 0:
            time.sleep(ahead)
    elapsed = time.perf_counter() - start
    time.sleep(1.0)  # everything in flight arrives, the coalescer's last flush included
    done.set()
    receiver.join()
    return {"expected": expected, "controls": sent, "notes": notes, "elapsed": elapsed,
            "received": received}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_latency(samples: int, conn: Any) -> dict:
    """Interleave single control changes on both ports; return latencies in us per path."""
    results: dict[str, list[float]] = {"baseline": [], "router": []}
    lost = {"baseline": 0, "router": 0}
    value = 0
    order = ["baseline", "router"] * samples
    random.shuffle(order)
    for path in order:
        value = (value + 37) % 128
        conn.send(("latency", path, value))
        took = conn.recv()
        if took is None:
            lost[path] += 1
        else:
            results[path].append(took)
        time.sleep(random.uniform(0.002, 0.004))  # spacing: no coalescing in this part
    return {"samples": results, "lost": lost}


def measure_throughput(
    router: Any, targets: ListenerTargets, conn: Any, rate: int, seconds: float
) -> dict:
    """Flood the baseline, then the router; check the router's last values and notes."""
    from scorch.primitives.osc import decode_packet

    conn.send(("flood", "baseline", rate, seconds))
    baseline = conn.recv()
    before = router.stats().get(timeout=5)
    conn.send(("flood", "router", rate, seconds))
    flood = conn.recv()
    after = router.stats().get(timeout=5)
    last: dict[str, float] = {}
    starts = releases = 0
    for data in flood["received"]:
        for message in decode_packet(data):
            if message.address == "/s_new":
                starts += 1
            elif message.address == "/n_set" and message.args[1] == "gate":
                releases += 1
            elif message.address == "/n_set":
                last[str(message.args[1])] = float(message.args[2])  # type: ignore[arg-type]
    applied = dict(targets.applied)
    return {
        "rate_offered": rate,
        "rate_achieved": flood["controls"] / flood["elapsed"],
        "controls": flood["controls"],
        "injected": flood["controls"] + 2 * flood["notes"],
        "baseline_arrived": len(baseline["received"]),
        "handled": after["handled"] - before["handled"],
        "datagrams": len(flood["received"]),
        "coalesced": after["coalesced"] - before["coalesced"],
        "wrong_vs_router": {k: (last.get(k), v) for k, v in applied.items() if last.get(k) != v},
        "wrong_vs_injected": {
            k: (last.get(k), v) for k, v in flood["expected"].items() if last.get(k) != v
        },
        "notes_on": (after["notes_on"] - before["notes_on"], starts),
        "notes_off": (after["notes_off"] - before["notes_off"], releases),
        "notes_injected": flood["notes"],
        "voices_left": after["voices"],
    }


def bench_config(coalesce: float | None = None) -> MidiConfig:
    """PARAMS controls (CC 1..PARAMS to node n's p1..) and 64 voices on the "benchrouter" port."""
    controls = [
        {"cc": cc, "port": "benchrouter", "instance": "bench", "node": "n",
         "param": f"p{cc}", "range": [0, 127], "takeover": "immediate"}
        for cc in range(1, PARAMS + 1)
    ]
    keys = [{"port": "benchrouter", "instance": "bench", "synthdef": "v", "voices": 64}]
    fields: dict[str, Any] = {"backend": "jack", "virtual_port": "", "inputs": [],
                              "controls": controls, "keys": keys}
    if coalesce is not None:
        fields["coalesce_interval"] = coalesce
    return MidiConfig.model_validate(fields)


def run(samples: int, rate: int, seconds: float) -> dict:
    """Start jackd, the player process, the baseline and the router; return every figure."""
    sys.path.insert(0, str(ROOT))
    from tests.harness import jack_server

    with jack_server("scorch-bench-midi") as jack:
        os.environ["JACK_DEFAULT_SERVER"] = jack
        os.environ["JACK_NO_START_SERVER"] = "1"
        import rtmidi

        from actors.midi_router import MidiRouter
        from scorch.primitives.osc import encode_message

        context = multiprocessing.get_context("spawn")
        conn, child_conn = context.Pipe()
        player = context.Process(target=_player, args=(child_conn, jack), daemon=True)
        player.start()
        listener: tuple[str, int] = conn.recv()

        # The baseline: the least a Python program can do, a callback sending one datagram.
        base_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        prefix = encode_message("/n_set", NODE, "p1", 0.0)[:-4]
        pack = struct.Struct(">f").pack

        base_times: list[int] = []
        clock = time.perf_counter_ns

        def baseline(event: Any, _data: Any) -> None:
            start = clock()
            base_sock.sendto(prefix + pack(float(event[0][2])), listener)
            base_times.append(clock() - start)

        base_in = rtmidi.MidiIn(rtmidi.API_UNIX_JACK, name="benchbaselinein")
        base_in.set_callback(baseline)
        base_in.open_port(base_in.get_ports().index("benchbaseline:baseline"))

        config = bench_config()
        with tempfile.TemporaryDirectory() as state:
            targets = ListenerTargets(listener)
            router = MidiRouter.start(config, targets, Path(state))
            proxy = router.proxy()
            try:
                deadline = time.monotonic() + 5
                while "benchrouter:router" not in proxy.ports().get(timeout=5)["inputs"]:
                    if time.monotonic() > deadline:
                        raise RuntimeError("the router did not open the benchmark port")
                    time.sleep(0.01)
                measure_latency(100, conn)  # warm up
                latency = measure_latency(samples, conn)
                own = proxy.stats().get(timeout=5)["hot_path_us"]
                base_own = {
                    "p50": percentile(base_times, 0.5) / 1000,
                    "p99": percentile(base_times, 0.99) / 1000,
                }
                throughput = measure_throughput(proxy, targets, conn, rate, seconds)
            finally:
                router.stop(timeout=10)
                conn.send(("quit",))
                player.join(10)
                base_in.close_port()
                base_in.delete()
    return {"latency": latency, "own": own, "base_own": base_own, "throughput": throughput}


def report(figures: dict) -> str:
    lat = figures["latency"]["samples"]
    base, routed = lat["baseline"], lat["router"]
    rows = []
    for name, q in (("median", 0.5), ("p99", 0.99)):
        b, r = percentile(base, q), percentile(routed, q)
        rows.append(f"| {name} | {b:.0f} us | {r:.0f} us | {r / b:.3f}x |")
    own = figures["own"]
    base_own = figures["base_own"]
    t = figures["throughput"]
    hot = figures["hotpath"]
    hot_rows = [
        f"| {name} | {f['p50']:.1f} | {f['p99']:.1f} | {f['max']:.1f} |"
        for name, f in hot.items()
    ]
    if base_own["p99"] >= 150:
        verdict = (
            "The bare callback's own p99 in the same run is already above the 150 us goal: on "
            "this machine the tail is the scheduler's (a preempted or cold vCPU), not the "
            "router's code."
        )
    elif own["p99"] < 150:
        verdict = "The router's own p99 meets the 150 us goal in this run."
    else:
        verdict = (
            "The router's own p99 misses the 150 us goal in this run while the bare "
            "callback's does not."
        )
    # JACK itself drops and repeats MIDI events when a client misses its cycle, so the check
    # is on the router: every note-on it handled arrived as /s_new, and every voice it
    # started was released or still sounds.
    notes_ok = t["notes_on"][0] == t["notes_on"][1] == t["notes_off"][1] + t["voices_left"]
    return "\n".join(
        [
            "## MIDI",
            "",
            "`python -m bench.midi_latency` on this machine "
            f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs shared with other test runs, "
            "jackd dummy driver 48 kHz / 64 frames without realtime scheduling, so a JACK MIDI "
            "hop costs up to one 1.33 ms period). The hardware and the UDP listener standing in "
            "for scsynth run in a separate process, as they would in real life.",
            "",
            "End-to-end latency, JACK MIDI port to OSC datagram at a UDP listener, "
            f"{len(base)} + {len(routed)} samples interleaved in one run "
            f"(lost: {figures['latency']['lost']}):",
            "",
            "| | bare rtmidi callback -> UDP | scorch router | ratio |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Router's own time, callback entry to datagram sent: p50 {own['p50']:.1f} us, "
            f"p99 {own['p99']:.1f} us, max {own['max']:.1f} us (goal: p99 < 150 us); the bare "
            f"callback's, measured the same way: p50 {base_own['p50']:.1f} us, "
            f"p99 {base_own['p99']:.1f} us. Both come from the latency samples above, messages "
            "2-4 ms apart, so each runs on a cold cache in a thread just woken: the router's p50 "
            f"is {own['p50'] / hot['router cc, gc on']['p50']:.0f}x and the bare callback's "
            f"{base_own['p50'] / hot['baseline, gc on']['p50']:.0f}x what the same code costs "
            f"in a tight loop (next table). {verdict}",
            "",
            "CPU cost of the hot path in process (`python -m bench.midi_hotpath`, run by the "
            "command above after jackd stopped): the router's callback called directly with raw "
            "MIDI bytes (every control change sent: coalescing off), timed per call; the "
            "baseline is a cached `/n_set` with its float packed, and `sendto`. "
            f"{hot_samples(figures)}",
            "",
            "| us per message | p50 | p99 | max |",
            "|---|---|---|---|",
            *hot_rows,
            "",
            f"Throughput: {t['controls']} control changes over {PARAMS} parameters offered at "
            f"{t['rate_offered']} /s (achieved {t['rate_achieved']:.0f} /s) with "
            f"{t['notes_injected']} note on/off pairs mixed in, {t['injected']} messages. "
            f"The bare callback got {t['baseline_arrived']} of them to the listener; the router "
            f"handled {t['handled']} and sent {t['datagrams']} datagrams "
            f"({t['coalesced']} values coalesced away). Last values: "
            f"{PARAMS - len(t['wrong_vs_router'])}/{PARAMS} equal to the router's last applied "
            f"value, {PARAMS - len(t['wrong_vs_injected'])}/{PARAMS} equal to the last value "
            f"injected. Notes the router handled: {t['notes_on'][0]} on, {t['notes_off'][0]} "
            f"off; arrived: {t['notes_on'][1]} /s_new, {t['notes_off'][1]} releases, "
            f"{t['voices_left']} voices still held by a lost note-off "
            f"({'none lost by the router' if notes_ok else 'NOTES LOST BY THE ROUTER'}).",
            "",
        ]
    )


def hot_samples(figures: dict) -> str:
    count = figures["hotpath_count"]
    return (
        f"{count} control changes over {PARAMS} parameters and {count // 5} note messages, "
        "each with the garbage collector on, off, and on after `gc.freeze()`."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--hotpath-count", type=int, default=100_000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    figures = run(args.samples, args.rate, args.seconds)
    from bench import midi_hotpath

    figures["hotpath"] = midi_hotpath.run(args.hotpath_count, 0.0)
    figures["hotpath_count"] = args.hotpath_count
    section = report(figures)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
