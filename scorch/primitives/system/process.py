"""Start, watch and stop child processes, and read process facts from the OS (psutil).

Every child scorch starts goes through :func:`spawn`: its own process group,
dying with scorch (``PR_SET_PDEATHSIG`` on Linux), and an environment without
systemd's notify and watchdog variables (those are for scorch alone: jackd would
otherwise tell systemd it is ready). A :class:`ManagedProcess` reads its output
into a console, reports its exit at once from the reading thread, and is stopped
by its group id, never by name.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO

import psutil

from scorch.errors import BootError
from scorch.primitives.system.console import Console

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    prctl = libc.prctl

    def die_with_parent() -> None:
        # Runs in the child between fork and exec: no allocation, no locks.
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return die_with_parent


# Loaded once, before any fork, so the child only makes a foreign call. Pass it
# as ``preexec_fn`` to any Popen whose child must not outlive its parent thread.
DIE_WITH_PARENT = _load_prctl()

#: Variables no child inherits: systemd's notify and watchdog protocol is scorch's own.
PRIVATE_ENV = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")


ENVIRON_LOCK = threading.Lock()
"""Held by whoever changes ``os.environ`` for a moment, and while a child's environment is
copied from it: reading it while another thread deletes a key raises KeyError."""


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a child: without :data:`PRIVATE_ENV`, plus ``extra``."""
    with ENVIRON_LOCK:
        env = {key: value for key, value in os.environ.items() if key not in PRIVATE_ENV}
    env.update(extra or {})
    return env


def spawn(argv: Sequence[str], *, env: Mapping[str, str] | None = None, stdin: bool = False,
          cwd: str | os.PathLike[str] | None = None,
          stderr_apart: bool = False) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own process group, its output on a pipe.

    stderr shares stdout's pipe unless ``stderr_apart`` (then it has its own).
    Call it from a thread that outlives the child: Linux sends the death signal
    when the *thread* that forked the child ends. Raise OSError if it cannot start.
    """
    return subprocess.Popen(
        list(argv), stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE if stderr_apart else subprocess.STDOUT,
        env=child_env(env), cwd=cwd, start_new_session=True, preexec_fn=DIE_WITH_PARENT,
        close_fds=True)


class LineSplitter:
    """Whole lines from chunks of output; a partial line waits for the rest."""

    def __init__(self) -> None:
        self._partial = b""

    def __call__(self, chunk: bytes) -> list[str]:
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        return [line.decode(errors="replace").rstrip("\r") for line in lines]

    def rest(self) -> list[str]:
        """The last partial line, at the end of the output."""
        partial, self._partial = self._partial, b""
        return [partial.decode(errors="replace").rstrip("\r")] if partial else []


#: What ``_status`` says when the OS could not be asked (out of file descriptors).
_UNKNOWN = "unknown"


def _status(pid: int | None) -> str | None:
    if pid is None:
        return None
    try:
        return str(psutil.Process(pid).status())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    except OSError:  # EMFILE: not knowing is not news of a death or a stop
        return _UNKNOWN


def pid_alive(pid: int | None) -> bool:
    """True if ``pid`` runs and is not a zombie (or the OS cannot say right now)."""
    return _status(pid) not in (None, psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


_PROC = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
_TICKS = os.sysconf("SC_CLK_TCK") if _PROC else 100


def cpu_seconds(pid: int | None) -> float | None:
    """CPU time ``pid`` has used so far (user + system), or None when it is gone.

    The watchdog asks for every room twice a second: on Linux one read of
    /proc/PID/stat (about a sixth of what psutil's Process object costs).
    """
    if pid is None:
        return None
    if _PROC:
        try:
            fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        except OSError:  # gone, or EMFILE (as psutil's answer: None either way)
            return None
        try:
            data = os.read(fd, 2048)
        except OSError:
            return None
        finally:
            os.close(fd)
        # Fields after the command's closing parenthesis: utime and stime are 12th and 13th.
        fields = data.rpartition(b")")[2].split()
        try:
            return (int(fields[11]) + int(fields[12])) / _TICKS
        except (IndexError, ValueError):
            return None
    try:
        times = psutil.Process(pid).cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
        return None
    return float(times.user + times.system)


def stopped(pid: int | None) -> bool:
    """True if the OS says ``pid`` is stopped (SIGSTOP, a debugger)."""
    return _status(pid) in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)


ExitCallback = Callable[["ManagedProcess", int], None]
OutputHandler = Callable[[bytes], list[str]]
"""Takes each chunk of a process's output; returns the lines its console keeps."""


class ManagedProcess:
    """One child process, its output read into a console (line by line, or by a handler).

    Start it from a thread that outlives it (an actor's own thread): Linux sends
    the death signal when the *thread* that forked the child ends.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        console: Console,
        *,
        env: Mapping[str, str] | None = None,
        stdin: bool = False,
        on_output: OutputHandler | None = None,
        on_exit: ExitCallback | None = None,
        batch: float = 0.0,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self._console = console
        self._env = dict(env) if env is not None else None
        self._want_stdin = stdin
        self._on_output = on_output
        """Reads stdout as bytes when given (stderr then goes to the console apart)."""
        self._on_exit = on_exit
        self._batch = batch
        """Seconds its output is left to gather after a read that came within as long of
        the one before: a process that prints in floods (jackd's xrun reports on a loaded
        machine) wakes the reader a few times a second, not once a line. A lone line, and
        the end of the output (an exit), are read at once."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._err_reader: threading.Thread | None = None
        self._stdin_lock = threading.Lock()
        self.started_at = 0.0
        self.stopping = False
        """True once scorch asked the process to stop: its exit is then no crash."""
        self.exited = threading.Event()
        self.returncode: int | None = None

    @property
    def pid(self) -> int | None:
        """The process id, or None before start."""
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        """True while the process runs."""
        return self._proc is not None and not self.exited.is_set()

    def poll_alive(self) -> bool:
        """Like ``alive`` but also asks the OS, for an exit the reader has not seen yet."""
        return self.alive() and self._proc is not None and self._proc.poll() is None

    def start(self, adopt: subprocess.Popen[bytes] | None = None) -> None:
        """Spawn the process; raise BootError when it cannot be started at all.

        ``adopt``: a process :func:`spawn` started earlier with these arguments (and
        stderr apart when output goes to ``on_output``): watched from now on, and its
        output from its start on, which waited in the pipe.
        """
        apart = self._on_output is not None
        try:
            self._proc = adopt or spawn(self.argv, env=self._env, stdin=self._want_stdin,
                                        stderr_apart=apart)
        except OSError as err:
            raise BootError(f"cannot start {self.name} ({self.argv[0]}): {err.strerror}") from err
        self.started_at = time.monotonic()
        if apart:
            assert self._proc.stderr is not None
            self._err_reader = threading.Thread(
                target=self._pump, args=(self._proc.stderr, LineSplitter()),
                name=f"{self.name}-stderr", daemon=True)
            self._err_reader.start()
        self._reader = threading.Thread(
            target=self._read, name=f"{self.name}-reader", daemon=True
        )
        self._reader.start()

    def _pump(self, stream: IO[bytes], handler: OutputHandler) -> None:
        """Feed chunks of ``stream`` to ``handler`` until EOF; its lines go to the console."""
        read = getattr(stream, "read1", stream.read)
        last = 0.0
        while chunk := read(65536):
            try:
                lines = handler(chunk)
            except Exception:
                log.exception("%s: output handler failed", self.name)
                lines = []
            for line in lines:
                self._console.append(self.name, line)
            if self._batch:
                now = time.monotonic()
                if now - last < self._batch:
                    time.sleep(self._batch)  # a flood: let the next lines gather in the pipe
                    now = time.monotonic()
                last = now
        if isinstance(handler, LineSplitter):
            for line in handler.rest():
                self._console.append(self.name, line)

    def _read(self) -> None:
        """Read stdout until EOF, then report the exit (runs in the reader thread)."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        self._pump(proc.stdout, self._on_output or LineSplitter())
        if self._err_reader is not None:
            self._err_reader.join(timeout=1.0)
        self.returncode = proc.wait()
        self.exited.set()
        # Start-up waits match this line too: an exit ends their wait at once.
        self._console.append(self.name, f"[scorch] {self.name} exited ({self.describe_exit()})")
        if self._on_exit is not None:
            self._on_exit(self, self.returncode)

    def write(self, data: bytes) -> None:
        """Write to the process's stdin; raise BrokenPipeError when it is gone."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise BrokenPipeError(f"{self.name} has no stdin")
        with self._stdin_lock:
            proc.stdin.write(data)
            proc.stdin.flush()

    def close_stdin(self) -> None:
        """Close stdin (sclang quits on EOF)."""
        if self._proc is not None and self._proc.stdin is not None:
            with self._stdin_lock, contextlib.suppress(OSError):
                self._proc.stdin.close()

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the process group scorch started."""
        if self._proc is None or self.exited.is_set():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    def stop(self, polite: Callable[[], None] | None = None, grace: float = 1.0) -> int | None:
        """Stop: ``polite`` (e.g. /quit), wait, SIGTERM, wait, SIGKILL the group."""
        if self._proc is None:
            return None
        self.stopping = True
        # A stopped process hears nothing polite: straight to the signals.
        if not self.exited.is_set() and polite is not None and not stopped(self._proc.pid):
            with contextlib.suppress(OSError):
                polite()
            self.exited.wait(grace)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.exited.is_set():
                break
            self.signal_group(sig)
            if sig == signal.SIGTERM:
                self.signal_group(signal.SIGCONT)  # a stopped process handles SIGTERM only then
            self.exited.wait(grace)
        if not self.exited.wait(grace):
            log.error("%s (pid %s) did not exit after SIGKILL", self.name, self._proc.pid)
        # Reap any process left in the group (a child that outlived its parent).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=grace)
        return self.returncode

    def describe_exit(self) -> str:
        """Say how the process ended: exit code or signal name."""
        code = self.returncode
        if code is None:
            return "running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"
