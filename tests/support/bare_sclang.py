"""A plain sclang attached to an scsynth, fed code as the IDE feeds it: the reference side.

The differential tests (``tests/support/differential.py``) compare what ``execute``
says with what this bare sclang printed for the same code.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

from scorch.primitives.sclang.launch import SCLANG_ENV
from scorch.primitives.system.process import spawn
from scorch.primitives.system.udp_ports import free_udp_port


@dataclass(frozen=True)
class BareRun:
    """What a bare sclang printed for one evaluation."""

    text: str
    finished: bool
    """False: it did not get to the end in time (stuck, or dead)."""
    elapsed: float
    died: bool = False


class BareSclang:
    """A plain sclang attached to an scsynth, fed code the way the IDE feeds it."""

    def __init__(self, server_port: int, name: str, timeout: float = 20.0) -> None:
        self._port, self._name, self._timeout = server_port, name, timeout
        # One language port for this sclang and every one that replaces it: scsynth knows
        # a client by its address, so a restarted sclang is the same client (id 0) again,
        # as scorch's restarted sclang is; a new port would make it client 1, and every
        # buffer number and node id after a restart would differ from scorch's.
        self._lang_port = free_udp_port()
        self._start()

    def _start(self) -> None:
        name, server_port, timeout = self._name, self._port, self._timeout
        self._home = tempfile.TemporaryDirectory(prefix="scorch-bare-")
        env = {**SCLANG_ENV, "XDG_CONFIG_HOME": f"{self._home.name}/config",
               "XDG_DATA_HOME": f"{self._home.name}/data"}
        # stderr apart, as scorch keeps it: it is library noise (ALSA), not posted text.
        self._proc = spawn(["sclang", "-i", "scorchbare", "-u", str(self._lang_port)], env=env,
                           stdin=True, stderr_apart=True)
        self._buffer = bytearray()
        self._after_marker = 0
        """Where the last marker's line ends (its newline may still be on its way)."""
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._wait_for(b"*** Welcome to SuperCollider", timeout):
            self.close()
            raise RuntimeError("bare sclang did not start")
        # The same server name as the room's: values that print it compare equal.
        self.run(f'Server.default = s = Server.remote(\\{name}, NetAddr("127.0.0.1", '
                 f"{server_port})); fork {{ while {{ s.serverRunning.not }} {{ 0.01.wait }}; "
                 '"bare-attached".postln }; 1', timeout)
        if not self._wait_for(b"bare-attached", timeout):
            self.close()
            raise RuntimeError("bare sclang did not attach")

    def _read(self) -> None:
        assert self._proc.stdout is not None
        read = self._proc.stdout.read1  # type: ignore[attr-defined]
        while chunk := read(65536):
            with self._changed:
                self._buffer += chunk
                self._changed.notify_all()

    def _wait_for(self, needle: bytes, timeout: float, start: int = 0) -> int | None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while (at := self._buffer.find(needle, start)) < 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._proc.poll() is not None:
                    return None
                self._changed.wait(remaining)
            return at

    def alive(self) -> bool:
        """True while this sclang runs."""
        return self._proc.poll() is None

    def run(self, code: str, timeout: float = 5.0, prelude: str = "") -> str | None:
        """Evaluate ``code`` as the IDE does; return what sclang printed (None: no end)."""
        done = self.evaluate(code, timeout, prelude)
        return done.text if done.finished else None

    def evaluate(self, code: str, timeout: float = 5.0, prelude: str = "") -> BareRun:
        """Evaluate ``code`` as the IDE does: what sclang printed, whether it got to the end.

        ``prelude``: code run silently just before (a random seed), printing nothing.
        """
        marker = f"@@bare-{secrets.token_hex(4)}@@".encode()
        with self._changed:
            start = max(len(self._buffer), self._after_marker)
        assert self._proc.stdin is not None
        silent = (prelude.encode() + b"\x1b") if prelude else b""
        started = time.monotonic()
        try:
            self._proc.stdin.write(silent + code.encode() + b"\x0c" + b'"' + marker
                                   + b'".postln;\x1b')
            self._proc.stdin.flush()
        except BrokenPipeError:
            return BareRun("", False, 0.0, died=True)
        at = self._wait_for(marker, timeout, start)
        elapsed = time.monotonic() - started
        with self._changed:
            if at is None:  # hung (or died): what it printed up to then
                return BareRun(bytes(self._buffer[start:]).decode(errors="replace"), False,
                               elapsed, died=self._proc.poll() is not None)
            self._after_marker = at + len(marker) + 1
            return BareRun(bytes(self._buffer[start:at]).decode(errors="replace"), True, elapsed)

    def exit_status(self) -> int | None:
        """sclang's exit status once it ended (negative: the signal that ended it)."""
        return self._proc.poll()

    def restart(self) -> None:
        """Close this sclang and start a new one on the same server, in its place."""
        self.close()
        self._start()

    def close(self) -> None:
        """End sclang (stdin closed, then its process group killed) and its files."""
        if self._proc.stderr is not None:
            self._proc.stderr.close()
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        self._reader.join(timeout=5)  # its last chunks belong to this sclang, not a next one
        self._home.cleanup()
