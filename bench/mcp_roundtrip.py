"""Benchmark MCP tool round trips through the real clients: stdio hosted and attached, HTTP.

Run with ``python -m bench.mcp_roundtrip`` (a few minutes). It writes a
two-room config on a private JACK server, then:

- hosted: starts ``scorch mcp`` as a subprocess (it boots the orchestra) and
  times ``list_instances`` and ``execute(alpha, "1")`` from ``call_tool`` to its
  result, through ``mcp.Client(StdioServerParameters(...))``;
- start-up: three times, the seconds from spawning ``scorch mcp`` to its
  ``initialize`` answer and to every room READY;
- attached: starts ``scorch run``, then ``scorch mcp`` (which attaches over the
  control socket), and times the same calls;
- HTTP: starts ``scorch mcp --http`` on loopback (it boots the orchestra) and times
  the same calls through ``mcp.Client(URL)``, once with a session (``legacy``) and
  once with the client's default protocol.

The figures replace the ``## MCP`` section of BENCHMARKS.md (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench.report import write_section
from scorch.primitives.system.process import DIE_WITH_PARENT
from scorch.wire.envelope import find_running
from tests.support.harness import two_rooms
from tests.support.hosts.harness import free_tcp_port
from tests.support.mcp.http import HttpServer
from tests.support.mcp.http import client as http_client

ROOT = Path(__file__).resolve().parent.parent
SCORCH = str(Path(sys.executable).parent / "scorch")
GOALS = {"list_instances": 10.0, "execute": 5.0}  # ms at the median


def write_config(folder: Path, jack: str = "scorch-bench-mcp") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.toml"
    config.write_text(two_rooms(folder / "state", jack))
    return config


def stdio(config: Path) -> StdioServerParameters:
    """``scorch mcp --config CONFIG`` as the stdio client starts it."""
    return StdioServerParameters(
        command=SCORCH, args=["mcp", "--config", str(config)],
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")})


Figures = tuple[str, dict[str, list[float]]]
"""The protocol a client spoke, and milliseconds per call of each tool."""


Server = StdioServerParameters | HttpServer
"""A stdio command, or a ``scorch mcp --http`` (its URL and its token)."""


async def measure(servers: dict[str, Server], samples: int,
                  mode: str = "auto") -> dict[str, Figures]:
    """Each server's figures, after a warm-up; with several, their calls take turns.

    A server is a stdio command or a ``scorch mcp --http``. Taking turns
    call by call, they share whatever else the machine is doing at the time.
    """
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "list_instances": ("list_instances", {}),
        "execute": ("execute", {"instance": "alpha", "code": "1"}),
    }
    out: dict[str, dict[str, list[float]]] = {label: {name: [] for name in calls}
                                              for label in servers}
    with open(os.devnull, "w") as quiet:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(quiet.fileno(), 2)  # the server's log goes to our stderr otherwise
        try:
            async with contextlib.AsyncExitStack() as stack:
                clients = {label: await stack.enter_async_context(
                               http_client(server.url, mode, **server.bearer)
                               if isinstance(server, HttpServer) else Client(server, mode=mode))
                           for label, server in servers.items()}
                for _ in range(20):
                    for client in clients.values():
                        for tool, args in calls.values():
                            await client.call_tool(tool, args)
                for _ in range(samples):
                    for name, (tool, args) in calls.items():
                        for label, client in clients.items():
                            start = time.perf_counter()
                            result = await client.call_tool(tool, args)
                            out[label][name].append((time.perf_counter() - start) * 1000)
                            assert not result.is_error, result.content
                spoke = {label: str(client.session.protocol_version)
                         for label, client in clients.items()}
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    return {label: (spoke[label], out[label]) for label in servers}


async def start_up(config: Path) -> tuple[float, float]:
    """Seconds from spawning ``scorch mcp`` to its initialize answer, and to every room READY.

    The handshake cache lives beside the config: the first start of a run is cold
    (the SDK answers and fills it), the next ones warm.
    """
    params = StdioServerParameters(
        command=SCORCH, args=["mcp", "--config", str(config)],
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"),
             "XDG_CACHE_HOME": str(config.parent / "cache")})
    with open(os.devnull, "w") as quiet:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(quiet.fileno(), 2)
        try:
            start = time.perf_counter()
            async with Client(params, mode="legacy") as client:  # initialize, as Claude Desktop
                initialized = time.perf_counter() - start
                with anyio.fail_after(60):
                    while True:
                        result = await client.call_tool("list_instances", {})
                        rows = (result.structured_content or {}).get("instances", [])
                        states = {row["state"] for row in rows}
                        if states == {"READY"}:
                            return initialized, time.perf_counter() - start
                        await anyio.sleep(0.02)
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def attached(config: Path, samples: int) -> dict[str, Figures]:
    """Measure against a running ``scorch run``."""
    run = subprocess.Popen([SCORCH, "run", "--config", str(config)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True,
                           preexec_fn=DIE_WITH_PARENT)
    try:
        deadline = time.monotonic() + 60
        while find_running(config.parent / "state") is None:
            if run.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("scorch run did not open its control socket")
            time.sleep(0.1)
        servers: dict[str, Server] = {"stdio attached": stdio(config)}
        return anyio.run(measure, servers, samples)
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=30)


def hosted(config: Path, samples: int) -> dict[str, Figures]:
    """stdio and HTTP side by side, each ``scorch mcp`` hosting its own two rooms.

    The HTTP one runs a copy of the config on its own JACK server. Both client modes:
    ``legacy`` (the initialize handshake, as Claude Desktop; over HTTP a session) and
    ``auto`` (the SDK client's default, the newest protocol).
    """
    other = write_config(config.parent / "http", "scorch-bench-mcp-http")
    server = HttpServer(other, "127.0.0.1", free_tcp_port(), other.parent / "http.log")
    try:
        figures: dict[str, Figures] = {}
        servers: dict[str, Server] = {"stdio": stdio(config), "HTTP": server}
        for mode in ("legacy", "auto"):
            found = anyio.run(measure, servers, samples, mode)
            figures.update({f"{label} hosted {mode}": f for label, f in found.items()})
        return figures
    finally:
        server.stop()


HTTP_NOTE = (
    "The mode is the client's: `legacy` is the initialize handshake (as Claude Desktop"
    " speaks it; over HTTP with a session, `Mcp-Session-Id`), `auto` the SDK client's"
    " default, the newest protocol it and the server share, where each request stands"
    " alone. Over HTTP each call is a POST on a kept-alive loopback connection, its answer"
    " an SSE stream.")


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[int(len(ordered) * 0.9)]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(ordered):.2f} | {p90:.2f} | {p99:.2f}"


def report(figures: dict[str, Figures], samples: int,
           starts: list[tuple[float, float]]) -> str:
    lines = [
        "## MCP",
        "",
        "Tool round trips through the MCP SDK's own client (`mcp.Client`), from `call_tool` to"
        " its parsed result; two READY rooms; in one run, over stdio"
        " (`StdioServerParameters` running `scorch mcp`) and over streamable HTTP (`scorch mcp"
        " --http` on loopback, the client given its URL), the hosted stdio and HTTP servers"
        " side by side, their calls taking turns so that both meet the same load;"
        f" {samples} samples each after 20 warm-up calls. `python -m bench.mcp_roundtrip`.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, JACK period 64.",
        "",
        "| transport, server, client mode | protocol | tool | median ms | p90 ms | p99 ms "
        "| goal (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, (protocol, tools) in figures.items():
        for tool, values in tools.items():
            goal = GOALS[tool]
            verdict = "met" if statistics.median(values) < goal else "MISSED"
            lines.append(f"| {mode} | {protocol} | {tool} | {summary(values)} "
                         f"| < {goal:g} ms: {verdict} |")
    cold, warm = starts[0], starts[1:]
    initialized = sorted(a for a, _ in warm)
    ready = sorted(b for _, b in warm)
    lines += [
        "",
        f"Start-up, hosted: spawn of `scorch mcp` to its `initialize` answer: cold (no "
        f"handshake cache yet, the first start after an install or upgrade) {cold[0]:.2f} s; "
        f"warm ({len(warm)} runs) median {statistics.median(initialized) * 1000:.0f} ms "
        f"(max {initialized[-1] * 1000:.0f} ms; goal < 300 ms: "
        f"{'met' if statistics.median(initialized) < 0.3 else 'MISSED'}). To both rooms READY"
        f" in `list_instances`: cold {cold[1]:.2f} s, warm median "
        f"{statistics.median(ready):.2f} s. The handshake is answered before the MCP SDK "
        "loads (`mcp_server/early.py`), with the SDK's own answers from an earlier start; "
        "the rooms boot in the background.",
        "",
        "`execute` is `\"1\"` on alpha: sclang's evaluation is a fraction of a millisecond;"
        " the rest is JSON-RPC over pipes, the MCP SDK's validation of arguments and"
        " structured output, and the worker-thread hop of a sync tool. Attached adds one"
        " Unix-socket round trip to `scorch run`.",
        "",
        HTTP_NOTE,
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scorch-bench-mcp-") as folder:
        config = write_config(Path(folder))
        starts = [anyio.run(start_up, config) for _ in range(4)]
        figures = {**hosted(config, args.samples), **attached(config, args.samples)}
    section = report(figures, args.samples, starts)
    sys.stdout.write(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
