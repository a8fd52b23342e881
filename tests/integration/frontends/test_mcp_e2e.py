"""`scorch mcp` as Claude Desktop runs it: a subprocess on real stdio, real SuperCollider.

Hosted: the server boots the orchestra and leaves no process when the session
ends or SIGTERM comes. Attached: a running `scorch run` keeps playing after the
MCP session closes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from scorch.primitives.system.process import DIE_WITH_PARENT
from scorch.wire.envelope import find_running
from tests.conftest import jack_name, scsynth_param
from tests.support.harness import two_rooms
from tests.support.mcp.calls import call
from tests.support.processes import SCORCH, pids_using, sclangs_started_before_jackd
from tests.support.shm.cleanup import kill_freeing_segments

pytestmark = [pytest.mark.integration]



@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A two-instance config on its own JACK server; kills whatever is left by pid."""
    jack = jack_name("mcpe2e")
    config = tmp_path / "config.toml"
    config.write_text(two_rooms(tmp_path / "state", jack))
    info: dict[str, Any] = {"config": config, "jack": jack, "log": tmp_path / "mcp.log",
                            "state": tmp_path / "state"}
    yield info
    kill_freeing_segments(pids_using(jack))  # what is left, and the segments it held




def mcp_params(setup: dict[str, Any]) -> StdioServerParameters:
    """`scorch mcp --config` with its stderr kept in a log (exec keeps the pid)."""
    return StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" mcp --config "$1" 2>>"$2"', SCORCH,
                            str(setup["config"]), str(setup["log"])],
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")})


async def musician_session(client: Client, mode: str) -> dict[str, Any]:
    """List, play a named node, set it and check scsynth, read an error and the console."""
    listed = await call(client, "list_instances")
    assert listed["hosted_by"] == {"hosted": "scorch mcp", "attached": "scorch run"}[mode]
    # Hosted, the rooms boot in the background: initialize does not wait for them.
    assert [r["name"] for r in listed["instances"]] == ["alpha", "beta"]
    assert {r["state"] for r in listed["instances"]} <= {"BOOTING", "READY"}
    # A call that needs a room still booting waits for it.
    played = await call(client, "play", instance="beta", synthdef="sine",
                        params={"freq": 220, "amp": 0.02}, name="drone")
    listed = await call(client, "list_instances")
    assert listed["instances"][1]["state"] == "READY"
    port = (await call(client, "status", instance="beta"))["instances"][0]["port"]
    await call(client, "set", instance="beta", node="drone", params={"freq": 550})
    assert scsynth_param(port, played["node_id"], "freq") == pytest.approx(550)

    error = await client.call_tool("execute", {
        "instance": "alpha", "code": '(\nvar a = 1;\n"fine".postln;\na = a + 2 3;\n)'})
    assert error.is_error
    message = "\n".join(getattr(b, "text", "") for b in error.content)
    assert "parse error" in message and "(line 4," in message and "4 | a = a + 2 3;" in message

    await call(client, "execute", instance="alpha", code='"e2e-console-line".postln')
    lines = (await call(client, "console", instance="alpha", lines=50))["lines"]
    assert any(line["text"] == "e2e-console-line" for line in lines)
    status = await call(client, "status", instance="*")
    pids = [p for s in status["instances"] for p in s["pids"].values() if p]
    return {"port": port, "node_id": played["node_id"], "pids": pids}


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if Path(f"/proc/{p}").exists()
                 and Path(f"/proc/{p}/stat").read_text().split(")")[-1].split()[0] != "Z"]
        time.sleep(0.05)
    return alive


@pytest.mark.anyio
async def test_hosted_session_plays_sets_reports_errors_and_leaves_no_process(
        setup: dict[str, Any]) -> None:
    async with Client(mcp_params(setup)) as client:
        seen = await musician_session(client, "hosted")
        assert pids_using(setup["jack"])
    log = setup["log"].read_text()
    assert "hosting" in log and "orchestra stopped; no process left" in log
    assert wait_gone(seen["pids"], 5.0) == []
    assert wait_gone(pids_using(setup["jack"]), 5.0) == []


@pytest.mark.anyio
async def test_attached_session_uses_the_running_installation_which_keeps_playing(
        setup: dict[str, Any]) -> None:
    with open(setup["log"].with_name("run.log"), "w") as run_log:
        run = subprocess.Popen([SCORCH, "run", "--config", str(setup["config"])],
                               stdout=run_log, stderr=subprocess.STDOUT,
                               start_new_session=True, preexec_fn=DIE_WITH_PARENT)
    try:
        deadline = time.monotonic() + 60
        while find_running(setup["state"]) is None:
            assert run.poll() is None, setup["log"].with_name("run.log").read_text()
            assert time.monotonic() < deadline, "scorch run did not open its control socket"
            time.sleep(0.1)
        before = set(pids_using(setup["jack"]))
        async with Client(mcp_params(setup)) as client:
            seen = await musician_session(client, "attached")
            assert set(pids_using(setup["jack"])) == before  # nothing booted twice
        assert "attaching" in setup["log"].read_text()
        assert run.poll() is None
        assert wait_gone(seen["pids"], 1.0) == seen["pids"]  # all still alive
        assert scsynth_param(seen["port"], seen["node_id"], "freq") == pytest.approx(550)
    finally:
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=30) == 0
    assert wait_gone(pids_using(setup["jack"]), 5.0) == []


def test_sigterm_stops_a_hosted_server_cleanly_and_stdout_holds_only_protocol(
        setup: dict[str, Any]) -> None:
    with open(setup["log"], "w") as err:
        proc = subprocess.Popen([SCORCH, "mcp", "--config", str(setup["config"])],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        requests = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "execute",
                        "arguments": {"instance": "*", "code": '"to-stdout?".postln; 1'}}},
        ]
        for request in requests:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert replies[0]["result"]["serverInfo"]["name"] == "scorch"
        assert replies[1]["result"]["structuredContent"]["results"][0]["value"] == "1"
        children = pids_using(setup["jack"])
        assert children
        # Each room took the sclang started before the MCP SDK loaded; no other was left.
        assert sclangs_started_before_jackd(proc.pid) == (2, 2)
        proc.send_signal(signal.SIGTERM)  # stdin stays open, as when a client hangs
        assert proc.wait(timeout=30) == 0
        rest = proc.stdout.read().decode()
        assert all(json.loads(line) for line in rest.splitlines() if line.strip())
    finally:
        if proc.poll() is None:  # a failed assertion: stop it as a client would, then for sure
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert "orchestra stopped; no process left" in setup["log"].read_text()
    assert wait_gone(children, 5.0) == []
