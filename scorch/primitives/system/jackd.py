"""The JACK server: its command line, the environment of its clients, and readiness.

Every JACK client scorch runs (scsynth, jack_wait, python-rtmidi's JACK backend)
finds the server by name through the environment built here, and never starts
one by itself (``JACK_NO_START_SERVER``): a missing server is an error to report,
not a reason to start a second one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scorch.primitives.system.process import ENVIRON_LOCK, child_env
from scorch.primitives.system.thread_timing import realtime_granted

#: A line of jackd's that reports an xrun (``JackEngine::XRun: client = scsynth was not
#: finished``, ``Jack: xrun``...).
XRUN = re.compile(r"\bxrun", re.IGNORECASE)
#: Frames per period where realtime scheduling is granted: 1.3 ms at 48 kHz.
REALTIME_PERIOD = 64
#: Frames per period where it is refused (root in a container without CAP_SYS_NICE): 10.7
#: ms, a deadline ordinary scheduling keeps on a loaded machine. At 1.3 ms, under a MIDI
#: flood, scorch's own JACK input lost 0.2-1 % of the messages and a bare rtmidi callback
#: 1-3 %; at 256 frames and up, none.
ORDINARY_PERIOD = 512


def auto_period() -> int:
    """The period of a server whose config names none: as short as this machine keeps."""
    return REALTIME_PERIOD if realtime_granted() else ORDINARY_PERIOD


def jack_env(server: str) -> dict[str, str]:
    """Environment for a JACK client of ``server`` that never autostarts a server."""
    return {"JACK_DEFAULT_SERVER": server, "JACK_NO_START_SERVER": "1"}


@dataclass(frozen=True)
class JackdOptions:
    """What a private jackd is started with."""

    server: str
    driver: str = "dummy"
    """``dummy`` (headless) or ``alsa`` (a sound card)."""
    sample_rate: int = 48000
    period: int = 64
    device: str | None = None
    """The ALSA device (``hw:0``) for the alsa driver."""
    capture: int = 2
    """Capture ports of the dummy driver."""
    playback: int = 2
    """Playback ports of the dummy driver."""
    realtime: bool = False
    """``-R``: the server's and its clients' process threads run at realtime priority."""
    port_max: int | None = None
    """``--port-max`` (None: jackd's own, 2048). Every client, scorch included, maps
    32 KiB of shared memory per possible port: 2048 ports are 64 MiB in each."""
    binary: str = "jackd"

    def argv(self) -> list[str]:
        """The command line: realtime (``-R``) or not (``-r``), the driver, rate and period."""
        argv = [self.binary, "-n", self.server, "-R" if self.realtime else "-r"]
        if self.port_max is not None:
            argv += ["--port-max", str(self.port_max)]
        if self.driver == "alsa":
            assert self.device is not None
            argv += ["-d", "alsa", "-d", self.device]
        else:
            argv += ["-d", "dummy", "-C", str(self.capture), "-P", str(self.playback)]
        return [*argv, "-r", str(self.sample_rate), "-p", str(self.period)]

    def env(self) -> dict[str, str]:
        """jackd's own environment: it must not start another server either."""
        return {"JACK_NO_START_SERVER": "1"}


def wait_for_server(server: str, timeout: float, alive: Callable[[], bool]) -> bool:
    """True once a client can connect to JACK server ``server`` (asked with jack_wait -c)."""
    deadline = time.monotonic() + timeout
    env = child_env(jack_env(server))
    while time.monotonic() < deadline and alive():
        try:
            done = subprocess.run(["jack_wait", "-s", server, "-c"], env=env,
                                  capture_output=True, timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        if done.stdout.strip() == b"running":
            return True
        time.sleep(0.02)  # poll interval of a readiness check, not a guess at readiness
    return False


class ServerClaim:
    """This process's claim on a JACK server name, held while it runs that server.

    JACK refuses a second server of a live server's name only once the second is
    started, and a client that asks meanwhile may find either: so whoever starts a
    jackd first claims the name (a lock file per user and name, which the kernel
    lets go when the process ends, however it ends), and a name claimed elsewhere
    is never started here.
    """

    def __init__(self, server: str) -> None:
        self.server = server
        self.path = Path(tempfile.gettempdir()) / f"scorch-jack-{os.getuid()}-{server}.lock"
        self._fd: int | None = None

    def take(self) -> bool:
        """Claim the name; False if another process holds it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Let the name go (the server is stopped)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@contextlib.contextmanager
def client_environment(server: str | None) -> Iterator[None]:
    """Let an in-process JACK client (python-rtmidi) open on ``server``, then restore.

    libjack reads the server name from this process's environment when a client
    opens, and offers no other way to choose it; so the variables are set around
    the open and put back afterwards, under the lock a child's environment is copied
    under (:data:`~scorch.primitives.system.process.ENVIRON_LOCK`), not changed for good.
    """
    if server is None:
        yield
        return
    with ENVIRON_LOCK:
        saved = {key: os.environ.get(key) for key in jack_env(server)}
        os.environ.update(jack_env(server))
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
