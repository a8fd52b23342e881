"""Benchmark the MIDI router: latency against a bare rtmidi-to-UDP baseline, and throughput.

Run with ``python -m bench.midi.latency`` (about 15 s). It starts a private
jackd, plays two JACK MIDI virtual ports standing in for hardware (one for the
baseline, one for the router, so the two never compete for one message), and
receives the OSC datagrams on a UDP socket standing in for scsynth.

- Latency: time from ``send_message`` on the hardware port to the datagram's
  arrival, samples of the baseline and the router interleaved in one run.
- Router's own time: callback entry to ``sendto`` returned (``stats()``).
- Flood: 20,000 control changes per second over 16 parameters with note on/off
  pairs mixed in, on a third port that the router and a bare rtmidi callback
  both listen to, in the same run: what each received, every parameter's last
  value and every note. Once with jackd as the tests run it, once with realtime
  scheduling (``[audio] realtime``), as a stage machine runs it.
- Hot path in process (``bench.midi.hotpath``, after jackd is gone): the callback
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

ROOT = Path(__file__).resolve().parents[2]
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

    def scene(self, kind: str, scene: str, instance: str, value: float) -> None:
        return None


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
    for path in ("baseline", "router", "flood"):
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
    router: Any, targets: ListenerTargets, conn: Any, bare: dict[str, int], rate: int,
    seconds: float
) -> dict:
    """Flood the port the router and the bare callback share; check values and notes."""
    from scorch.primitives.osc import decode_packet

    before = router.stats().get(timeout=5)
    bare.update(count=0, notes_on=0, notes_off=0)
    conn.send(("flood", "flood", rate, seconds))
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
        "bare": dict(bare),
        "received": after["received"] - before["received"],
        "thinned": after["thinned"] - before["thinned"],
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
        "own": after["hot_path_us"],
    }


def bench_config(coalesce: float | None = None) -> MidiConfig:
    """PARAMS controls (CC 1..PARAMS to node n's p1..) and 64 voices, on the router's two ports."""
    controls = [
        {"cc": cc, "port": port, "instance": "bench", "node": "n",
         "param": f"p{cc}", "range": [0, 127], "takeover": "immediate"}
        for port in ("benchrouter", "benchflood") for cc in range(1, PARAMS + 1)
    ]
    keys = [{"port": port, "instance": "bench", "synthdef": "v", "voices": 64}
            for port in ("benchrouter", "benchflood")]
    fields: dict[str, Any] = {"backend": "jack", "virtual_port": "", "inputs": [],
                              "controls": controls, "keys": keys}
    if coalesce is not None:
        fields["coalesce_interval"] = coalesce
    return MidiConfig.model_validate(fields)


def run(samples: int, rate: int, seconds: float, realtime: bool = False) -> dict:
    """Start jackd, the player process, the baseline and the router; return every figure."""
    sys.path.insert(0, str(ROOT))
    from tests.support.harness import jack_server

    with jack_server("scorch-bench-midi", realtime=realtime) as jack:
        os.environ["JACK_DEFAULT_SERVER"] = jack
        os.environ["JACK_NO_START_SERVER"] = "1"
        import rtmidi

        from actors.router.actor import MidiRouter
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

        # The flood's reference: a bare callback on the port the router floods from too.
        bare = {"count": 0, "notes_on": 0, "notes_off": 0}

        def bare_flood(event: Any, _data: Any) -> None:
            bare["count"] += 1
            kind = event[0][0] & 0xF0
            if kind == 0x90:
                bare["notes_on"] += 1
            elif kind == 0x80:
                bare["notes_off"] += 1

        flood_in = rtmidi.MidiIn(rtmidi.API_UNIX_JACK, name="benchbarefloodin")
        flood_in.set_callback(bare_flood)
        flood_in.open_port(flood_in.get_ports().index("benchflood:flood"))

        config = bench_config()
        with tempfile.TemporaryDirectory() as state:
            targets = ListenerTargets(listener)
            router = MidiRouter.start(config, targets, Path(state))
            proxy = router.proxy()
            try:
                deadline = time.monotonic() + 5
                while not {"benchrouter:router", "benchflood:flood"} <= set(
                        proxy.ports().get(timeout=5)["inputs"]):
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
                throughput = measure_throughput(proxy, targets, conn, bare, rate, seconds)
            finally:
                router.stop(timeout=10)
                conn.send(("quit",))
                player.join(10)
                for midi_in in (base_in, flood_in):
                    midi_in.close_port()
                    midi_in.delete()
    return {"latency": latency, "own": own, "base_own": base_own, "throughput": throughput,
            "realtime": realtime}


def report(runs: list[dict], hot: dict, hot_count: int) -> str:
    lines = [
        "## MIDI",
        "",
        "`python -m bench.midi.latency` on this machine "
        f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs shared with other test runs, "
        "jackd dummy driver 48 kHz / 64 frames, so a JACK MIDI hop costs up to one 1.33 ms "
        "period). The hardware and the UDP listener standing in for scsynth run in a separate "
        "process, as they would in real life. Everything is measured twice: with jackd as the "
        "tests run it (no realtime scheduling) and with `[audio] realtime = true` (`jackd -R`), "
        "as a stage machine runs it. The router takes what rtmidi queued from its input thread "
        "(every 0.25 ms while MIDI flows); no JACK thread runs Python.",
        "",
        "End-to-end latency, JACK MIDI port to OSC datagram at a UDP listener, samples of the "
        "two interleaved in one run:",
        "",
        "| jackd | | bare rtmidi callback -> UDP | scorch router | ratio |",
        "|---|---|---|---|---|",
    ]
    for figures in runs:
        lat = figures["latency"]["samples"]
        base, routed = lat["baseline"], lat["router"]
        server = "realtime" if figures["realtime"] else "no realtime"
        for name, q in (("median", 0.5), ("p99", 0.99)):
            b, r = percentile(base, q), percentile(routed, q)
            lines.append(f"| {server} | {name} | {b:.0f} us | {r:.0f} us | {r / b:.3f}x |")
    lines += ["", "Own time, from taking a message (the router) or entering the callback (the "
              "bare one) to its datagram sent, over the latency samples (messages 2-4 ms apart: "
              "a cold cache, a thread just woken); goal: the router's p99 < 150 us:", "",
              "| jackd | bare callback p50 | p99 | router p50 | p99 | max |",
              "|---|---|---|---|---|---|"]
    for figures in runs:
        own, base_own = figures["own"], figures["base_own"]
        server = "realtime" if figures["realtime"] else "no realtime"
        lines.append(f"| {server} | {base_own['p50']:.1f} us | {base_own['p99']:.1f} us | "
                     f"{own['p50']:.1f} us | {own['p99']:.1f} us | {own['max']:.1f} us |")
    lines += ["", "CPU cost of the hot path in process (`python -m bench.midi.hotpath`, run by "
              "the command above after jackd stopped): what the input thread does with one "
              "queued message (the router's lock, the engine, the datagram; coalescing off), "
              "timed per call; the baseline is a cached `/n_set` with its float packed, and "
              f"`sendto`. {hot_count} control changes over {PARAMS} parameters and "
              f"{hot_count // 5} note messages, each with the garbage collector on, off, and on "
              "after `gc.freeze()`.", "",
              "| us per message | p50 | p99 | max |", "|---|---|---|---|"]
    lines += [f"| {name} | {f['p50']:.1f} | {f['p99']:.1f} | {f['max']:.1f} |"
              for name, f in hot.items()]
    lines += ["", "Flood: control changes over 16 parameters at 20,000 /s with a note on/off "
              "pair after every 40, on one port that the router and a bare rtmidi callback both "
              "listen to, in the same run. Lost = sent - received.", "",
              "| jackd | sent | bare callback received | lost | router received | lost | "
              "thinned in batches | notes on/off (router) | /s_new, releases sent | voices "
              "left | last values right |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for figures in runs:
        t = figures["throughput"]
        server = "realtime" if figures["realtime"] else "no realtime"
        bare = t["bare"]["count"]
        lines.append(
            f"| {server} | {t['injected']} | {bare} | {t['injected'] - bare} | {t['received']} "
            f"| {t['injected'] - t['received']} | {t['thinned']} | {t['notes_on'][0]}/"
            f"{t['notes_off'][0]} of {t['notes_injected']} | {t['notes_on'][1]}, "
            f"{t['notes_off'][1]} | {t['voices_left']} | "
            f"{PARAMS - len(t['wrong_vs_injected'])}/{PARAMS} |")
    lines += ["", "Without realtime scheduling on a loaded machine every JACK client misses "
              "cycles and JACK drops the MIDI of a missed cycle for that client; a callback "
              "that waits for Python's GIL misses more. With it, a client that never runs "
              "Python in JACK's thread misses none. The router's releases include those held "
              "back until the voice's gate was open 25 ms (a note shorter than an audio period "
              "would otherwise leave a synth that never ends).", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--hotpath-count", type=int, default=100_000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    runs = [run(args.samples, args.rate, args.seconds, realtime)
            for realtime in (False, True)]
    from bench.midi import hotpath as midi_hotpath

    section = report(runs, midi_hotpath.run(args.hotpath_count, 0.0), args.hotpath_count)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
