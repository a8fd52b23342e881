"""Benchmark controller feedback: how soon a device shows a change, and what it costs MIDI.

Run with ``python -m bench.midi.feedback`` (about a minute; ``--no-write`` leaves
BENCHMARKS.md alone). Two parts, in one run:

1. **MCP set to the device's port**: a whole installation (one room, its own jackd)
   with a virtual nanoKONTROL2 on JACK (the tests' device: one JACK client, its own
   process); an in-memory MCP client calls ``set`` on the param solo1 shows, its value
   flipping each time, and the device stamps each LED message as its JACK cycle
   brings it. The time from the call to the message is what a performer waits.
2. **The router's cost with feedback on**: the input thread's own time per control
   change (``bench.midi.hotpath``'s harness: the router's lock, the engine, the
   datagram), over 16 routed params, with no device to show them (before: what the
   router did without feedback) and with a device that shows every one of them, its
   feedback thread running and drawing each change (after). Rounds interleaved, the
   same process and the same hour.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import socket
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from bench.midi.hotpath import (
    COLD,
    COLD_GAP,
    PORT,
    cc_stream,
    input_path,
    make_router,
    summary,
    time_calls,
)
from bench.midi.latency import PARAMS, percentile
from bench.report import write_section

PROFILE = """
name = "Bench device"
ports = ["benchrouter"]
[source]
title = "A benchmark's device: every knob's ring is its own CC"
[[controls]]
name = "knob{n}"
count = 16
kind = "absolute"
number = 1
feedback = { message = "cc", sets_control = true }
"""


class CountingOutput:
    """An output port that counts what it is sent (the device of part 2)."""

    def __init__(self) -> None:
        self.name = "bench:device"
        self.sent = 0

    def send(self, data: list[int]) -> None:
        self.sent += 1


def cost(count: int, rounds: int) -> tuple[dict[str, dict[str, float]], int]:
    """Part 2: the hot path per control change, without and with a device shown them."""
    from actors.router.feedback import Surface
    from scorch.config.profiles import Profiles, parse_profile

    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    took: dict[str, list[int]] = {"feedback off (before)": [], "feedback on (after)": [],
                                  "feedback off, 3 ms apart": [], "feedback on, 3 ms apart": []}
    output = CountingOutput()
    with tempfile.TemporaryDirectory() as state:
        router = make_router(listener.getsockname(), Path(state), 0.0)
        profile = parse_profile(PROFILE, "bench.toml")
        router._devices.profiles = Profiles([profile])
        entries = router._entries()
        resolved = {"bench": ("bench",)}
        shown = {PORT: Surface(PORT, output, profile)}  # type: ignore[arg-type]
        feedback = router._feedback
        feedback.start()
        callback = input_path(router)
        messages = cc_stream(count)
        try:
            for index in range(rounds * 2):
                on = index % 2 == 1
                router._devices.surfaces = dict(shown) if on else {}
                tables = router._devices.tables([PORT], entries, resolved)
                router._engine.tables = tables
                feedback.install(*router._devices.bindings(tables, entries))
                time.sleep(0.2)  # the device's first drawing, whole
                gc.collect()
                time_calls(callback, messages[:1000], listener)  # warm up
                took["feedback on (after)" if on else "feedback off (before)"] += time_calls(
                    callback, messages, listener)
                took["feedback on, 3 ms apart" if on else "feedback off, 3 ms apart"] += \
                    time_calls(callback, messages[:COLD], listener, COLD_GAP)
                time.sleep(0.1)
        finally:
            feedback.stop()
            router._sender.stop()
            listener.close()
    return {name: summary(values) for name, values in took.items()}, output.sent


async def latency(samples: int) -> dict[str, Any]:
    """Part 1: MCP ``set`` to the LED message on the device's JACK port."""
    from mcp import Client

    from mcp_server.server import build_server
    from scorch.api.local import LocalService
    from scorch.app.orchestra import Orchestra
    from scorch.config.installation import parse_config
    from scorch.primitives.system.jackd import auto_period
    from tests.support.midi.virtual_device import DEVICES, VirtualDevice

    folder = Path(tempfile.mkdtemp(prefix="bench-feedback-"))
    text = textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{os.environ.get('SCORCH_TEST_JACK', 'scorch-bench')}-feedback"
        [docs]
        build = "on-demand"
        [instances.lobby]
        synthdefs = ["sine"]
        [instances.lobby.nodes.drone]
        synthdef = "sine"
        params = {{ freq = 220, amp = 0.0, vibDepth = 0.0 }}
        [midi]
        backend = "jack"
        rescan_interval = 0.1
        [[midi.controls]]
        port = "nanoKONTROL2"
        control = "solo1"
        instance = "lobby"
        node = "drone"
        param = "vibDepth"
        range = [0, 3]
        """)
    orch = Orchestra(parse_config(text, folder / "config.toml"))
    device = None
    try:
        orch.start()
        device = VirtualDevice(*DEVICES["korg-nanokontrol2"], orch.config.audio.jack_server)
        deadline = time.monotonic() + 15
        while not orch.midi.stats()["feedback"]["devices"]:
            assert time.monotonic() < deadline, "the device was not shown"
            time.sleep(0.05)
        time.sleep(1.0)
        took: list[float] = []
        answered: list[float] = []
        async with Client(build_server(LocalService(orch))) as client:
            for index in range(samples + 20):
                device.clear()
                value = 3.0 if index % 2 == 0 else 0.0
                started = time.monotonic_ns()
                await client.call_tool("set", {"instance": "lobby", "node": "drone",
                                               "params": {"vibDepth": value}})
                returned = time.monotonic_ns()
                until = time.monotonic() + 2
                while not device.received() and time.monotonic() < until:
                    await asyncio.sleep(0.0005)
                got = device.received()
                if got and index >= 20:  # the first 20 warm up
                    took.append((got[0][0] - started) / 1e6)
                    answered.append((returned - started) / 1e6)
                await asyncio.sleep(0.01)
        router = orch._tree.router  # the router as the tree tells it (what a bus will)
        assert router is not None
        told: list[float] = []
        for index in range(samples):
            device.clear()
            started = time.monotonic_ns()
            router.observe("lobby", "drone", {"vibDepth": 3.0 if index % 2 else 0.0}).get(timeout=5)
            until = time.monotonic() + 2
            while not device.received() and time.monotonic() < until:
                await asyncio.sleep(0.0002)
            got = device.received()
            if got:
                told.append((got[0][0] - started) / 1e6)
            await asyncio.sleep(0.01)
        return {"samples": len(took), "median": percentile(took, 0.5),
                "p99": percentile(took, 0.99), "answered median": percentile(answered, 0.5),
                "answered p99": percentile(answered, 0.99), "told median": percentile(told, 0.5),
                "told p99": percentile(told, 0.99), "told": len(told), "period": auto_period()}
    finally:
        if device is not None:
            device.close()
        orch.stop()


def report(lat: dict[str, Any], figures: dict[str, dict[str, float]], shown: int,
           count: int, rounds: int) -> str:
    load = os.getloadavg()[0]
    lines = [
        "## Controller feedback",
        "",
        f"`python -m bench.midi.feedback` ({time.strftime('%Y-%m-%d %H:%M')}, load average "
        f"{load:.1f}, 2 CPUs shared with other engineers' test runs).",
        "",
        "From an MCP `set` (an in-memory MCP client, the call through the service, the "
        "room and the router) to the LED message arriving at the device's JACK port (a "
        "virtual nanoKONTROL2 in its own process, stamping each message as its cycle "
        f"brings it), {lat['samples']} calls, the value flipping each time:",
        "",
        "| | median | p99 |",
        "|---|---|---|",
        f"| MCP `set` to the LED message on the device's port | {lat['median']:.2f} ms | "
        f"{lat['p99']:.2f} ms |",
        f"| MCP `set` to its answer (for comparison) | {lat['answered median']:.2f} ms | "
        f"{lat['answered p99']:.2f} ms |",
        f"| the router told of the value (`observe`, {lat['told']} times) to the LED message "
        f"| {lat['told median']:.2f} ms | {lat['told p99']:.2f} ms |",
        "",
        f"jackd's period: {lat['period']} frames at 48 kHz ({lat['period'] / 48:.2f} ms; "
        "the device's stamp is its cycle's start, so a message can read up to one period "
        "late). The LED message leaves before the MCP call has answered: the router is told "
        "inside the call.",
        "",
        f"The router's own time per control change (the input thread: lock, engine, "
        f"datagram), {count} control changes over {PARAMS} params back to back per round "
        f"(a flood), then {COLD} of them {COLD_GAP * 1000:g} ms apart (a knob turned), "
        f"{rounds} rounds of each interleaved: before, no device shows them (what the "
        "router did before feedback); after, a device shows every one of them, its "
        f"feedback thread drawing each change (it sent {shown} messages, at most its "
        "profile's 500 a second):",
        "",
        "| us per message | p50 | p99 | max |",
        "|---|---|---|---|",
    ]
    for name, f in figures.items():
        lines.append(f"| {name} | {f['p50']:.1f} | {f['p99']:.1f} | {f['max']:.1f} |")
    for kind, off, on in (("flood", "feedback off (before)", "feedback on (after)"),
                          ("3 ms apart", "feedback off, 3 ms apart", "feedback on, 3 ms apart")):
        before, after = figures[off], figures[on]
        lines += ["", f"After / before, {kind}: p50 {after['p50'] / before['p50']:.3f}x, "
                  f"p99 {after['p99'] / before['p99']:.3f}x."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    figures, shown = cost(args.count, args.rounds)
    lat = asyncio.run(latency(args.samples))
    section = report(lat, figures, shown, args.count, args.rounds)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
