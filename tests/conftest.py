"""Shared fixtures: real orchestras on their own JACK server names and ports.

Every process a test starts is stopped by the fixture that started it, and the
fixture checks that none of their pids is left.
"""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.errors import OscFailure
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.scsynth.server import SHARED_MEMORY, ScsynthOptions
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.process import pid_alive

#: The start of every test JACK server's name. Two test runs on one machine at once
#: (two checkouts) give different prefixes, so their servers never meet.
JACK_PREFIX = os.environ.get("SCORCH_TEST_JACK", "scorch-test")


def jack_name(tag: str) -> str:
    """A JACK server name for one fixture: fixed, not per process.

    JACK keeps a killed server's slot (8 per user) until a server of the same
    name starts again, so names reused run after run can never fill them up.
    """
    return f"{JACK_PREFIX}-{tag}"


def orchestra_pids(orch: Orchestra) -> list[int]:
    """Every process id the orchestra runs now (jackd, scsynth, sclang)."""
    return [pid for pid in orch.rooms.pids().values() if pid]


def node_exists(osc: OscClient, node_id: int) -> bool:
    """Ask scsynth whether synth ``node_id`` runs (``/s_get`` answers the sender)."""
    try:
        osc.request("/s_get", node_id, 0, reply="/n_set", timeout=1.0,
                    match=lambda m: m.args[0] == node_id)
    except OscFailure:
        return False
    return True


def node_param(osc: OscClient, node_id: int, param: str) -> float:
    """Read one control's value from scsynth itself."""
    reply = osc.request("/s_get", node_id, param, reply="/n_set", timeout=1.0,
                        match=lambda m: m.args[0] == node_id)
    return float(reply.args[2])  # type: ignore[arg-type]


def scsynth_param(port: int, node_id: int, param: str) -> float:
    """Read one control's value from the scsynth at ``port`` (any process's)."""
    osc = OscClient(port)
    try:
        return node_param(osc, node_id, param)
    finally:
        osc.close()


@pytest.fixture(scope="session")
def library() -> SynthDefLibrary:
    """The repo's SynthDef library, compiled once per session."""
    return SynthDefLibrary()


MakeConfig = Callable[..., Config]


@pytest.fixture
def make_config(tmp_path: Path) -> MakeConfig:
    """Build a Config from TOML for the instances, with its own JACK server and state dir."""

    def make(instances: str, *, watchdog: str = "", extra: str = "", tag: str = "t") -> Config:
        # [docs] on-demand: a test that wants the docs index asks for it; the others do not
        # pay for a build in every fresh state directory.
        text = textwrap.dedent(f"""
            state_dir = "{tmp_path / 'state'}"
            [audio]
            driver = "dummy"
            jack_server = "{jack_name(tag)}"
            [docs]
            build = "on-demand"
            """) + textwrap.dedent(instances) + textwrap.dedent(watchdog) + textwrap.dedent(extra)
        path = tmp_path / "config.toml"
        path.write_text(text)
        return parse_config(text, path)

    return make


def orchestra_ports(orch: Orchestra) -> set[int]:
    """Every port an orchestra's scsynths were READY on (from the READY events)."""
    return {int(e.details["port"]) for view in orch.views.values()
            for e in view.events.since() if e.details.get("port")}


def orphan_segments(ports: set[int]) -> list[str]:
    """scsynth shared-memory segments of ``ports`` that no process holds: a dead one's."""
    held = {conn.laddr.port for conn in psutil.net_connections(kind="udp") if conn.laddr}
    return sorted(f"SuperColliderServer_{port}" for port in ports - held
                  if (SHARED_MEMORY / f"SuperColliderServer_{port}").exists())


def segment_ports() -> set[int]:
    """The ports of every scsynth shared-memory segment in /dev/shm now."""
    return {int(path.name.rsplit("_", 1)[1]) for path in SHARED_MEMORY.glob("SuperColliderServer_*")
            if path.name.rsplit("_", 1)[1].isdigit()}


def left_segments(before: set[int], ports: set[int], *, grace: float = 5.0) -> list[str]:
    """Segments the session made that no process holds, after ``grace`` s for dying processes.

    Two sources: the ports of every scsynth this process started, and every segment that
    appeared during the session (scsynths of the ``scorch run`` and ``scorch mcp``
    subprocesses the tests start, which this process never sees).
    """
    deadline = time.monotonic() + grace
    while True:
        left = orphan_segments(ports | (segment_ports() - before))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.25)


@pytest.fixture(scope="session", autouse=True)
def no_segment_left_by_the_suite() -> Iterator[None]:
    """After the whole session, /dev/shm holds no scsynth segment the suite left behind.

    Every scsynth this process starts is seen (its options' command line), and every
    segment that appears while the suite runs is checked too; one whose scsynth failed,
    crashed or was killed must not leave its 8 MB in /dev/shm.
    """
    before = segment_ports()
    ports: set[int] = set()
    argv = ScsynthOptions.argv

    def seen(options: ScsynthOptions) -> list[str]:
        ports.add(options.port)
        return argv(options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScsynthOptions, "argv", seen)
        yield
    left = left_segments(before, ports)
    assert not left, f"/dev/shm keeps segments of the suite's scsynths: {left}"


@pytest.fixture
def start_orchestra(library: SynthDefLibrary) -> Iterator[Callable[[Config], Orchestra]]:
    """Start orchestras; stop them after the test and assert no process, no segment is left."""
    started: list[Orchestra] = []
    seen: set[int] = set()

    def start(config: Config) -> Orchestra:
        orch = Orchestra(config, library)
        started.append(orch)
        orch.start()
        seen.update(orchestra_pids(orch))
        return orch

    yield start
    for orch in started:
        seen.update(orchestra_pids(orch))
        orch.stop()
    left = [pid for pid in seen if pid_alive(pid)]
    assert not left, f"processes left after stop: {left}"
    ports = {port for orch in started for port in orchestra_ports(orch)}
    assert not orphan_segments(ports), "shared memory left by a dead scsynth"
