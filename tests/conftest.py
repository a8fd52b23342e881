"""Shared fixtures: real orchestras on their own JACK server names and ports.

Every process a test starts is stopped by the fixture that started it, and the
fixture checks that none of their pids is left.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import textwrap
import threading
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


@contextlib.contextmanager
def module_orchestra(folder: Path, tag: str, body: str,
                     library: SynthDefLibrary | None = None) -> Iterator[Orchestra]:
    """One started orchestra for a whole test module (module-scoped fixtures use it).

    ``body``: the config's tables after ``state_dir``, ``[audio]`` (dummy driver, the
    tag's own JACK server) and ``[docs]`` (on demand); every room must boot.
    """
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack_name(tag)}"\n[docs]\nbuild = "on-demand"\n'
            + textwrap.dedent(body))
    orch = Orchestra(parse_config(text, folder / "config.toml"), library or SynthDefLibrary())
    try:
        failed = {name: error for name, error in orch.start().items() if error}
        assert not failed, failed
        yield orch
    finally:
        orch.stop()


def orchestra_ports(orch: Orchestra) -> set[int]:
    """Every port an orchestra's scsynths were READY on (from the READY events)."""
    return {int(e.details["port"]) for view in orch.views.values()
            for e in view.events.since() if e.details.get("port")}


def orphan_segments(ports: set[int]) -> list[str]:
    """scsynth shared-memory segments of ``ports`` that no process holds: a dead one's."""
    held = {conn.laddr.port for conn in psutil.net_connections(kind="udp") if conn.laddr}
    return sorted(f"SuperColliderServer_{port}" for port in ports - held
                  if (SHARED_MEMORY / f"SuperColliderServer_{port}").exists())


def scsynth_port(argv: list[str]) -> int | None:
    """The UDP port of a scsynth command line (``-u PORT``), or None."""
    for flag, value in itertools.pairwise(argv):
        if flag == "-u" and value.isdigit():
            return int(value)
    return None


class DescendantScsynths:
    """The ports of every scsynth the suite's own subprocesses start, looked for every 0.2 s.

    ``scorch run`` and ``scorch mcp`` subprocesses start their scsynths where this process
    never sees their options; another program's scsynth on the same machine is not ours
    and is never counted.
    """

    def __init__(self) -> None:
        self.ports: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scsynth-ports", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(0.2):
            try:
                children = me.children(recursive=True)
            except (psutil.Error, OSError):  # OSError: out of descriptors (a test's EMFILE)
                continue
            for child in children:
                try:
                    if child.name() == "scsynth":
                        port = scsynth_port(child.cmdline())
                        if port is not None:
                            self.ports.add(port)
                except (psutil.Error, OSError):
                    continue

    def stop(self) -> set[int]:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.ports


def left_segments(ports: set[int], *, grace: float = 5.0) -> list[str]:
    """Segments of ``ports`` that no process holds, after ``grace`` s for dying processes."""
    deadline = time.monotonic() + grace
    while True:
        left = orphan_segments(ports)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.25)


@pytest.fixture(scope="session", autouse=True)
def no_segment_left_by_the_suite() -> Iterator[None]:
    """After the whole session, /dev/shm holds no segment of a scsynth the suite started.

    Every scsynth this process starts is seen (its options' command line), and so is
    every scsynth of the suite's subprocesses; one that failed, crashed or was killed
    must not leave its 8 MB in /dev/shm.
    """
    ports: set[int] = set()
    argv = ScsynthOptions.argv
    descendants = DescendantScsynths()

    def seen(options: ScsynthOptions) -> list[str]:
        ports.add(options.port)
        return argv(options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScsynthOptions, "argv", seen)
        yield
    left = left_segments(ports | descendants.stop())
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
