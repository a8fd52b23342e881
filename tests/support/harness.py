"""Real processes and configs shared by tests and benchmarks: jackd, scsynth, SynthDefs.

Each is started the way scorch starts its own: jackd from ``actors.jack``'s
command line, scsynth by ``scorch.primitives.scsynth.server``, both as a ``ManagedProcess`` (own
process group, dies with its parent, stopped SIGTERM then SIGKILL), and the
SynthDefs compiled by ``SynthDefLibrary``'s headless sclang. Readiness is read
from the processes (jack_wait, ``server ready``, ``/synced``), never slept for.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from actors.jack import jackd_options
from scorch.config.installation import Config
from scorch.errors import OscTimeout
from scorch.primitives.osc import OscMessage, encode_message
from scorch.primitives.scsynth.server import Scsynth as ScsynthProcess
from scorch.primitives.scsynth.server import ScsynthOptions
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.console import Console
from scorch.primitives.system.jackd import ServerClaim, wait_for_server
from scorch.primitives.system.process import ManagedProcess
from scorch.primitives.system.udp_ports import free_udp_port
from tests.support.skips import needs

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra

T = TypeVar("T")

#: One room with a named node and no MIDI: what most fault tests play with.
ONE_ROOM = """
[midi]
enabled = false
[instances.room]
synthdefs = ["sine"]
[instances.room.nodes.hum]
synthdef = "sine"
params = { freq = 220, amp = 0.001 }
"""

VOICE_DEF = "scorchtest_voice"
PARAM_DEF = "scorchtest_param"
MPE_DEF = "scorchtest_mpe"
_SOURCES = {
    VOICE_DEF: """SynthDef(\\%s, { |out=0, freq=440, amp=0.1, gate=1|
  Out.ar(out, SinOsc.ar(freq) * amp * EnvGen.kr(Env.asr(0.001, 1, 0.005), gate, doneAction: 2))
}, metadata: (
  description: "Test voice: a sine with a gate", category: \\lead,
  specs: (freq: ControlSpec(20, 20000, \\exp, 0, 440, "Hz"), amp: ControlSpec(0, 1, \\amp, 0, 0.1),
          gate: ControlSpec(0, 1, \\lin, 1, 1)),
  descriptions: (freq: "Pitch", amp: "Level", gate: "Held while 1")
))
""",
    MPE_DEF: """SynthDef(\\%s, { |out=0, freq=440, amp=0.1, gate=1, pressure=0, timbre=0.5|
  Out.ar(out, LPF.ar(Saw.ar(freq), 200 + (timbre * 8000)) * amp * (0.2 + pressure)
    * EnvGen.kr(Env.asr(0.001, 1, 0.005), gate, doneAction: 2))
}, metadata: (
  description: "Test MPE voice: pressure and timbre per note", category: \\lead,
  specs: (freq: ControlSpec(20, 20000, \\exp, 0, 440, "Hz"), amp: ControlSpec(0, 1, \\amp, 0, 0.1),
          gate: ControlSpec(0, 1, \\lin, 1, 1), pressure: ControlSpec(0, 1, \\lin, 0, 0),
          timbre: ControlSpec(0, 1, \\lin, 0, 0.5)),
  descriptions: (freq: "Pitch", amp: "Level", gate: "Held while 1", pressure: "Key pressure",
                 timbre: "Brightness (CC 74)")
))
""",
    PARAM_DEF: """SynthDef(\\%s, { |out=0, cutoff=1000, level=0.5, gain=0|
  Out.ar(out, LPF.ar(WhiteNoise.ar(level), cutoff) * gain)
}, metadata: (
  description: "Test node: filtered noise with params to set", category: \\pad,
  specs: (cutoff: ControlSpec(0, 20000, \\lin, 0, 1000, "Hz"),
          level: ControlSpec(0, 1, \\lin, 0, 0.5), gain: ControlSpec(0, 1, \\lin, 0, 0)),
  descriptions: (cutoff: "Filter cutoff", level: "Noise level", gain: "Output gain")
))
""",
}

HAVE_TOOLS = all(shutil.which(b) for b in ("jackd", "scsynth", "sclang", "jack_wait"))
needs_tools = needs(HAVE_TOOLS, "jackd, jack_wait, scsynth or sclang (make test installs "
                    "jackd2 and SuperCollider)")


def _running(server: str) -> bool:
    """True if some JACK server named ``server`` already accepts clients (one probe)."""
    return wait_for_server(server, 0.01, lambda: True)


@contextmanager
def jack_server(base: str, slots: int = 4, timeout: float = 10.0, realtime: bool = False,
                period: int | None = None) -> Iterator[str]:
    """Run a private dummy-driver jackd named ``base-N`` until the block ends.

    The names come from a small fixed set, not from the pid: JACK keeps a
    registry of at most 8 servers per user and reclaims the entry of a dead
    server only for the same name, so a per-pid name leaked by a killed run
    would fill it up for every test on the machine. A name another test run
    claimed (``ServerClaim``), or some live server holds, is skipped: it would
    answer for ours.
    """
    console = Console()
    tried = []
    for slot in range(slots):
        name = f"{base}-{slot}"
        # Claimed first, then probed: another run that probed the same free name at the
        # same moment would otherwise start its jackd too, and the one that lost the race
        # would take the winner's answer for its own (and lose it when the winner stops).
        claim = ServerClaim(name)
        if not claim.take():
            tried.append(f"{name}: claimed by another run")
            continue
        if _running(name):
            claim.release()
            tried.append(f"{name}: held by another server")
            continue
        config = Config.model_validate({"audio": {"driver": "dummy", "jack_server": name,
                                                  "realtime": realtime, "period": period},
                                        "instances": {"t": {}}})
        options = jackd_options(config)
        proc = ManagedProcess("jackd", options.argv(), console, env=options.env())
        proc.start()
        if wait_for_server(name, timeout, proc.alive):
            break
        # SIGTERM first and time to act on it: a SIGKILLed jackd keeps its registry entry.
        proc.stop(grace=5.0)
        claim.release()
        tail = " / ".join(line.text for line in console.tail(3, source="jackd"))
        tried.append(f"{name}: {proc.describe_exit()}: {tail}")
    else:
        raise RuntimeError(f"no jackd {base}-0..{slots - 1} could be started: {tried}")
    try:
        yield name
    finally:
        proc.stop(grace=5.0)
        claim.release()


@contextmanager
def jack_for_clients(base: str, realtime: bool = False,
                     period: int | None = None) -> Iterator[str]:
    """A private jackd (:func:`jack_server`) that this process's JACK clients open."""
    with pytest.MonkeyPatch.context() as mp, \
            jack_server(base, realtime=realtime, period=period) as name:
        mp.setenv("JACK_DEFAULT_SERVER", name)
        mp.setenv("JACK_NO_START_SERVER", "1")
        yield name


def compile_test_synthdefs(directory: Path) -> Path:
    """Write the test SynthDefs' .scsyndef files into ``directory``; return it.

    Compiled by scorch's own ``SynthDefLibrary`` (one headless sclang run, with a
    private cache inside ``directory``).
    """
    sources = directory / "scd"
    sources.mkdir(parents=True, exist_ok=True)
    for name, source in _SOURCES.items():
        (sources / f"{name}.scd").write_text(source % name)
    library = SynthDefLibrary(sources, cache_dir=directory / "cache")
    if library.errors:
        raise RuntimeError(f"test SynthDefs did not compile: {library.errors}")
    for name in _SOURCES:
        (directory / f"{name}.scsyndef").write_bytes(library.compiled(name))
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
            self.osc.send(encode_message(address, *args))  # type: ignore[arg-type]
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


def wait_for(predicate: Callable[..., T], timeout: float = 5.0, interval: float = 0.01) -> T:
    """Poll ``predicate`` until it returns something truthy or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s: {predicate}")
        time.sleep(interval)


def two_rooms(state_dir: Path, jack_server: str) -> str:
    """A config with instances alpha and beta in group rooms (ports picked free)."""
    return f"""
state_dir = "{state_dir}"
[audio]
driver = "dummy"
jack_server = "{jack_server}"
[docs]
build = "on-demand"
[instances.alpha]
group = "rooms"
synthdefs = ["sine"]
[instances.beta]
group = "rooms"
"""


def room_clock(orch: Orchestra, room: str) -> tuple[float, float]:
    """(bpm, beats) of the room's TempoClock.default, read in its sclang."""
    (result,) = orch.rooms.execute(
        room, "[TempoClock.default.tempo * 60, TempoClock.default.beats]")
    assert result.ok and result.value is not None, result
    bpm, beats = (float(x) for x in result.value.strip("[ ]").split(","))
    return bpm, beats
