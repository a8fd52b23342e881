"""A host reached over ssh: a real sshd on loopback, ``ssh HOST scorch bridge``, ``scorch run``.

The sshd is the test's own (its port, host key and authorized_keys in a tmp
dir); the coordinator reaches it with the system's ssh client and the keys
the config names, as a laptop reaches a room's machine.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorch.api.coordinator import Coordinator
from scorch.config.installation import Config, load_config
from scorch.errors import HostUnreachable
from scorch.hosts.channel import SshChannel, open_channel
from scorch.hosts.link import HostState
from tests.conftest import jack_name
from tests.support.harness import wait_for
from tests.support.hosts.harness import SCORCH, ScorchRun, Sshd, free_tcp_port, jack

pytestmark = pytest.mark.integration


class Far:
    """One host, ``far``, behind the test's sshd."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.sshd = Sshd(directory / "sshd", "127.0.0.1", free_tcp_port())
        self.path = directory / "config.toml"
        self.path.write_text(self.text(self.sshd.identity))
        self.config: Config = load_config(self.path)
        try:
            self.run = self.start()
        except BaseException:
            self.sshd.stop()
            raise

    def text(self, identity: Path) -> str:
        table = self.sshd.host_table("far", self.path, jack("far"))
        table = table.replace(f'identity = "{self.sshd.identity}"', f'identity = "{identity}"')
        return textwrap.dedent(f"""
            state_dir = "{self.directory / 'state'}"
            [audio]
            driver = "dummy"
            jack_server = "{jack_name('hs')}"
            [docs]
            build = "on-demand"
            [instances.attic]
            host = "far"
            synthdefs = ["sine"]
            """) + table

    def start(self) -> ScorchRun:
        run = ScorchRun(self.path, "far", self.directory / "far.log")
        try:
            run.wait_serving(self.config.host_state_path("far"))
        except BaseException:
            run.stop()
            raise
        return run

    def scorch(self, *args: str, config: Path | None = None,
               ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCORCH), *args, "--config", str(config or self.path)],
                              capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def far(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Far]:
    made = Far(tmp_path_factory.mktemp("ssh"))
    try:
        yield made
    finally:
        assert made.run.stop() == 0
        made.sshd.stop()


def test_ssh_argv_is_batch_mode_with_the_configs_key_and_a_quoted_remote_command(
        far: Far) -> None:
    channel = open_channel("far", far.config)
    try:
        assert isinstance(channel, SshChannel)
        argv = channel.argv
        assert argv[:3] == ["ssh", "-T", "-o"] and "BatchMode=yes" in argv
        assert argv[argv.index("-i") + 1] == str(far.sshd.identity)
        assert f"UserKnownHostsFile={far.sshd.known_hosts}" in argv
        assert argv[-2:] == ["127.0.0.1",
                             f"{SCORCH} bridge --config {far.path} --host far"]
    finally:
        channel.close()


def test_status_and_exec_reach_the_host_over_ssh(far: Far) -> None:
    done = far.scorch("status", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert [(r["name"], r["host"], r["state"]) for r in status["instances"]] == [
        ("attic", "far", "READY")]
    (host,) = status["hosts"]
    assert (host["name"], host["transport"], host["state"]) == ("far", "ssh", "CONNECTED")
    assert host["rtt_ms"] > 0 and host["warnings"] == []
    ran = far.scorch("exec", "attic", '"over ssh".postln; 7 * 6')
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["over ssh", "-> 42"]


def test_one_ssh_connection_carries_calls_in_parallel(far: Far) -> None:
    channel = open_channel("far", far.config)
    try:
        slow: dict[str, Any] = {}
        waiting = threading.Thread(target=lambda: slow.update(channel.call(
            "wait_for", {"instance": "attic", "pattern": "never", "timeout_s": 2.0}, 10.0)))
        channel.call("ping", {}, 10.0)  # connected: ssh and the bridge are up
        waiting.start()
        time.sleep(0.2)
        started = time.monotonic()
        listed = channel.call("list_instances", {}, 5.0)
        assert time.monotonic() - started < 1.0  # not behind the wait on the same channel
        assert listed["instances"][0]["name"] == "attic"
        assert waiting.is_alive()
        waiting.join(timeout=10)
        assert slow == {"matched": False, "line": None}
    finally:
        channel.close()


def test_a_refused_key_is_unreachable_with_what_ssh_said(far: Far) -> None:
    stranger = far.directory / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
                   check=True, timeout=30)
    path = far.directory / "refused.toml"
    path.write_text(far.text(stranger))
    started = time.monotonic()
    done = far.scorch("list", "--json", config=path)
    assert time.monotonic() - started < 10
    assert done.returncode == 3, done.stderr  # no host answers
    listed = json.loads(done.stdout)
    (host,) = listed["hosts"]
    assert host["state"] == "UNREACHABLE"
    assert "Permission denied" in host["reason"]
    assert listed["instances"][0]["state"] == "UNKNOWN"


def test_scorch_run_down_is_not_running_sshd_down_unreachable_and_both_come_back(
        far: Far) -> None:
    coordinator = Coordinator(far.config, watch=True)
    link = coordinator.links["far"]
    try:
        assert link.wait_for(HostState.CONNECTED, 15.0), link.view
        assert far.run.stop() == 0
        assert link.wait_for(HostState.NOT_RUNNING, 3.0), link.view
        far.run = far.start()
        assert link.wait_for(HostState.CONNECTED, 15.0), link.view
        wait_for(lambda: link.view.rows and link.view.rows[0]["state"] == "READY",
                 timeout=5.0)
        gone = time.time()
        far.sshd.stop()  # the listener and every session: the machine is gone for ssh
        assert link.wait_for(HostState.UNREACHABLE, 3.0), link.view
        started = time.monotonic()
        with pytest.raises(HostUnreachable, match=r"UNREACHABLE since .* retried in the"):
            coordinator.call("console", {"instance": "attic"})
        assert time.monotonic() - started < 0.5  # known down: no timeout waited out
        status = coordinator.call("status", {"instance": "attic"})
        (row,) = status.instances  # type: ignore[attr-defined]
        assert (row.state, row.reason) == ("UNKNOWN", "host far UNREACHABLE; last seen READY")
        listed = coordinator.call("list_instances", {})
        assert [r.state for r in listed.instances] == ["UNKNOWN"]  # type: ignore[attr-defined]
        far.sshd = Sshd(far.directory / "sshd", "127.0.0.1", far.sshd.port)
        assert link.wait_for(HostState.CONNECTED, 15.0), link.view
        wait_for(lambda: (link.view.reconciled_at or 0) > gone, timeout=5.0)
        listed = coordinator.call("list_instances", {})
        assert [r.state for r in listed.instances] == ["READY"]  # type: ignore[attr-defined]
    finally:
        coordinator.close()
