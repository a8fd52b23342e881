"""How a coordinator reaches a host's ``scorch run``: its socket, or ``ssh HOST scorch bridge``.

Both give a :class:`Channel`: ``call(method, args, timeout)`` on the control
socket's wire, raising the error the host raised. ``local`` hosts are other
``scorch run`` processes on this machine (:class:`~scorch.wire.client.ControlClient`
on their socket); ``ssh`` hosts are reached with the system's ``ssh`` client
(:class:`SshChannel`), which reads the user's ``~/.ssh/config``, agent and
known_hosts like every other ssh the technician runs (docs/hosts.md says why
not a Python ssh library).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shlex
import signal
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from scorch.config import Config, HostConfig
from scorch.errors import HostUnreachable, NotRunning, RemoteError, ScorchError
from scorch.primitives.system import child_env
from scorch.wire import MAX_LINE, ControlClient, Reply, decode_reply, request_line, socket_path

log = logging.getLogger(__name__)

#: Seconds ssh may take to set up the connection before it gives up.
CONNECT_TIMEOUT = 3
#: ssh's own keepalive: a silent peer is dropped after about INTERVAL * COUNT seconds.
ALIVE_INTERVAL, ALIVE_COUNT = 1, 3
#: Lines of ssh's stderr kept to say why a connection ended.
STDERR_LINES = 20


class Channel(Protocol):
    """One way to a host's control socket."""

    def call(self, method: str, args: dict[str, Any] | None = None,
             timeout: float = 30.0, key: str | None = None) -> Any:
        """Call ``method`` there (``key``: the request's own id); raise the host's error."""
        ...

    def close(self) -> None:
        """Let go of the connection (the host goes on)."""
        ...


def ssh_argv(name: str, host: HostConfig, config: Config) -> list[str]:
    """The ssh command line that runs ``scorch bridge`` for host ``name``.

    BatchMode: never a password prompt (keys only); keepalives end a connection
    whose peer went silent. The remote command is quoted for the remote shell.
    """
    argv = ["ssh", "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
            "-o", f"ServerAliveInterval={ALIVE_INTERVAL}",
            "-o", f"ServerAliveCountMax={ALIVE_COUNT}", "-p", str(host.ssh_port)]
    if host.identity is not None:
        argv += ["-i", str(config.resolve_path(host.identity)), "-o", "IdentitiesOnly=yes"]
    if host.known_hosts is not None:
        argv += ["-o", f"UserKnownHostsFile={config.resolve_path(host.known_hosts)}",
                 "-o", "StrictHostKeyChecking=yes"]
    for key, value in host.ssh_options.items():
        argv += ["-o", f"{key}={value}"]
    if host.ssh_user:
        argv += ["-l", host.ssh_user]
    remote_config = host.config_path or (config.source or Path("config.toml"))
    remote = [host.scorch, "bridge", "--config", str(remote_config), "--host", name]
    return [*argv, "--", host.address, shlex.join(remote)]


def open_channel(name: str | None, config: Config) -> Channel:
    """A channel to host ``name`` of ``config`` (None: the rooms without a host, here)."""
    if name is None or config.hosts[name].via == "local":
        return LocalChannel(socket_path(config.host_state_path(name)), name or "(this machine)")
    return SshChannel(ssh_argv(name, config.hosts[name], config), name)


class LocalChannel:
    """The control socket of another ``scorch run`` on this machine.

    A socket nobody serves is NotRunning; an answer that does not come or a
    connection that breaks is HostUnreachable, told apart from the errors the
    host itself answers with.
    """

    def __init__(self, path: Path, name: str) -> None:
        self.name = name
        self.client = ControlClient(path)
        self._ids = itertools.count(1)

    def call(self, method: str, args: dict[str, Any] | None = None,
             timeout: float = 30.0, key: str | None = None) -> Any:
        """Call ``method`` on that ``scorch run`` (a keyed call may go again, and runs once)."""
        line = request_line(next(self._ids), method, args or {}, key)
        try:
            reply = self.client.roundtrip(line, method, timeout, resend=key is not None)
        except NotRunning:
            raise
        except (ScorchError, OSError, ValueError) as err:
            raise HostUnreachable(f"host {self.name!r}: {err}") from err
        return reply.unwrap()

    def close(self) -> None:
        """Close the idle connections."""
        self.client.close()


class _Pending:
    """A request waiting for its answer."""

    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: Reply | None = None


class SshChannel:
    """The control wire over one ``ssh HOST scorch bridge`` process; calls in parallel.

    Answers come back with their request's id, in any order. When ssh ends (the
    host went away, the key was refused, the network dropped), every waiting
    call fails with HostUnreachable and ssh's last words; the channel is dead
    and a new one must be opened.
    """

    def __init__(self, argv: list[str], name: str) -> None:
        self.name = name
        self.argv = argv
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.dead: str | None = None
        """Why the channel ended, or None while it lives."""
        # No death signal: ssh ends when its stdin closes, which happens when this
        # process ends however it ends; and a death signal would follow the thread
        # that happened to open the channel, not this process.
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=child_env(), start_new_session=True, close_fds=True)
        self.pid = self._proc.pid
        # Both readers exist before either starts: the stdout reader joins the
        # stderr one when ssh ends, which can be at once (a refused key).
        self._stderr_reader = threading.Thread(target=self._read_stderr,
                                               name=f"ssh-{name}-err", daemon=True)
        reader = threading.Thread(target=self._read, name=f"ssh-{name}", daemon=True)
        self._stderr_reader.start()
        reader.start()

    def call(self, method: str, args: dict[str, Any] | None = None,
             timeout: float = 30.0, key: str | None = None) -> Any:
        """Call ``method`` on the host; raise its error, or HostUnreachable.

        ``key`` goes with the request to the host's server through the bridge.
        """
        if self.dead is not None:
            raise HostUnreachable(self.dead)
        request_id = next(self._ids)
        pending = _Pending()
        with self._lock:
            self._pending[request_id] = pending
        try:
            line = request_line(request_id, method, args or {}, key)
            stdin = self._proc.stdin
            assert stdin is not None
            try:
                with self._write_lock:
                    stdin.write(line)
                    stdin.flush()
            except (OSError, ValueError) as err:
                self._end(f"ssh to {self.name} is gone ({err})")
                raise HostUnreachable(self.dead or "ssh is gone") from err
            if not pending.done.wait(timeout):
                raise HostUnreachable(f"host {self.name!r} did not answer {method!r} within "
                                      f"{timeout:g} s")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        reply = pending.reply
        if reply is None:
            raise HostUnreachable(self.dead or f"the connection to {self.name!r} ended")
        return reply.unwrap()

    def _read(self) -> None:
        """Hand each answer to its caller (own thread) until ssh's output ends."""
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            while line := stdout.readline(MAX_LINE):
                try:
                    reply = decode_reply(line)
                except RemoteError as err:
                    log.warning("ssh %s: %s: %r", self.name, err, line[:200])
                    continue
                if isinstance(reply.id, bool) or not isinstance(reply.id, int):
                    continue  # every call here has an integer id (and true == 1)
                with self._lock:
                    pending = self._pending.get(reply.id)
                if pending is not None:
                    pending.reply = reply
                    pending.done.set()
        except (OSError, ValueError):
            pass
        code = self._proc.wait()
        # What ssh said last (``Permission denied``) may still be on its way to the other
        # reader: its pipe closed with the exit, so it ends at once.
        self._stderr_reader.join(timeout=2.0)
        said = " / ".join(self._stderr) or "no message"
        self._end(f"ssh to host {self.name!r} ended (exit {code}): {said}")

    def _read_stderr(self) -> None:
        stderr = self._proc.stderr
        assert stderr is not None
        with contextlib.suppress(OSError, ValueError):
            for raw in stderr:
                text = raw.decode(errors="replace").strip()
                if text:
                    self._stderr.append(text[:300])
                    log.debug("ssh %s: %s", self.name, text)

    def _end(self, why: str) -> None:
        with self._lock:
            if self.dead is None:
                self.dead = why
            waiting, self._pending = list(self._pending.values()), {}
        for pending in waiting:
            pending.done.set()  # reply None: the call says why

    def close(self) -> None:
        """End ssh: its stdin closes (the bridge then ends), then its process group."""
        self._end(f"the connection to {self.name!r} was closed")
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, signal.SIGKILL)
                self._proc.wait()

