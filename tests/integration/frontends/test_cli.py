"""The scorch command as a person uses it: run, stop with Ctrl-C, bad configs, doctor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scorch.api.models import RoomRow
from scorch.api.status_text import render
from scorch.config.installation import load_config
from scorch.machine.doctor import this_machine
from scorch.primitives.system.process import DIE_WITH_PARENT
from scorch.primitives.system.setup_fixes import fix
from tests.conftest import jack_name, pid_alive
from tests.support.processes import children, sclangs_started_before_jackd, terminate

SCORCH = [sys.executable, "-m", "scorch.cli.main"]


def write_config(tmp_path: Path, tag: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(f"""
        state_dir = "{tmp_path / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name(tag)}"
        [docs]
        build = "on-demand"
        [instances.lobby]
        group = "ground"
        synthdefs = ["sine"]
        [instances.lobby.nodes.drone]
        synthdef = "sine"
        params = {{ freq = 220, amp = 0.01 }}
        [instances.attic]
        """))
    return path


@pytest.mark.integration
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_run_boots_prints_the_table_and_stopping_leaves_no_process(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    config = write_config(tmp_path, f"cli-{stop_signal.name.lower()}")
    proc = subprocess.Popen([*SCORCH, "run", "--config", str(config)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=DIE_WITH_PARENT)
    try:
        assert proc.stdout is not None
        table = [proc.stdout.readline() for _ in range(4)]
        assert table[0].split()[:3] == ["room", "group", "state"], table
        rows = {line.split()[0]: line.split() for line in table[2:]}
        assert rows["lobby"][1:3] == ["ground", "READY"]
        assert rows["attic"][1:3] == ["-", "READY"]
        assert rows["lobby"][5] == "1"  # synths: the drone
        spawned = children(proc.pid)
        assert len(spawned) == 5, spawned  # jackd, 2 x (scsynth + sclang)
        # Each room took the sclang started as soon as the config was read.
        assert sclangs_started_before_jackd(proc.pid) == (2, 2)
        proc.send_signal(stop_signal)
        assert proc.wait(timeout=30) == 0
    finally:
        terminate(proc)  # a failed assertion: stopped as systemd would, its rooms freed
    stderr = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in stderr
    assert f"{stop_signal.name}: stopping" in stderr
    assert "stopped; none of its 5 processes is left" in stderr
    left = [pid for pid in spawned if pid_alive(pid)]
    assert not left, f"left running after {stop_signal.name}: {left}"


def test_bad_config_exits_2_naming_file_line_and_key_without_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[instances.lobby]\nprot = 57110\n")
    done = subprocess.run([*SCORCH, "run", "--config", str(config)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert f"{config}:2: instances.lobby.prot: unknown key; did you mean 'port'?" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run([*SCORCH, "run", "--config", str(tmp_path / "nope.toml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "nope.toml: no such config file" in done.stderr
    assert "Traceback" not in done.stderr


def test_doctor_checks_binaries_midi_and_ports(tmp_path: Path) -> None:
    done = subprocess.run([*SCORCH, "doctor", "--config", str(write_config(tmp_path, "doc"))],
                          capture_output=True, text=True, timeout=60)
    for name in ("system", "scsynth", "sclang", "jack", "midi"):
        assert f"] {name}: " in done.stdout
    if done.returncode != 0:
        assert "fix: " in done.stdout
    else:
        assert "[FAIL]" not in done.stdout


def test_doctor_names_the_jack_server_of_the_installation_it_checks(tmp_path: Path) -> None:
    """Without [audio] jack_server, the installation's own name, made from its state folder."""
    path = tmp_path / "config.toml"
    path.write_text(f'state_dir = "{tmp_path / "state"}"\n[audio]\ndriver = "dummy"\n'
                    "[instances.room]\n")
    own = load_config(path).jack_server()
    assert own.startswith("scorch-")
    done = subprocess.run([*SCORCH, "doctor", "--config", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert f"] audio: driver 'dummy': starts a headless jackd {own!r}" in done.stdout


def test_doctor_prints_the_install_command_for_a_missing_binary(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run([*SCORCH, "doctor"], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 1
    assert "[FAIL] scsynth: not found on PATH" in done.stdout
    assert f"fix: {fix('supercollider', this_machine().family)}\n" in done.stdout
    assert "[FAIL] jack: jackd and jack_wait not found on PATH" in done.stdout


def test_status_table_has_one_aligned_row_per_room() -> None:
    unused = {"since": 0.0, "uptime": None, "restart_budget_left": 0, "peak_cpu": None,
              "nodes": [], "reason": None}
    rows = [RoomRow.model_validate({**unused, **row}) for row in [
        {"name": "lobby", "group": "ground", "state": "READY", "port": 57110,
         "cpu": 3.25, "synths": 2, "restarts": 0},
        {"name": "attic", "group": None, "state": "FAILED", "reason": "5 restarts within 60 s",
         "port": None, "cpu": None, "synths": None, "restarts": 5},
    ]]
    lines = render(rows).splitlines()
    assert lines[0].split() == ["room", "group", "state", "port", "cpu", "%", "synths",
                                "restarts"]
    assert lines[2].split() == ["lobby", "ground", "READY", "57110", "3.2", "2", "0"]
    assert lines[3].startswith("attic")
    assert "FAILED (5 restarts within 60 s)" in lines[3]
    assert len({len(line) for line in lines[:2]}) == 1



@pytest.mark.integration
def test_operation_commands_reach_the_running_installation(tmp_path: Path) -> None:
    config = write_config(tmp_path, "cli-ops")
    argv = ["--config", str(config)]
    idle = subprocess.run([*SCORCH, "list", *argv], capture_output=True, text=True, timeout=60)
    assert idle.returncode == 3 and "no `scorch run` answers" in idle.stderr
    proc = subprocess.Popen([*SCORCH, "run", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, preexec_fn=DIE_WITH_PARENT)
    try:
        assert proc.stdout is not None
        assert "READY" in "".join(proc.stdout.readline() for _ in range(4))

        def scorch(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*SCORCH, *args, *argv], capture_output=True, text=True,
                                  timeout=timeout)

        listed = scorch("list")
        assert listed.returncode == 0 and "lobby" in listed.stdout and "READY" in listed.stdout
        done = scorch("exec", "lobby", '"from the shell".postln; 6 * 7')
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["from the shell", "-> 42"]
        failed = scorch("exec", "lobby", "(\n1 + ) 2\n)")
        assert failed.returncode == 1
        assert "parse error" in failed.stderr and "(line 2, char" in failed.stderr
        unknown = scorch("status", "nobody")
        assert unknown.returncode == 1 and "known rooms: lobby, attic" in unknown.stderr
        bad = scorch("exec", "lobby", "1", "--timeout-s", "soon")
        assert bad.returncode == 2 and "timeout_s" in bad.stderr
        unknown = scorch("status", "nobody", "--json")  # for a program: code and argument
        assert unknown.returncode == 1 and "known rooms" in unknown.stderr
        assert json.loads(unknown.stdout)["error"] == {
            "code": "NOT_FOUND", "retryable": False, "argument": "instance",
            "message": unknown.stderr.strip().removeprefix("scorch status: ")}
        played = scorch("play", "attic", "sine", "--params", '{"amp": 0.01}', "--node", "hum",
                        "--json")
        assert played.returncode == 0 and '"node": "hum"' in played.stdout
        assert '"hum"' in scorch("status", "attic", "--json").stdout
        # The first call builds the index (niced: slow on a busy machine), then answers.
        docs = scorch("docs", "SinOsc", "--timeout-s", "110", timeout=180)
        assert docs.returncode == 0, docs.stderr
        assert "SinOsc.ar(freq: 440, phase: 0, mul: 1, add: 0)" in docs.stdout
        found = scorch("history", "from the shell")
        assert found.returncode == 0 and "\"from the shell\".postln; 6 * 7" in found.stdout
        assert "lobby" in found.stdout and "-> 42" in found.stdout
        tempo = scorch("tempo", "96", "--json")
        assert tempo.returncode == 0 and '"bpm": 96.0' in tempo.stdout, tempo.stderr
        assert '"bpm": 96.0' in scorch("tempo", "--json").stdout
        panic = scorch("midi", "panic", "--json")
        assert panic.returncode == 0 and '"panic": true' in panic.stdout, panic.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
