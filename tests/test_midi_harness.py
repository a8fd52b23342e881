"""Real processes for the MIDI tests and benchmark: jackd, scsynth, test SynthDefs.

Every process is started in its own session and killed by process group; JACK
servers and UDP ports are private to the caller. Readiness is read from the
processes (``server ready``, ``jack_lsp`` answering, ``/synced``), never slept for.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scorch.console import Console
from scorch.netports import free_udp_port
from scorch.osc import OscMessage
from scorch.osc_client import OscTimeout
from scorch.process import DIE_WITH_PARENT
from scorch.scsynth import Scsynth as ScsynthProcess
from scorch.scsynth import ScsynthOptions

VOICE_DEF = "scorchtest_voice"
PARAM_DEF = "scorchtest_param"
_SCD = """
SynthDef(\\%(voice)s, { |out=0, freq=440, amp=0.1, gate=1|
  Out.ar(out, SinOsc.ar(freq) * amp * EnvGen.kr(Env.asr(0.001, 1, 0.005), gate, doneAction: 2))
}).writeDefFile("%(dir)s");
SynthDef(\\%(param)s, { |out=0, cutoff=1000, level=0.5, gain=0|
  Out.ar(out, LPF.ar(WhiteNoise.ar(level), cutoff) * gain)
}).writeDefFile("%(dir)s");
"SCORCH-DEFS-WRITTEN".postln;
0.exit;
"""

HAVE_TOOLS = all(shutil.which(b) for b in ("jackd", "scsynth", "sclang", "jack_lsp"))
# In CI a missing tool is a failed install, never a reason to skip.
needs_tools = pytest.mark.skipif(not HAVE_TOOLS and not os.environ.get("CI"),
                                 reason="jackd, scsynth or sclang missing")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)  # a SIGKILLed jackd leaves its entry in JACK's server registry
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(3)


def _read_until(proc: subprocess.Popen[bytes], marker: bytes, timeout: float) -> bytes:
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} did not print {marker!r}: {seen.decode()[-800:]}")
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            seen += os.read(proc.stdout.fileno(), 65536)
    return seen


def _jack_answers(name: str) -> bool:
    probe = subprocess.run(
        ["jack_lsp", "-s", name],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "JACK_NO_START_SERVER": "1"},
        timeout=5,
    )
    return probe.returncode == 0 and b"system:" in probe.stdout


def _start_jack(name: str, timeout: float) -> subprocess.Popen[bytes] | None:
    proc = subprocess.Popen(
        ["jackd", "-n", name, "-r", "-d", "dummy", "-r", "48000", "-p", "64"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True, preexec_fn=DIE_WITH_PARENT,
    )
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        # Polling with a deadline: jackd prints nothing reliable when it is ready.
        if _jack_answers(name):
            return proc
        time.sleep(0.05)
    _kill(proc)
    return None


@contextmanager
def jack_server(base: str, slots: int = 4) -> Iterator[str]:
    """Run a private dummy-driver jackd named ``base-N`` until the block ends.

    The names come from a small fixed set, not from the pid: JACK keeps a
    registry of at most 8 servers per user and reclaims the entry of a dead
    server only for the same name, so a per-pid name leaked by a killed run
    would fill it up for every test on the machine. A name some live server
    (another test run) holds is skipped.
    """
    for slot in range(slots):
        name = f"{base}-{slot}"
        if _jack_answers(name):
            continue
        proc = _start_jack(name, timeout=4.0)
        if proc is not None:
            break
    else:
        raise RuntimeError(f"no jackd {base}-0..{slots - 1} could be started")
    try:
        yield name
    finally:
        _kill(proc)


def compile_test_synthdefs(directory: Path) -> Path:
    """Write the test SynthDefs' .scsyndef files into ``directory`` with headless sclang."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "make.scd"
    script.write_text(_SCD % {"voice": VOICE_DEF, "param": PARAM_DEF, "dir": directory})
    env = {**os.environ, "QTWEBENGINE_DISABLE_SANDBOX": "1", "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(
        ["sclang", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True, preexec_fn=DIE_WITH_PARENT,
        cwd=directory,
    )
    try:
        _read_until(proc, b"SCORCH-DEFS-WRITTEN", 60)
        proc.wait(10)
    finally:
        _kill(proc)
    return directory


class Scsynth:
    """A private scsynth on a free UDP port (scorch's own launcher), with query helpers."""

    def __init__(self, jack: str, defs: Path, name: str) -> None:
        self.port = free_udp_port()
        self.address = ("127.0.0.1", self.port)
        options = ScsynthOptions(name=name, port=self.port, jack_server=jack)
        self._server = ScsynthProcess.start(options, Console(), lambda proc, code: None, 10.0)
        self.osc = self._server.osc
        try:
            self.call("/d_loadDir", str(defs), reply="/done")
            self.sync()
        except BaseException:
            self.close()
            raise

    def call(self, address: str, *args: object, reply: str | None = None,
             timeout: float = 3.0) -> OscMessage | None:
        """Send a message; with ``reply``, wait for the first message at that address."""
        if reply is None:
            self.osc.send(address, *args)  # type: ignore[arg-type]
            return None
        try:
            return self.osc.request(address, *args, reply=reply,  # type: ignore[arg-type]
                                    timeout=timeout)
        except OscTimeout as err:
            raise TimeoutError(f"scsynth sent no {reply} for {address}") from err

    def sync(self) -> None:
        """Wait until scsynth has handled everything sent before."""
        self.osc.sync()

    def param(self, node_id: int, name: str) -> float:
        """Return a node's control value (/s_get)."""
        message = self.call("/s_get", node_id, name, reply="/n_set")
        assert message is not None
        return float(message.args[2])  # type: ignore[arg-type]

    def group(self, group: int = 1) -> list[tuple[int, str]]:
        """Return (node id, SynthDef name) of the synths directly in ``group``."""
        message = self.call("/g_queryTree", group, 0, reply="/g_queryTree.reply")
        assert message is not None
        args = list(message.args)[3:]
        nodes = []
        while args:
            node_id, children = args[0], args[1]
            if children == -1:
                nodes.append((int(node_id), str(args[2])))  # type: ignore[arg-type]
                args = args[3:]
            else:
                args = args[2:]
        return nodes

    def synths(self) -> int:
        """Return how many synths are running (/status)."""
        return self.osc.status().synths

    def alive(self) -> bool:
        """True while the scsynth process runs."""
        return self._server.process.alive()

    def close(self) -> None:
        """Quit scsynth (and remove what it leaves behind)."""
        self._server.stop()


def wait_for(predicate, timeout: float = 5.0, interval: float = 0.01):  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until it returns something truthy or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s: {predicate}")
        time.sleep(interval)


@pytest.mark.integration
@needs_tools
def test_harness_starts_and_stops_jack_and_scsynth():
    with tempfile.TemporaryDirectory() as tmp:
        defs = compile_test_synthdefs(Path(tmp) / "defs")
        assert (defs / f"{VOICE_DEF}.scsyndef").exists()
        with jack_server("scorch-test-harness") as jack:
            server = Scsynth(jack, defs, "harness")
            try:
                server.call("/s_new", PARAM_DEF, 1000, 0, 1, "cutoff", 500.0)
                assert server.param(1000, "cutoff") == 500.0
                assert server.synths() == 1
            finally:
                server.close()
            assert not server.alive()
