"""The bare floor of a boot: N scsynth and N sclang started at once, as a person would.

No scorch: each room is an ``scsynth`` and an ``sclang`` spawned in parallel on
the same JACK server; the sclang attaches ``Server.remote`` to its scsynth (the
alive thread polling fast, as scorch's attach does) and posts a marker once the
server confirmed its login (``serverRunning``). The floor is the wall time from
the first spawn to the last marker. :func:`shared_jackd` is the JACK server both
the floor and ``scorch run`` (driver ``jack``) use in one benchmark run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from scorch.primitives.sclang.launch import SCLANG_ENV
from scorch.primitives.system.jackd import JackdOptions, jack_env, wait_for_server
from scorch.primitives.system.process import DIE_WITH_PARENT, child_env, spawn
from scorch.primitives.system.udp_ports import free_udp_port

MARKER = b"@@floor-attached"
WELCOME = b"*** Welcome to SuperCollider"
#: What sclang posts when its login was confirmed only by a second /notify.
RELOGIN = b"login after a loss of network contact"


@contextlib.contextmanager
def shared_jackd(server: str) -> Iterator[str]:
    """A headless jackd named ``server`` for the whole run; stopped with SIGTERM after."""
    options = JackdOptions(server=server, port_max=1024)
    # Its output to nowhere: a pipe nobody reads fills with "Process error" lines under
    # load, and a jackd blocked on writing its log stops every client's audio thread
    # (each scsynth then answers nothing).
    proc = subprocess.Popen(options.argv(), env=child_env(options.env()),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=DIE_WITH_PARENT)
    try:
        if not wait_for_server(server, 10.0, lambda: proc.poll() is None):
            raise RuntimeError(f"jackd {server!r} did not start")
        yield server
    finally:
        proc.terminate()  # SIGTERM: a SIGKILLed jackd keeps its name registered
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def attach_code(name: str, port: int) -> bytes:
    """What the bare sclang runs: attach ``s`` to the scsynth at ``port``, post the marker."""
    return (f'Server.default = s = Server.remote(\\{name}, NetAddr("127.0.0.1", {port})); '
            "s.aliveThreadPeriod = 0.02; "
            "fork { while { s.serverRunning.not } { 0.005.wait }; "
            f'"{MARKER.decode()}".postln }};'
            "\x1b").encode()


@dataclass
class FloorRun:
    """One boot of the bare floor."""

    seconds: float
    relogins: int
    """sclangs whose first login reply was lost or late (they logged in again)."""


class _Watched:
    """A process whose output is read in a thread until a pattern appears.

    ``code`` goes to its stdin once it posted its welcome: code read earlier runs
    before sclang's startup, which clears the clocks (a routine would never run).
    """

    def __init__(self, proc: subprocess.Popen[bytes], pattern: bytes,
                 code: bytes | None = None) -> None:
        self.proc, self.pattern, self.code = proc, pattern, code
        self.seen = threading.Event()
        self.output = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.output += line
            if self.code is not None and WELCOME in line:
                assert self.proc.stdin is not None
                self.proc.stdin.write(self.code)
                self.proc.stdin.flush()
            if self.pattern in line:
                self.seen.set()


def floor_once(rooms: int, jack: str, timeout: float = 60.0) -> FloorRun:
    """Spawn ``rooms`` scsynth + sclang pairs at once; time them to every sclang attached."""
    env = {**jack_env(jack)}
    procs: list[_Watched] = []
    sclangs: list[_Watched] = []
    started = time.monotonic()
    try:
        for i in range(rooms):
            port, lang = free_udp_port(), free_udp_port()
            scsynth = spawn(["scsynth", "-u", str(port), "-B", "127.0.0.1", "-R", "0", "-l", "4",
                             "-i", "0", "-o", "2", "-H", f"floor{i}"], env=env)
            procs.append(_Watched(scsynth, b"server ready"))
            sclang = spawn(["sclang", "-i", "scorchfloor", "-u", str(lang)],
                           env={**SCLANG_ENV, **env}, stdin=True)
            watched = _Watched(sclang, MARKER, attach_code(f"floor{i}", port))
            procs.append(watched)
            sclangs.append(watched)
        deadline = started + timeout
        for i, watched in enumerate(sclangs):
            if not watched.seen.wait(max(0.0, deadline - time.monotonic())):
                tail = watched.output.decode(errors="replace")[-1000:]
                server = procs[2 * i].output.decode(errors="replace")[-1000:]
                raise RuntimeError(f"bare sclang {i} did not attach within {timeout} s:\n{tail}"
                                   f"\n--- its scsynth:\n{server}")
        took = time.monotonic() - started
        relogins = sum(RELOGIN in w.output for w in sclangs)
        return FloorRun(took, relogins)
    finally:
        for watched in procs:
            _stop(watched.proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, 15)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait()
