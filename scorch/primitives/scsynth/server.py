"""One running scsynth: its command line, readiness read from the process, and clean-up.

Ready means scsynth printed ``server ready`` and then answered ``/status``;
never a sleep.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from scorch.errors import BootError, BootTimeout, OscFailure, OscTimeout, PortInUse
from scorch.primitives.scsynth import commands, placement
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.system import (
    Console,
    ExitCallback,
    ManagedProcess,
    jack_env,
    stopped,
    udp_port_holder,
)

READY = r"SuperCollider 3 server ready"
#: scorch's own client id for node notifications: the last of scsynth's 4 logins
#: (``-l 4``), so sclang keeps id 0 and its node ids across restarts.
SCORCH_CLIENT = 3
FATAL = r"failed to open UDP socket|could not initialize audio|\[scorch\] scsynth exited"
#: Where a room's outputs go when its config names no ports: scsynth takes a value
#: without a colon as a pattern and connects its outputs, in order, to the input
#: ports whose names contain it; "playback_" is the hardware outputs of jackd
#: (system:playback_1...) and of PipeWire's JACK (DEVICE:playback_FL...).
DEFAULT_OUTPUTS = "playback_"
SHARED_MEMORY = Path("/dev/shm")


@dataclass(frozen=True)
class ScsynthOptions:
    """What one scsynth is started with."""

    name: str
    """The room's name: the JACK client is ``scorch-NAME``."""
    port: int
    jack_server: str
    inputs: int = 0
    outputs: int = 2
    connect: tuple[str, ...] = ()
    """JACK playback ports for the outputs, in order."""
    binary: str = "scsynth"
    memory_kb: int = 65536
    extra_env: dict[str, str] = field(default_factory=dict)
    bind: str = "127.0.0.1"
    """The address scsynth listens on: loopback, unless MIDI on other hosts plays it."""

    def argv(self) -> list[str]:
        """The command line: UDP on ``bind`` (loopback by default), no synthdefs dir."""
        return [
            self.binary, "-u", str(self.port), "-B", self.bind, "-R", "0", "-D", "0",
            "-l", "4", "-i", str(self.inputs), "-o", str(self.outputs),
            "-m", str(self.memory_kb), "-H", f"scorch-{self.name}",
        ]

    def client_host(self) -> str:
        """Where this machine's own clients reach it: loopback, unless bound to one address."""
        return local_address(self.bind)

    def env(self) -> dict[str, str]:
        """JACK server, no autostarted server, and where the outputs connect.

        Without ``connect`` the outputs go to the hardware outputs (scsynth alone
        connects nothing), unless this process's own ``SC_JACK_DEFAULT_OUTPUTS``
        says otherwise.
        """
        env = {**jack_env(self.jack_server), **self.extra_env}
        if self.connect:
            env["SC_JACK_DEFAULT_OUTPUTS"] = ",".join(self.connect)
        elif "SC_JACK_DEFAULT_OUTPUTS" not in os.environ:
            env["SC_JACK_DEFAULT_OUTPUTS"] = DEFAULT_OUTPUTS
        return env


def local_address(bind: str) -> str:
    """The address a client on this machine uses for a server bound to ``bind``."""
    wildcard_or_loopback = bind in ("0.0.0.0", "::") or bind.startswith("127.") or bind == "::1"
    return "127.0.0.1" if wildcard_or_loopback else bind


def port_in_use(name: str, port: int) -> PortInUse:
    """The error for a busy port: who holds it, and the config key to change."""
    holder = udp_port_holder(port)
    by = f" by {holder}" if holder else " by another program"
    return PortInUse(f"room {name!r}: UDP port {port} is already in use{by}; stop it, "
                     f"or choose another `port` in [instances.{name}]")


class Scsynth:
    """A started scsynth that answered ``/status``, with its OSC client and default group."""

    def __init__(self, process: ManagedProcess, osc: OscClient, port: int,
                 host: str = "127.0.0.1") -> None:
        self.process = process
        self.osc = osc
        self.port = port
        self.host = host
        """Where clients on this machine reach it."""

    @property
    def pid(self) -> int | None:
        """The process id."""
        return self.process.pid

    def trouble(self) -> str | None:
        """Why this scsynth cannot be attached to now (exited, stopped), or None."""
        if not self.process.alive():
            return f"scsynth {self.process.describe_exit()}"
        if stopped(self.pid):
            return "scsynth is stopped (SIGSTOP)"
        return None

    @classmethod
    def start(cls, options: ScsynthOptions, console: Console, on_exit: ExitCallback,
              timeout: float, stage: placement.Stage | None = None) -> Scsynth:
        """Start scsynth and wait until it is ready; raise BootError (or a subclass) if not.

        Before it is ready, it gets its layout (:func:`placement.boot`): the safety ``stage``
        first, when there is one, then the groups the room plays in.
        """
        mark = console.mark()
        clients: list[OscClient] = []

        def exited(proc: ManagedProcess, code: int) -> None:
            for osc in clients:  # whoever waits for a reply learns at once that none will come
                osc.abandon(f"scsynth {proc.describe_exit()}")
            on_exit(proc, code)

        proc = ManagedProcess("scsynth", options.argv(), console, env=options.env(),
                              on_exit=exited)
        sweep_stale_segments()
        before = segment_identity(options.port)
        proc.start()
        line = console.wait_for(f"{READY}|{FATAL}", timeout, since=mark, source="scsynth")
        if line is None or "server ready" not in line.text:
            proc.stop(grace=0.5)
            detail = "\n".join(x.text for x in console.since(mark, source="scsynth")[-8:])
            if line is not None and "address in use" in line.text:
                # The port's holder may be a scsynth with its segment: only ours goes.
                remove_shared_memory(options.port, unless=before)
                raise port_in_use(options.name, options.port)
            remove_shared_memory(options.port)
            if line is None:
                raise BootTimeout(f"room {options.name!r}: scsynth did not say it was "
                                  f"ready within {timeout:g} s:\n{detail}")
            raise BootError(f"room {options.name!r}: scsynth could not start:\n{detail}")
        osc = OscClient(options.port, host=options.client_host(),
                        name=f"{options.name}-scsynth")
        clients.append(osc)
        if not proc.alive():
            osc.abandon(f"scsynth {proc.describe_exit()}")
        asked = "answer /status"
        try:
            osc.status(timeout=2.0)
            asked = "take node notifications"
            osc.notify(SCORCH_CLIENT)
            asked = "take its layout (the safety stage, the room's groups)"
            for packet in placement.boot(stage):
                osc.send(packet)
                osc.sync(timeout=2.0)
        except (OscTimeout, OscFailure) as err:
            osc.close()
            proc.stop(grace=0.5)
            remove_shared_memory(options.port)
            raise BootTimeout(f"room {options.name!r}: scsynth printed ready but did not "
                              f"{asked}: {err}") from err
        return cls(proc, osc, options.port, options.client_host())

    def stop(self, graceful: bool = True) -> None:
        """``/quit``, then SIGTERM, then SIGKILL; remove what a killed scsynth leaves behind.

        Not ``graceful``: SIGKILL at once, so scsynth ends no node on its way out and
        its clients keep their nodes registered for the restore that follows.
        """
        if graceful:
            self.process.stop(polite=lambda: self.osc.send(commands.quit_server()), grace=1.0)
        else:
            self.process.stopping = True
            self.process.signal_group(signal.SIGKILL)
            self.process.stop(grace=1.0)
        self.osc.close()
        remove_shared_memory(self.port)


def segment_identity(port: int) -> tuple[int, int] | None:
    """Which file the shared-memory segment of ``port`` is now (device, inode), or None."""
    try:
        found = (SHARED_MEMORY / f"SuperColliderServer_{port}").stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


def remove_shared_memory(port: int, unless: tuple[int, int] | None = None) -> None:
    """Remove the 8 MB shared-memory segment a scsynth on ``port`` left behind.

    It is named after the port. ``unless``: the segment that was there before
    this scsynth started (another program's scsynth holds the port), left alone
    if it is still the same file; one that scsynth made in its place goes.
    """
    if unless is not None and segment_identity(port) == unless:
        return
    (SHARED_MEMORY / f"SuperColliderServer_{port}").unlink(missing_ok=True)


#: A segment younger than this may belong to a scsynth that has not bound its port yet
#: (scsynth makes its segment first); a running scsynth holds its port from then on.
STALE_AFTER = 10.0


def sweep_stale_segments(min_age: float = STALE_AFTER) -> list[int]:
    """Remove this user's scsynth segments that no live process's port holds; return
    their ports. A scsynth killed with its whole process tree (scorch itself SIGKILLed,
    its children ended by PDEATHSIG) leaves 8 MB behind that no one else would free."""
    candidates: dict[int, Path] = {}
    now, uid = time.time(), os.getuid()
    for path in SHARED_MEMORY.glob("SuperColliderServer_*"):
        try:
            port, info = int(path.name.rpartition("_")[2]), path.stat()
        except (ValueError, OSError):
            continue
        if info.st_uid == uid and now - info.st_mtime >= min_age:
            candidates[port] = path
    if not candidates:
        return []
    try:
        held = {conn.laddr.port for conn in psutil.net_connections(kind="inet") if conn.laddr}
    except (psutil.Error, OSError):
        return []  # not knowing which ports are held, leave every segment alone
    swept = sorted(port for port in candidates if port not in held)
    for port in swept:
        candidates[port].unlink(missing_ok=True)
    return swept
