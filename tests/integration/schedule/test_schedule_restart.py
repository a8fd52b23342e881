"""A ``scorch run`` killed mid-period (a power cut) comes back, started again, to the period's
state; ``scorch schedule`` answers from the command line."""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scorch.api.remote import RemoteService
from scorch.config.installation import load_config
from scorch.wire.envelope import socket_path
from tests.conftest import jack_name, scsynth_param
from tests.support.harness import wait_for
from tests.support.hosts.harness import SCORCH, ScorchRun

pytestmark = pytest.mark.integration


def clock(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def written(folder: Path, body: str) -> Path:
    """A config of a headless room's installation, its tables after ``[docs]`` from ``body``."""
    path = folder / "config.toml"
    path.write_text(textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name('srun')}"
        [docs]
        build = "on-demand"
        """) + textwrap.dedent(body))
    return path


def drone(service: RemoteService) -> tuple[int, int, float]:
    """The room's scsynth port, the drone's node id and its amp as scsynth holds it."""
    row = service.call("status", {"instance": "hall"}).model_dump()["instances"][0]
    port, node = row["port"], row["nodes"]["drone"]["node_id"]
    return port, node, scsynth_param(port, node, "amp")


def test_a_run_killed_mid_period_comes_back_to_the_periods_state(tmp_path: Path) -> None:
    now = time.time()
    path = written(tmp_path, f"""
        [location]
        timezone = "UTC"
        [instances.hall]
        synthdefs = ["sine"]
        [instances.hall.nodes.drone]
        synthdef = "sine"
        params = {{ freq = 220, amp = 0.001 }}
        [[schedule]]
        name = "open"
        from = "{clock(now - 3600)}"
        until = "{clock(now + 7200)}"
        do = [{{ op = "set", instance = "hall", node = "drone", params = {{ amp = 0.003 }} }}]
        """)
    config = load_config(path)
    log = tmp_path / "run.log"
    run = ScorchRun(path, None, log)
    try:
        run.wait_serving(config.state_path())
        service = RemoteService(socket_path(config.state_path()))
        # begun an hour before this start: in force right after boot
        wait_for(lambda: drone(service)[2] == pytest.approx(0.003), timeout=5.0)
        service.call("set", {"instance": "hall", "node": "drone", "params": {"amp": 0.0015}})
        assert drone(service)[2] == pytest.approx(0.0015)
        run.kill()  # a power cut: no autosave, no stop
        run = ScorchRun(path, None, log)
        run.wait_serving(config.state_path())
        service = RemoteService(socket_path(config.state_path()))
        wait_for(lambda: drone(service)[2] == pytest.approx(0.003), timeout=5.0)
        done = subprocess.run([str(SCORCH), "schedule", "--at", "now", "--json", "--config",
                               str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        holds = json.loads(done.stdout)["holds"]
        assert [(h["entry"], h["calls"][0]["args"]["params"]) for h in holds] == [
            ("open", {"amp": 0.003})]
        ahead = subprocess.run([str(SCORCH), "schedule", "--next", "3h", "--config",
                                str(path)], capture_output=True, text=True, timeout=60)
        assert (ahead.returncode, ahead.stdout) == (0, "coming:\n  nothing\n")  # no `after`
        day = subprocess.run([str(SCORCH), "schedule", "--next", "24h", "--config",
                              str(path)], capture_output=True, text=True, timeout=60)
        assert day.returncode == 0 and " open: set instance=\"hall\"" in day.stdout
        bad = subprocess.run([str(SCORCH), "schedule", "--next", "soon", "--config",
                              str(path)], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and "next" in bad.stderr
    finally:
        assert run.stop() == 0, run.tail()


def test_a_wrong_call_stops_scorch_run_with_its_line(tmp_path: Path) -> None:
    path = written(tmp_path, """
        [instances.hall]
        synthdefs = ["sine"]
        [[schedule]]
        when = "10:00"
        do = [
          { op = "scene", action = "recall", name = "evening" },
          { op = "set", instance = "hall", node = "drone", params = { amp = "loud" } },
        ]
        """)
    done = subprocess.run([str(SCORCH), "run", "--config", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert (f"{path}:15: schedule.0.do.1.params: set: invalid arguments: params.amp: Input "
            "should be a valid number, found 'loud'") in done.stderr, done.stderr
