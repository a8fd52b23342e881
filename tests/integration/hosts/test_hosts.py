"""Two hosts on one machine (``via = "local"``): two ``scorch run --host``, a coordinator.

Each host is its own ``scorch run`` with its own state directory, control
socket and JACK server; the coordinator (the CLI, an MCP client, or a
:class:`Coordinator` watching) reaches both, merges their answers, times
bundles across them, and tells a host that went away from one that answers.
A MIDI controller on one host plays a room of the other.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rtmidi
from mcp import Client, StdioServerParameters

from scorch.api.coordinator import Coordinator
from scorch.config.installation import Config, load_config
from scorch.hosts.link import HostState
from scorch.primitives.system.jackd import client_environment
from tests.conftest import jack_name, node_exists, scsynth_param
from tests.support.harness import wait_for
from tests.support.hosts.harness import SCORCH, ScorchRun
from tests.support.hosts.two_hosts import two_host_config

pytestmark = pytest.mark.integration

KNOB = "scorchtest-h16knob"


class Hosts:
    """The two ``scorch run``s of the module, and how to reach them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.jack = jack_name("hl")
        self.path = directory / "config.toml"
        self.path.write_text(two_host_config(directory / "state", self.jack, KNOB))
        self.config: Config = load_config(self.path)
        self.runs: dict[str, ScorchRun] = {}
        # One after the other: two JACK servers and their clients registering at the
        # same instant on one machine sometimes fail (JACK's shared registry).
        try:
            for host in ("alpha", "beta"):
                self.start(host).wait_serving(self.config.host_state_path(host))
        except BaseException:
            self.stop(check=False)
            raise

    def start(self, host: str) -> ScorchRun:
        run = ScorchRun(self.path, host, self.directory / f"{host}.log")
        self.runs[host] = run
        return run

    def scorch(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCORCH), *args, "--config", str(self.path)],
                              capture_output=True, text=True, timeout=timeout)

    def status(self) -> dict[str, Any]:
        done = self.scorch("status", "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    def stop(self, check: bool = True) -> None:
        codes = {host: run.stop() for host, run in self.runs.items()}
        assert not check or all(code == 0 for code in codes.values()), codes


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosts]:
    made = Hosts(tmp_path_factory.mktemp("hosts"))
    try:
        yield made
    finally:
        made.stop()


def test_each_host_runs_only_its_rooms_in_its_own_state_dir_and_jack(hosts: Hosts) -> None:
    for host, room in (("alpha", "lobby"), ("beta", "gallery")):
        part = hosts.config.for_host(host)
        assert list(part.instances) == [room]
        assert part.audio.jack_server == f"{hosts.jack}-{host}"
        assert part.state_path() == hosts.directory / "state" / "hosts" / host
        assert (part.state_path() / "control.sock").exists()


def test_status_lists_rooms_with_their_host_and_every_host_connected(hosts: Hosts) -> None:
    status = hosts.status()
    rooms = {row["name"]: row for row in status["instances"]}
    assert {name: (row["host"], row["state"]) for name, row in rooms.items()} == {
        "lobby": ("alpha", "READY"), "gallery": ("beta", "READY")}
    assert rooms["gallery"]["nodes"]["drone"]["synthdef"] == "sine"
    states = {host["name"]: host for host in status["hosts"]}
    assert {name: h["state"] for name, h in states.items()} == {
        "alpha": "CONNECTED", "beta": "CONNECTED"}
    assert states["beta"]["rooms"] == ["gallery"] and states["beta"]["warnings"] == []
    assert 0 < states["alpha"]["rtt_ms"] < 1000
    assert abs(states["alpha"]["clock_offset_ms"]) < states["alpha"]["rtt_ms"] + 5
    listed = hosts.scorch("list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:3] == ["room", "host", "group"]
    assert any(line.split()[:4] == ["gallery", "beta", "rooms", "READY"] for line in lines)
    assert any(line.split()[:4] == ["alpha", "local", "127.0.0.1", "CONNECTED"]
               for line in lines)


def test_host_option_reaches_one_host_and_an_unknown_one_is_named(hosts: Hosts) -> None:
    done = hosts.scorch("list", "--host", "beta", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [row["name"] for row in listed["instances"]] == ["gallery"]
    wrong = hosts.scorch("list", "--host", "gamma")
    assert wrong.returncode == 2
    assert "no [hosts.gamma]; hosts: alpha, beta" in wrong.stderr


def test_exec_on_every_host_and_errors_name_the_room(hosts: Hosts) -> None:
    done = hosts.scorch("exec", "*", '"on " ++ s.name')
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["lobby: -> on lobby", "gallery: -> on gallery"]
    failed = hosts.scorch("exec", "gallery", "1 + nil.foo")
    assert failed.returncode == 1
    assert "gallery" in failed.stderr and "foo" in failed.stderr


def test_a_keyed_call_sent_again_through_the_coordinator_runs_once_on_each_host(
        hosts: Hosts) -> None:
    """The coordinator derives each host's key from the call's: the same on a resend."""
    code = ("Library.put(\\onceHosts, (Library.at(\\onceHosts) ? 0) + 1); "
            "Library.at(\\onceHosts)")
    values = []
    for key in ("coordinated-1", "coordinated-1", "coordinated-2"):
        coordinator = Coordinator(hosts.config)  # a new one, as after a dropped connection
        try:
            out = coordinator.call("execute", {"instance": "*", "code": code}, key=key)
        finally:
            coordinator.close()
        values.append({r["instance"]: r["value"] for r in out.model_dump()["results"]})
    assert values == [{"lobby": "1", "gallery": "1"}] * 2 + [{"lobby": "2", "gallery": "2"}]


def test_a_failed_command_with_json_prints_its_code_and_argument(hosts: Hosts) -> None:
    done = hosts.scorch("status", "nobody", "--json")
    assert done.returncode == 1 and "nobody" in done.stderr
    error = json.loads(done.stdout)["error"]
    assert (error["code"], error["retryable"], error["argument"]) == (
        "NOT_FOUND", False, "instance")
    assert "nobody" in error["message"]


def test_one_delay_is_one_time_on_every_host_and_scsynth_starts_then(hosts: Hosts) -> None:
    coordinator = Coordinator(hosts.config)
    try:
        before = _synths(coordinator)
        sent = time.time()
        out = coordinator.call("execute", {
            "instance": "*", "delay": 1.5,
            "code": "Synth(\\sine, [amp: 0.001, freq: 880]); 42"})
        at = out.at  # type: ignore[attr-defined]
        assert at is not None and sent + 1.4 < at < time.time() + 1.5
        values = {r.instance: r.value for r in out.results}  # type: ignore[attr-defined]
        assert set(values) == {"lobby", "gallery"}
        assert len(set(v.split(" (in")[0] for v in values.values())) == 1  # the same time
        assert all(v.startswith(f"scheduled: runs at {at:.6f}"[:30]) for v in values.values())
        time.sleep(max(0.0, at - time.time() - 0.4))
        assert _synths(coordinator) == before  # not yet, on either host
        time.sleep(max(0.0, at - time.time()) + 0.4)
        assert _synths(coordinator) == {name: n + 1 for name, n in before.items()}
        coordinator.call("stop", {"instance": "lobby"})
    finally:
        coordinator.close()


def _synths(coordinator: Coordinator) -> dict[str, int]:
    status = coordinator.call("status", {})
    return {row.name: row.server.synths  # type: ignore[attr-defined]
            for row in status.instances}  # type: ignore[attr-defined]


def test_play_at_one_time_starts_on_both_hosts_then(hosts: Hosts) -> None:
    coordinator = Coordinator(hosts.config)
    try:
        # Far enough ahead that both calls are answered before it on a loaded machine (two
        # hosts, one over ssh): the check that nothing started early needs that time.
        at = time.time() + 4.0
        played = {room: coordinator.call("play", {
            "instance": room, "synthdef": "sine", "name": "bell", "at": at,
            "params": {"amp": 0.001}}) for room in ("lobby", "gallery")}
        assert time.time() < at - 0.5, "the two plays took too long to check what came first"
        assert all(p.at == at for p in played.values())  # type: ignore[attr-defined]
        ports = {row["name"]: row["port"] for row in hosts.status()["instances"]}
        from scorch.primitives.scsynth.client import OscClient

        clients = {room: OscClient(ports[room]) for room in played}
        try:
            ids = {room: p.node_id for room, p in played.items()}  # type: ignore[attr-defined]
            time.sleep(max(0.0, at - time.time() - 0.4))
            assert not any(node_exists(clients[r], ids[r]) for r in played)
            time.sleep(max(0.0, at - time.time()) + 0.3)
            assert all(node_exists(clients[r], ids[r]) for r in played)
        finally:
            for client in clients.values():
                client.close()
        for room in played:
            coordinator.call("release", {"instance": room, "node": "bell"})
    finally:
        coordinator.close()


def test_undo_of_the_installation_steps_each_host_latest_first_and_skips_a_host_with_none(
        hosts: Hosts) -> None:
    """Each host keeps its own journal: undo and redo step the one with the latest change."""
    coordinator = Coordinator(hosts.config)
    try:
        coordinator.call("play", {"instance": "lobby", "synthdef": "sine", "name": "hum",
                                  "params": {"amp": 0.001}})
        time.sleep(0.05)  # the set comes later, on the other host
        coordinator.call("set", {"instance": "gallery", "node": "drone",
                                 "params": {"freq": 330}})
        gallery = coordinator.call("status", {"instance": "gallery"}).model_dump()
        row = gallery["instances"][0]
        drone, port = row["nodes"]["drone"]["node_id"], row["port"]
        assert scsynth_param(port, drone, "freq") == pytest.approx(330.0)

        def steps(action: str) -> list[str]:
            out = coordinator.call("undo", {"action": action}).model_dump()
            return [step["summary"] for step in out["steps"]]

        def lobby_nodes() -> set[str]:
            status = coordinator.call("status", {"instance": "lobby"}).model_dump()
            return set(status["instances"][0]["nodes"])

        assert [s.split(", params")[0] for s in steps("undo")] == [
            "beta: set(instance=gallery, node=drone"]
        assert scsynth_param(port, drone, "freq") != pytest.approx(330.0)
        assert "hum" in lobby_nodes()
        undone = steps("undo")  # beta has nothing left of this test: alpha's play goes
        assert len(undone) == 1 and undone[0].startswith("alpha: play(")
        assert "hum" not in lobby_nodes()
        assert steps("redo")[0].startswith("alpha: play(")  # the reverse order
        assert steps("redo")[0].startswith("beta: set(")
        assert scsynth_param(port, drone, "freq") == pytest.approx(330.0)
        coordinator.call("release", {"instance": "lobby", "node": "hum"})
    finally:
        coordinator.close()


def test_a_controller_on_one_host_plays_a_room_on_the_other(hosts: Hosts) -> None:
    gallery = next(r for r in hosts.status()["instances"] if r["name"] == "gallery")
    drone = gallery["nodes"]["drone"]["node_id"]
    with client_environment(f"{hosts.jack}-alpha"):  # alpha's JACK: plugged into alpha
        knob = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="scorchtest-hw")
        knob.open_virtual_port(KNOB)
    try:
        def moved() -> bool:
            knob.send_message([0xB0, 74, 127])  # top of the range: 1000 Hz
            return scsynth_param(gallery["port"], drone, "freq") == pytest.approx(1000.0)

        wait_for(moved, timeout=15.0, interval=0.2)
        # beta keeps the value alpha's router sent: its restores bring it back.
        wait_for(lambda: next(r for r in hosts.status()["instances"] if r["name"] == "gallery")
                 ["nodes"]["drone"]["params"].get("freq") == pytest.approx(1000.0),
                 timeout=10.0, interval=0.2)
    finally:
        knob.close_port()
        knob.delete()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_list_instances_in_coordinator_mode(hosts: Hosts) -> None:
    log = hosts.directory / "mcp.log"
    params = StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" mcp --config "$1" 2>>"$2"', str(SCORCH),
                            str(hosts.path), str(log)])
    async with Client(params) as client:
        result = await client.call_tool("list_instances", {})
        assert not result.is_error, result.content
        listed = result.structured_content
        assert listed is not None
        assert listed["hosted_by"] == "coordinator"
        assert {(r["name"], r["host"], r["state"]) for r in listed["instances"]} == {
            ("lobby", "alpha", "READY"), ("gallery", "beta", "READY")}
        assert {(h["name"], h["state"]) for h in listed["hosts"]} == {
            ("alpha", "CONNECTED"), ("beta", "CONNECTED")}
        ran = await client.call_tool("execute", {"instance": "gallery", "code": "3 * 4"})
        assert not ran.is_error and ran.structured_content is not None
        assert ran.structured_content["results"][0]["value"] == "12"


def test_a_host_gone_is_seen_within_3_s_others_answer_and_it_is_reconciled_back(
        hosts: Hosts) -> None:
    coordinator = Coordinator(hosts.config, watch=True)
    try:
        links = coordinator.links
        assert links["beta"].wait_for(HostState.CONNECTED, 10.0)
        wait_for(lambda: links["beta"].view.rows, timeout=5.0)  # its rooms read once
        killed = time.time()
        hosts.runs["beta"].kill()
        assert links["beta"].wait_for(HostState.NOT_RUNNING, 3.0), links["beta"].view
        started = time.monotonic()
        listed = coordinator.call("list_instances", {})
        assert time.monotonic() - started < 2.5  # the lost host holds nothing up
        rows = {row.name: row for row in listed.instances}  # type: ignore[attr-defined]
        assert rows["lobby"].state == "READY"
        assert rows["gallery"].state == "UNKNOWN"
        assert "NOT_RUNNING" in (rows["gallery"].reason or "")
        assert "last seen READY" in (rows["gallery"].reason or "")
        done = coordinator.call("execute", {"instance": "*", "code": "1 + 1"})
        outcomes = {r.instance: r for r in done.results}  # type: ignore[attr-defined]
        assert outcomes["lobby"].ok and outcomes["lobby"].value == "2"
        assert not outcomes["gallery"].ok
        assert outcomes["gallery"].error.kind == "unavailable"
        hosts.start("beta").wait_serving(hosts.config.host_state_path("beta"))
        assert links["beta"].wait_for(HostState.CONNECTED, 15.0)
        wait_for(lambda: (links["beta"].view.reconciled_at or 0) > killed, timeout=5.0)
        assert [(r["name"], r["state"]) for r in links["beta"].view.rows] == [
            ("gallery", "READY")]
        listed = coordinator.call("list_instances", {})
        assert {r.name: r.state for r in listed.instances} == {  # type: ignore[attr-defined]
            "lobby": "READY", "gallery": "READY"}
    finally:
        coordinator.close()
