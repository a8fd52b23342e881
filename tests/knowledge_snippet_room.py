"""Run sclang snippets in a real room and say whether each played, stopped and stayed clean.

How a snippet is verified (the same for the built-ins and for any saved one):

1. A private ``jackd`` (dummy driver, 48 kHz), an ``scsynth`` on a UDP port in
   58300-58399, and an interactive ``sclang -i`` attached to it exactly as a
   scorch room attaches (``Server.default = s = Server.remote(...)``). Each runs
   in its own process group; stop() ends them by pid (sclang ``0.exit``, then
   SIGTERM, then SIGKILL on the group) and jackd with SIGTERM only.
2. A meter synth at the tail of the root group sends the peak of buses 0-1 to
   sclang twenty times a second (``SendPeakRMS``), so "it made sound" is measured
   on the output bus, not assumed.
3. The snippet's code is sent to stdin like room code (evaluated at ``\\x0c``),
   followed by a marker: the time until the marker is how long evaluation
   blocked the interpreter (everything musical must be scheduled, not waited for).
4. A snippet that stops by itself (``runs: N s``) must bring the server's synth
   count (``/status``) back to the baseline within N s plus a margin. One that
   runs until stopped must still be playing after two seconds, and its
   ``stop:`` header code must bring the count back. ``CmdPeriod.run`` then
   clears anything left, and the meter is made again.
5. Output lines containing ``ERROR`` or ``FAILURE`` between the start and the end
   of a check fail it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import secrets
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HEADLESS_ENV = {"QTWEBENGINE_DISABLE_SANDBOX": "1", "QT_QPA_PLATFORM": "offscreen",
                "QTWEBENGINE_CHROMIUM_FLAGS": "--single-process"}

_METER = r"""
SynthDef(\knowledgeMeter, { SendPeakRMS.kr(In.ar(0, 2), 20, 3, '/knowledgeMeter') }).add;
OSCdef(\knowledgeMeter, { |msg| ~knowledgePeak = max(~knowledgePeak ? 0, max(msg[3], msg[5])) },
    '/knowledgeMeter').permanent_(true);
"""


@dataclass
class SnippetCheck:
    """What one snippet did in the room."""

    name: str
    eval_seconds: float
    """How long the interpreter was busy evaluating it (until the next code ran)."""
    peak: float
    """The loudest sample on buses 0-1 while it played."""
    playing_synths: int
    """Synths running (beyond the meter) once it was under way."""
    stopped_after: float | None
    """Seconds until the synth count was back to the baseline; None if it never was."""
    errors: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)


class SnippetRoom:
    """jackd + scsynth + an attached interactive sclang, for running snippets for real."""

    def __init__(self, jack_server: str, port: int, lang_port: int) -> None:
        self.jack_server = jack_server
        self.port = port
        self.lang_port = lang_port
        self._work = Path(tempfile.mkdtemp(prefix="scorch-snippet-room-"))
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._lines: queue.Queue[str] = queue.Queue()
        self._osc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._osc.bind(("127.0.0.1", 0))
        self._osc.settimeout(1.0)

    def start(self, timeout: float = 30.0) -> None:
        """Start the three processes and wait until sclang says it is attached."""
        jack_env = {**os.environ, "JACK_DEFAULT_SERVER": self.jack_server,
                    "JACK_NO_START_SERVER": "1"}
        self._spawn("jackd", ["jackd", "-n", self.jack_server, "-r", "-d", "dummy",
                              "-r", "48000", "-p", "64"], env=jack_env)
        deadline = time.monotonic() + timeout
        while subprocess.run(["jack_wait", "-s", self.jack_server, "-c"], env=jack_env,
                             capture_output=True, check=False).stdout.strip() != b"running":
            if time.monotonic() > deadline or self._procs["jackd"].poll() is not None:
                raise RuntimeError("jackd did not start")
            time.sleep(0.05)  # jack_wait's poll interval, not a guess at readiness
        server = self._spawn("scsynth", [
            "scsynth", "-u", str(self.port), "-B", "127.0.0.1", "-R", "0", "-D", "0",
            "-i", "2", "-o", "2", "-m", "65536", "-H", "scorch-knowledge"], env=jack_env,
            stdout=subprocess.PIPE)
        assert server.stdout is not None
        for raw in server.stdout:
            if b"server ready" in raw:
                break
        else:
            raise RuntimeError("scsynth exited before it was ready")
        threading.Thread(target=self._read, args=(server, "scsynth: "), daemon=True).start()
        env = {**os.environ, **HEADLESS_ENV, "XDG_CONFIG_HOME": str(self._work / "config"),
               "XDG_DATA_HOME": str(self._work / "data")}
        lang = self._spawn("sclang", ["sclang", "-i", "scorch", "-u", str(self.lang_port)],
                           env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        threading.Thread(target=self._read, args=(lang, ""), daemon=True).start()
        self.wait_for("Welcome to SuperCollider", timeout)
        self.evaluate(
            f'Server.default = s = Server.remote(\\knowledge, NetAddr("127.0.0.1", {self.port}));'
            "s.aliveThreadPeriod = 0.02;"
            'fork { while { s.serverRunning.not } { 0.005.wait }; s.aliveThreadPeriod = 0.7;'
            '"@@attached".postln };', silent=True)
        self.wait_for("@@attached", timeout)
        self.reset()

    def stop(self) -> None:
        """End every process this room started, by pid, and wait for each."""
        lang = self._procs.get("sclang")
        if lang is not None and lang.poll() is None:
            with contextlib.suppress(OSError):
                self.evaluate("0.exit;", silent=True)
        for name in ("sclang", "scsynth", "jackd"):
            proc = self._procs.pop(name, None)
            if proc is None:
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=3)
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    if name != "jackd":  # jackd gets SIGTERM only
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=5)
        self._osc.close()

    def pids(self) -> list[int]:
        """Return the pids of the processes still running."""
        return [p.pid for p in self._procs.values() if p.poll() is None]

    def evaluate(self, code: str, *, silent: bool = False) -> None:
        """Send code to sclang as a room does; ``\\x0c`` prints its value, ``\\x1b`` does not."""
        lang = self._procs["sclang"]
        assert lang.stdin is not None
        lang.stdin.write(code.encode() + (b"\x1b" if silent else b"\x0c"))
        lang.stdin.flush()

    def wait_for(self, text: str, timeout: float) -> list[str]:
        """Return the lines printed up to and including the first one containing ``text``."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"sclang did not print {text!r}; last lines: {seen[-10:]}")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            seen.append(line)
            if text in line:
                return seen

    def synths(self) -> int:
        """Ask scsynth how many synths run now (``/status``)."""
        self._osc.sendto(b"/status\x00,\x00\x00\x00", ("127.0.0.1", self.port))
        while True:
            data = self._osc.recv(1024)
            if data.startswith(b"/status.reply"):
                return struct.unpack(">i", data[36:40])[0]  # args: 1, ugens, synths, ...

    def reset(self) -> int:
        """CmdPeriod, then the meter again; return the baseline synth count."""
        mark = "@@reset-" + secrets.token_hex(4)
        self.evaluate("CmdPeriod.run;" + _METER + "fork { s.sync; "
                      "Synth.tail(RootNode(s), \\knowledgeMeter); s.sync; "
                      f'~knowledgePeak = 0; "{mark}".postln }};', silent=True)
        self.wait_for(mark, 10)
        return self.synths()

    def check(self, name: str, code: str, *, runs_seconds: float | None, stop_code: str = "",
              before_stop: str = "", margin: float = 4.0) -> SnippetCheck:
        """Run one snippet and measure it as the module docstring says.

        With ``runs_seconds`` it must end by itself within that time plus ``margin``;
        without, it must play for two seconds and ``stop_code`` must end it.
        ``before_stop`` runs after it started (e.g. a simulated MIDI note).
        """
        baseline = self.reset()
        mark = "@@evaluated-" + secrets.token_hex(4)
        started = time.monotonic()
        self.evaluate(code)
        self.evaluate(f'"{mark}".postln;', silent=True)
        output = self.wait_for(mark, 30)
        result = SnippetCheck(name, time.monotonic() - started, 0.0, 0, None)
        if before_stop:
            self.evaluate(before_stop, silent=True)
        if runs_seconds is not None:
            result.stopped_after = self._until_back(baseline, started, runs_seconds + margin,
                                                    result)
        else:
            output += self._watch(2.0, baseline, result)
            stop_started = time.monotonic()
            self.evaluate(stop_code, silent=True)
            result.stopped_after = self._until_back(baseline, stop_started, 8.0, result)
        peak_mark = "@@peak-" + secrets.token_hex(4)
        self.evaluate(f'("{peak_mark} " ++ (~knowledgePeak ? 0)).postln;', silent=True)
        output += self.wait_for(peak_mark, 10)
        result.peak = float(output[-1].split()[-1])
        output += self._watch(0.2, baseline, result)
        self.reset()
        result.output = output
        result.errors = [line for line in output if re.search(r"ERROR|FAILURE", line)]
        return result

    def _until_back(self, baseline: int, started: float, timeout: float,
                    result: SnippetCheck, quiet: float = 1.0) -> float | None:
        """Poll /status until synths ran and then stayed at the baseline for ``quiet`` s.

        Return when the count went back for good (seconds from ``started``), or None.
        A gap between two notes is not the end: the count must stay down.
        """
        deadline = started + timeout + quiet
        back_at: float | None = None
        while time.monotonic() < deadline:
            count = self.synths() - baseline
            now = time.monotonic()
            result.playing_synths = max(result.playing_synths, count)
            if count > 0 or result.playing_synths == 0:
                back_at = None
            elif back_at is None:
                back_at = now
            elif now - back_at >= quiet:
                return back_at - started
            time.sleep(0.05)  # the poll interval of a deadline, not a wait for readiness
        return None

    def _watch(self, seconds: float, baseline: int, result: SnippetCheck) -> list[str]:
        """Let the music play for ``seconds``: note the most synths, keep what sclang prints."""
        lines: list[str] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            result.playing_synths = max(result.playing_synths, self.synths() - baseline)
            with contextlib.suppress(queue.Empty):
                lines.append(self._lines.get(timeout=min(left, 0.05)))
        return lines

    def _spawn(self, name: str, argv: list[str], *, env: dict[str, str],
               stdin: int | None = subprocess.DEVNULL,
               stdout: int | None = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, env=env, stdin=stdin, stdout=stdout,
                                stderr=subprocess.STDOUT, cwd=self._work,
                                start_new_session=True)
        self._procs[name] = proc
        return proc

    def _read(self, proc: subprocess.Popen[bytes], prefix: str) -> None:
        """Queue each line the process prints (runs in a reader thread per process)."""
        assert proc.stdout is not None
        for raw in proc.stdout:
            self._lines.put(prefix + raw.decode("utf-8", errors="replace").rstrip("\n"))


def runs_seconds(runs: str) -> float | None:
    """Read "5 s, then stops by itself" as 5.0; None for a snippet that runs until stopped."""
    match = re.match(r"\s*(\d+(?:\.\d+)?)\s*s\b", runs)
    return float(match.group(1)) if match else None
