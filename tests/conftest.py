"""Shared fixtures: real orchestras on their own JACK server names and ports.

Every process a test starts is stopped by the fixture that started it, and the
fixture checks that none of their pids is left.
"""

from __future__ import annotations

import contextlib
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.errors import OscFailure
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.scsynth.door import ScsynthDoor
from scorch.primitives.scsynth.server import SHARED_MEMORY, ScsynthOptions
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.process import pid_alive
from tests.support.shm.watcher import SegmentWatcher

# The skip rule's hooks (tests/support/skips.py): a needed tool missing fails on CI.
from tests.support.skips import pytest_configure, pytest_runtest_setup  # noqa: F401

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


def node_exists(osc: OscClient | ScsynthDoor, node_id: int) -> bool:
    """Ask scsynth whether synth ``node_id`` runs (``/s_get`` answers the sender)."""
    try:
        osc.request("/s_get", node_id, 0, reply="/n_set", timeout=1.0,
                    match=lambda m: m.args[0] == node_id)
    except OscFailure:
        return False
    return True


def node_param(osc: OscClient | ScsynthDoor, node_id: int, param: str) -> float:
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


#: What the /dev/shm watcher waited for at the end, said in the summary (past the capture).
WAITED_FOR = pytest.StashKey[str]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    """Name the processes the tests left running, which the watcher waited for."""
    if WAITED_FOR in config.stash:
        terminalreporter.write_line(config.stash[WAITED_FOR])


@pytest.fixture(scope="session", autouse=True)
def no_segment_left_by_the_suite(pytestconfig: pytest.Config) -> Iterator[None]:
    """After the whole session, /dev/shm holds no segment the suite made and left.

    A watcher looks every 1.5 s at the scsynth and JACK segments made during the
    session and at who maps them; one of the suite's that no process maps for
    10 s is a leak, named with the test that ran when it began, even if a later
    sweep removes it. The ports of this process's scsynths are told it as they
    start (one that fails within milliseconds is never seen running). Segments of
    other programs, and those there before the session, never count.
    """
    argv = ScsynthOptions.argv
    watcher = SegmentWatcher()

    def seen(options: ScsynthOptions) -> list[str]:
        watcher.add_port(options.port)
        return argv(options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScsynthOptions, "argv", seen)
        yield
    leaks = watcher.finish()
    if watcher.note:
        pytestconfig.stash[WAITED_FOR] = watcher.note
    assert not watcher.failure, f"the /dev/shm watcher failed: {watcher.failure}"
    assert not leaks, "/dev/shm kept segments of the suite:\n" + "\n".join(
        leak.describe() for leak in leaks)


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
