"""One running sclang attached to an scsynth, with the session that frames its code.

Ready means sclang printed its welcome, then reported itself attached to the
server with a marker only this process knows; never a sleep.
"""

from __future__ import annotations

from scorch.errors import BootError, InstanceNotReady
from scorch.primitives.console import Console
from scorch.primitives.process import ExitCallback, ManagedProcess
from scorch.primitives.sclang_protocol import EVAL_SILENT
from scorch.primitives.sclang_session import SclangSession

READY = r"\*\*\* Welcome to SuperCollider"
FATAL = r"\[scorch\] sclang exited"
#: sclang as root crashes in QtWebEngine without these, even with no window.
SCLANG_ENV = {"QTWEBENGINE_DISABLE_SANDBOX": "1", "QT_QPA_PLATFORM": "offscreen",
              # Two QtWebEngineProc helpers of ~45 MB each per sclang otherwise.
              "QTWEBENGINE_CHROMIUM_FLAGS": "--single-process"}


class Sclang:
    """A started sclang whose ``s`` is the instance's scsynth."""

    def __init__(self, process: ManagedProcess, session: SclangSession, lang_port: int) -> None:
        self.process = process
        self.session = session
        self.lang_port = lang_port

    @property
    def pid(self) -> int | None:
        """The process id."""
        return self.process.pid

    @classmethod
    def start(cls, *, name: str, lang_port: int, server_port: int, console: Console,
              on_exit: ExitCallback, timeout: float, binary: str = "sclang",
              extra_env: dict[str, str] | None = None) -> Sclang:
        """Start sclang and attach it to the scsynth at ``server_port``."""
        mark = console.mark()
        session = SclangSession(lambda data: proc.write(data), instance=name)
        proc = ManagedProcess("sclang", [binary, "-i", "scorch", "-u", str(lang_port)], console,
                              env={**SCLANG_ENV, **(extra_env or {})}, stdin=True,
                              on_line=session.feed, on_exit=on_exit)
        proc.start()

        def failed(what: str) -> BootError:
            proc.stop(polite=proc.close_stdin, grace=0.5)
            tail = "\n".join(x.text for x in console.since(mark, source="sclang")[-8:])
            ended = "" if proc.alive() else f" ({proc.describe_exit()})"
            return BootError(f"instance {name!r}: sclang {what}{ended}:\n{tail}")

        line = console.wait_for(f"{READY}|{FATAL}", timeout, since=mark, source="sclang")
        if line is None:
            raise failed(f"did not print its welcome within {timeout:g} s")
        if "Welcome" not in line.text:
            raise failed("exited while starting")
        attached = f"@@scorch-{session.framer.token}-attached@@"
        done = session.expect(attached)
        try:
            # Server.remote pings every 0.7 s and doWhenBooted polls every 0.2 s;
            # a short ping period while attaching makes it take milliseconds.
            proc.write(
                (f'Server.default = s = Server.remote(\\{name}, '
                 f'NetAddr("127.0.0.1", {server_port}));'
                 "s.aliveThreadPeriod = 0.02;"
                 "fork { while { s.serverRunning.not } { 0.005.wait }; s.aliveThreadPeriod = 0.7;"
                 f'"{attached}".postln }};').encode() + EVAL_SILENT
            )
        except OSError as err:
            raise failed(f"stopped reading its input ({err})") from err
        if not done.wait(timeout):
            raise failed(f"did not attach to scsynth on port {server_port} within {timeout:g} s")
        return cls(proc, session, lang_port)

    def repoint(self, server_port: int) -> None:
        """Point ``s`` at an scsynth that came back on another port."""
        self.session.submit(f's.addr = NetAddr("127.0.0.1", {server_port});', timeout=5.0)

    def stop(self, reason: str) -> None:
        """Fail the code in flight with ``reason``, close stdin, then SIGTERM, then SIGKILL."""
        self.session.fail_all(InstanceNotReady(f"{reason} before the code finished"))
        self.process.stop(polite=self.process.close_stdin, grace=1.0)
