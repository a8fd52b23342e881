"""Benchmark the MIDI router: latency against a bare rtmidi-to-UDP baseline, and throughput.

Run with ``python -m bench.midi.latency`` (about four minutes on a loaded machine).
It starts a private jackd, plays JACK MIDI virtual ports standing in for hardware
(one for the baseline and one per router variant of :data:`VARIANTS`, so none
compete for one message), and receives the OSC datagrams on a UDP socket
standing in for scsynth.

- Latency: time from ``send_message`` on the hardware port to the datagram's
  arrival; in blocks of :data:`BLOCK` samples, one router variant alive at a time
  beside the baseline, the two interleaved at random, the variants' order
  shuffled per block: scorch's own JACK input, rtmidi's polled queue (before),
  the own input with the notes capture on.
- Router's own time: taking a message to ``sendto`` returned (``hot_path_ns``).
- Flood: 20,000 control changes per second over 16 parameters with note on/off
  pairs mixed in, on a third port that the router and a bare rtmidi callback
  both listen to, in the same run: what each received, every parameter's last
  value and every note. Once with jackd as the tests run it, once with realtime
  scheduling (``[audio] realtime``), as a stage machine runs it.
- Hot path in process (``bench.midi.hotpath``, after jackd is gone): the callback
  called directly, so the CPU cost per message without any scheduling.
- Idle wake-ups of the input thread (``bench.midi.wakeups``), both inputs.

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
#: Latency samples per path in one block of the run (one router alive at a time).
BLOCK = 100


class ListenerTargets:
    """Targets whose one room is the benchmark's UDP listener."""

    def __init__(self, address: tuple[str, int]) -> None:
        from scorch.state.bus import Bus
        from scorch.state.changes import ParamsChanged

        self.address = address
        self.applied: dict[str, float] = {}
        """The last value the router applied per param (announced on the bus, as the rooms
        take them)."""
        self.bus = Bus()
        self.bus.subscribe(lambda published: self.applied.update(published.change.params),
                           "bench-rooms", lambda change: type(change) is ParamsChanged)

    def resolve(self, selector: str) -> list[str]:
        return ["bench"]

    def endpoint(self, room: str) -> tuple[str, int] | None:
        return self.address

    def node_id(self, room: str, node: str) -> int | None:
        return NODE

    def scene(self, kind: str, scene: str, room: str, value: float) -> None:
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
    for path in ("baseline", *VARIANTS, "flood"):
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
    from scorch.primitives.osc import decode_packet, encode_message

    received: list[bytes] = []
    done = threading.Event()

    def receive() -> None:
        """Keep every datagram; answer a voice's ``/sync`` as scsynth does."""
        sock.settimeout(0.2)
        while not done.is_set():
            try:
                data, sender = sock.recvfrom(65536)
            except TimeoutError:
                continue
            received.append(data)
            if data.startswith(b"#bundle"):
                for message in decode_packet(data):
                    if message.address == "/sync":
                        sock.sendto(encode_message("/synced", *message.args), sender)

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


def measure_latency(samples: int, conn: Any, paths: Sequence[str]) -> dict:
    """Interleave single control changes on every path's port; return latencies in us."""
    results: dict[str, list[float]] = {path: [] for path in paths}
    lost = dict.fromkeys(paths, 0)
    value = 0
    order = list(paths) * samples
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


#: The routers measured beside the bare callback, each on its own port, in one run:
#: name -> (how its inputs are read, notes captured per source, what it stands for).
VARIANTS: dict[str, tuple[str, int, str]] = {
    "router": ("own", 0, "scorch's own JACK input client, woken by an eventfd"),
    "poll": ("rtmidi", 0, "rtmidi's queue polled every 0.25 ms (before)"),
    "capture": ("own", 4096, "the router above with the notes capture on"),
}


def bench_config(coalesce: float | None = None,
                 ports: Sequence[str] = ("benchrouter", "benchflood"),
                 capture: int = 0) -> MidiConfig:
    """PARAMS controls (CC 1..PARAMS to node n's p1..) and 64 voices, on each of ``ports``."""
    controls = [
        {"cc": cc, "port": port, "instance": "bench", "node": "n",
         "param": f"p{cc}", "range": [0, 127], "takeover": "immediate"}
        for port in ports for cc in range(1, PARAMS + 1)
    ]
    keys = [{"port": port, "instance": "bench", "synthdef": "v", "voices": 64}
            for port in ports]
    fields: dict[str, Any] = {"backend": "jack", "virtual_port": "", "inputs": [],
                              "controls": controls, "keys": keys, "capture_notes": capture}
    if coalesce is not None:
        fields["coalesce_interval"] = coalesce
    return MidiConfig.model_validate(fields)


def start_router(name: str, listener: tuple[str, int], state: Path) -> tuple[Any, Any, Any]:
    """Start the router of one variant on its port; return (ref, proxy, targets) once open."""
    from actors.router.actor import MidiRouter

    reader, capture, _ = VARIANTS[name]
    ports = ["bench" + name] + (["benchflood"] if name == "router" else [])
    wanted = {f"bench{name}:{name}"} | ({"benchflood:flood"} if name == "router" else set())
    targets = ListenerTargets(listener)
    os.environ["SCORCH_MIDI_INPUT"] = reader  # read as the router opens its ports
    try:
        router = MidiRouter.start(bench_config(ports=ports, capture=capture), targets, state,
                                  bus=targets.bus)
        proxy = router.proxy()
        deadline = time.monotonic() + 5
        while not wanted <= set(proxy.ports().get(timeout=5)["inputs"]):
            if time.monotonic() > deadline:
                router.stop(timeout=10)
                raise RuntimeError(f"the {name} router did not open its benchmark ports")
            time.sleep(0.01)
    finally:
        os.environ.pop("SCORCH_MIDI_INPUT", None)
    return router, proxy, targets


def run(samples: int, rate: int, seconds: float, realtime: bool = False) -> dict:
    """Start jackd, the player process, the baseline and the routers; return every figure."""
    sys.path.insert(0, str(ROOT))
    from tests.support.harness import jack_server

    with jack_server("scorch-bench-midi", realtime=realtime) as jack:
        os.environ["JACK_DEFAULT_SERVER"] = jack
        os.environ["JACK_NO_START_SERVER"] = "1"
        import rtmidi

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

        latency: dict[str, list[float]] = {"baseline": []}
        own: dict[str, list[int]] = {}
        router = None
        with tempfile.TemporaryDirectory() as state:
            try:
                # Blocks: one router at a time beside the bare callback (a polling router
                # would take the GIL from the others 4,000 times a second), the variants'
                # order shuffled in each block, so all meet the same machine.
                for block in range(max(1, samples // BLOCK)):
                    for name in random.sample(list(VARIANTS), len(VARIANTS)):
                        where = Path(state) / f"{name}{block}"
                        where.mkdir()
                        router, proxy, _ = start_router(name, listener, where)
                        measure_latency(BLOCK // 5, conn, ["baseline", name])  # warm up
                        first, _ = proxy.hot_path_ns().get(timeout=5)
                        got = measure_latency(BLOCK, conn, ["baseline", name])["samples"]
                        timed, ns = proxy.hot_path_ns().get(timeout=5)
                        own.setdefault(name, []).extend(
                            ns[i % len(ns)] for i in range(max(first, timed - len(ns)), timed))
                        latency.setdefault(name, []).extend(got[name])
                        latency.setdefault(f"baseline:{name}", []).extend(got["baseline"])
                        latency["baseline"] += got["baseline"]
                        router.stop(timeout=10)
                        router = None
                base_own = {
                    "p50": percentile(base_times, 0.5) / 1000,
                    "p99": percentile(base_times, 0.99) / 1000,
                }
                router, proxy, targets = start_router("router", listener, Path(state) / "flood")
                throughput = measure_throughput(proxy, targets, conn, bare, rate, seconds)
            finally:
                if router is not None:
                    router.stop(timeout=10)
                conn.send(("quit",))
                player.join(10)
                for midi_in in (base_in, flood_in):
                    midi_in.close_port()
                    midi_in.delete()
    own_us = {name: {"p50": percentile(ns, 0.5) / 1000, "p99": percentile(ns, 0.99) / 1000,
                     "max": max(ns) / 1000} for name, ns in own.items()}
    return {"latency": {"samples": latency}, "own": own_us, "base_own": base_own,
            "throughput": throughput, "realtime": realtime, "load": os.getloadavg()[0]}


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
    from bench.midi import wakeups
    from bench.midi.latency_report import report

    idle = wakeups.run(5.0, 2)
    section = report(runs, midi_hotpath.run(args.hotpath_count, 0.0), args.hotpath_count,
                     wakeups.lines(idle))
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
