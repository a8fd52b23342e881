"""One running sclang attached to an scsynth, with the session that runs its code.

sclang starts with scorch's classes in its class library (``-l`` with a config
that keeps the user's own include paths), installs the ``Scorch`` evaluator,
then attaches its default server ``s`` (a ``ScorchServer``) to the room's
scsynth. Ready means sclang said so in records only this session can write;
never a sleep.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from scorch.errors import BootError, RoomNotReady
from scorch.primitives.sclang import protocol
from scorch.primitives.sclang.deadline import ProgressDeadline
from scorch.primitives.sclang.launch import CLASSES, EarlySclang, sclang_argv, sclang_env
from scorch.primitives.sclang.session import ABORT_POLL, SclangSession, ServerFailures
from scorch.primitives.system import (
    Console,
    ConsoleLine,
    ExitCallback,
    ManagedProcess,
    cpu_seconds,
    stopped,
)

log = logging.getLogger(__name__)

READY = r"\*\*\* Welcome to SuperCollider"
FATAL = r"\[scorch\] sclang exited"
Abort = Callable[[], "str | None"]
"""Asked while a start or attach waits: a reason to give up now, or None to go on."""


class Sclang:
    """A started sclang whose ``s`` is the room's scsynth."""

    def __init__(self, process: ManagedProcess, session: SclangSession, lang_port: int,
                 name: str, timeout: float, server_host: str = "127.0.0.1",
                 synthdescs: str | None = None) -> None:
        self.process = process
        self.session = session
        self.lang_port = lang_port
        self.name = name
        self.timeout = timeout
        self.server_host = server_host
        """The address scsynth listens on, as this machine reaches it."""
        self.synthdescs = synthdescs
        """The directory of SynthDefs read into the SynthDescLib at every attach."""
        self.client_id = 0
        """``s.clientID`` once attached: sclang's node ids lie in this client's range."""
        self.login_asks = 0
        """How many times the attach asked scsynth again before it confirmed the login."""
        self._console = Console()
        self._mark = 0
        """Where this sclang's start begins in its console."""

    @property
    def pid(self) -> int | None:
        """The process id."""
        return self.process.pid

    @classmethod
    def start(cls, *, server_port: int, abort: Abort = lambda: None,
              **spawned: Any) -> Sclang:
        """Start sclang, install the evaluator and attach ``s`` to scsynth at ``server_port``.

        ``spawned``: :meth:`spawn`'s arguments. See :meth:`attach_when_ready`.
        """
        sclang = cls.spawn(**spawned)
        sclang.attach_when_ready(server_port, abort)
        return sclang

    @classmethod
    def spawn(cls, *, name: str, lang_port: int, console: Console,
              on_exit: ExitCallback, timeout: float, binary: str = "sclang",
              extra_env: dict[str, str] | None = None,
              on_server_request: Callable[[str], None] = lambda what: None,
              on_recompiled: Callable[[], None] = lambda: None,
              on_pattern: Callable[[str, str], None] = lambda name, payload: None,
              server_host: str = "127.0.0.1", synthdescs: str | None = None,
              server_failures: ServerFailures | None = None,
              early: EarlySclang | None = None) -> Sclang:
        """Start the sclang process and return at once: it compiles its class library
        while its scsynth starts (:meth:`attach_when_ready` then attaches it).

        ``early``: a process started before, taken in place of a new one when it runs
        this command line (``lang_port`` must be its port).

        ``synthdescs``: a directory of SynthDefs scsynth has, read into the SynthDescLib
        before ``s`` attaches (and after a recompile). ``server_failures``: how a request
        that sent scsynth messages learns what scsynth said about them
        (``ExecuteResult.server_errors``).
        """
        mark = console.mark()
        session = SclangSession(lambda data: proc.write(data), console, room=name,
                                on_server_request=on_server_request,
                                on_recompiled=on_recompiled,
                                server_failures=server_failures, on_pattern=on_pattern)
        argv, env = sclang_argv(binary, lang_port), sclang_env(extra_env)
        proc = ManagedProcess("sclang", argv, console, env=env,
                              stdin=True, on_output=session.feed, on_exit=on_exit)
        proc.start(adopt=early.take(argv, env) if early is not None else None)
        sclang = cls(proc, session, lang_port, name, timeout, server_host, synthdescs)
        sclang._mark, sclang._console = mark, console
        return sclang

    def attach_when_ready(self, server_port: int, abort: Abort = lambda: None) -> None:
        """Wait for the spawned sclang's welcome, then install the evaluator and attach.

        Gives up at once (BootError, sclang stopped) when sclang exits or is stopped, or
        when ``abort`` names a reason (the scsynth it attaches to died), instead of
        waiting out the timeout.
        """
        proc, console, mark, name, timeout = (self.process, self._console, self._mark,
                                              self.name, self.timeout)
        sclang = self

        def failed(what: str) -> BootError:
            how = proc.describe_exit()
            ended = "" if proc.alive() or how in what else f" ({how})"
            proc.stop(polite=proc.close_stdin, grace=0.5)
            tail = "\n".join(x.text for x in console.since(mark, source="sclang")[-8:])
            return BootError(f"room {name!r}: sclang {what}{ended}:\n{tail}")

        try:
            line = _wait_line(console, f"{READY}|{FATAL}", timeout, mark,
                              sclang._trouble(abort), proc.pid)
        except BootError as err:
            raise failed(f"did not start: {err}") from err
        if line is None:
            raise failed(f"did not print its welcome within {timeout:g} s")
        if "Welcome" not in line.text:
            raise failed("exited while starting")
        try:
            sclang.install_and_attach(server_port, abort)
        except (OSError, BootError) as err:
            raise failed(str(err)) from err

    def _trouble(self, abort: Abort) -> Abort:
        """``abort``, and this sclang's own exit or stop, as one reason to stop waiting."""

        def trouble() -> str | None:
            if not self.process.alive():
                return f"sclang {self.process.describe_exit()}"
            if stopped(self.pid):
                return "sclang is stopped (SIGSTOP)"
            return abort()

        return trouble

    def install_and_attach(self, server_port: int, abort: Abort = lambda: None) -> None:
        """Install the evaluator, then attach ``s`` (again, after a recompile)."""
        session, trouble = self.session, self._trouble(abort)
        try:
            installed = session.call(lambda reply: protocol.install(session.token, reply),
                                     ("installed",), self.timeout, trouble)
        except BootError as err:
            raise BootError(f"stopped installing the Scorch evaluator: {err}") from err
        if installed is None:
            raise BootError(f"the Scorch class did not answer within {self.timeout:g} s "
                            f"(is {CLASSES} in the class library?)")
        try:
            attached = session.call(lambda reply: protocol.attach(self.name, server_port, reply,
                                                                    self.server_host,
                                                                    self.synthdescs),
                                    ("attached", "attach-failed"), self.timeout, trouble)
        except BootError as err:
            raise BootError(f"stopped attaching to scsynth on port {server_port}: {err}") \
                from err
        if attached is None:
            raise BootError(f"did not attach to scsynth on port {server_port} within "
                            f"{self.timeout:g} s")
        payload = attached.payload.decode(errors="replace")
        if attached.name == "attach-failed":
            raise BootError(f"scsynth on port {server_port} refused the login: {payload}")
        self.client_id, self.login_asks = protocol.parse_attached(payload)
        if self.login_asks:
            log.warning("%s: sclang asked scsynth %d more time(s) before its login was "
                        "confirmed (a datagram was lost or late)", self.name, self.login_asks)
        session.client_id = self.client_id

    def reattach(self, server_port: int, abort: Abort = lambda: None) -> None:
        """Register ``s`` with a restarted scsynth, keeping its client id and node ids."""
        try:
            answer = self.session.call(lambda reply: protocol.reattach(server_port, reply),
                                       ("reattached", "reattach-failed"), self.timeout,
                                       self._trouble(abort))
        except BootError as err:
            raise BootError(f"room {self.name!r}: sclang did not re-attach to scsynth "
                            f"on port {server_port}: {err}") from err
        if answer is None or answer.name != "reattached":
            why = answer.payload.decode(errors="replace") if answer else "no answer"
            raise BootError(f"room {self.name!r}: sclang did not re-attach to scsynth on "
                            f"port {server_port}: {why}")

    def stop(self, reason: str) -> None:
        """Fail the code in flight with ``reason``, close stdin, then SIGTERM, then SIGKILL."""
        self.session.fail_all(RoomNotReady(f"{reason} before the code finished"))
        self.process.stop(polite=self.process.close_stdin, grace=1.0)


def _wait_line(console: Console, pattern: str, timeout: float, since: int,
               abort: Abort, pid: int | None = None) -> ConsoleLine | None:
    """Wait for a console line as ``Console.wait_for`` does, giving up when ``abort`` says so.

    With ``pid``, the wait goes on past ``timeout`` while that process keeps using CPU
    (:class:`ProgressDeadline`): a start slowed by a loaded machine is not thrown away.
    """
    deadline = ProgressDeadline(time.monotonic(), timeout, cpu_seconds(pid))
    while (remaining := deadline.remaining(time.monotonic(), lambda: cpu_seconds(pid))) > 0:
        line = console.wait_for(pattern, min(remaining, ABORT_POLL), since=since,
                                source="sclang")
        if line is not None:
            return line
        if (reason := abort()) is not None:
            raise BootError(reason)
    return None
