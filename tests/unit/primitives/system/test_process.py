"""Child processes: exits reported at once, stop escalation, sclang dying at start."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from scorch.errors import BootError
from scorch.primitives.console import Console
from scorch.primitives.sclang.interpreter import Sclang
from scorch.primitives.system.process import ManagedProcess, pid_alive


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake"
    path.write_text(f"#!{sys.executable}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_an_exit_is_reported_with_its_code_and_written_to_the_console(tmp_path: Path) -> None:
    console = Console()
    codes: list[int] = []
    proc = ManagedProcess("fake", [script(tmp_path, "print('hello'); raise SystemExit(3)")],
                          console, on_exit=lambda p, code: codes.append(code))
    proc.start()
    assert proc.exited.wait(10)
    lines = [line.text for line in console.tail(5)]
    assert lines == ["hello", "[scorch] fake exited (exit code 3)"]
    assert codes == [3] and proc.describe_exit() == "exit code 3"


def test_stop_escalates_to_sigkill_for_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    body = ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('ready', flush=True)\ntime.sleep(60)")
    console = Console()
    proc = ManagedProcess("stubborn", [script(tmp_path, body)], console)
    proc.start()
    assert console.wait_for("ready", 10) is not None
    pid = proc.pid
    proc.stop(grace=0.3)
    assert proc.describe_exit() == "killed by SIGKILL"
    assert not pid_alive(pid)


def test_sclang_that_dies_while_starting_is_a_boot_error_with_its_output(tmp_path: Path) -> None:
    fake = script(tmp_path, "print('ERROR: class library broken'); raise SystemExit(1)")
    with pytest.raises(BootError) as caught:
        Sclang.start(name="lobby", lang_port=1, server_port=2, console=Console(),
                     on_exit=lambda p, c: None, timeout=10, binary=fake)
    message = str(caught.value)
    assert "sclang exited while starting (exit code 1)" in message
    assert "ERROR: class library broken" in message


def test_a_batched_reader_takes_a_flood_in_a_few_reads_and_misses_no_line() -> None:
    # 100 lines 10 ms apart: read as they come, that is about 100 reads; gathered for
    # 0.2 s at a time while they flood, about 6.
    reads: list[bytes] = []

    def handler(chunk: bytes) -> list[str]:
        reads.append(chunk)
        return []

    proc = ManagedProcess(
        "flood", [sys.executable, "-u", "-c",
                  "import time\nfor i in range(100):\n print(i)\n time.sleep(0.01)"],
        Console(), on_output=handler, batch=0.2)
    proc.start()
    assert proc.exited.wait(30)
    assert proc._reader is not None
    proc._reader.join(5)
    assert b"".join(reads).split() == [str(i).encode() for i in range(100)]
    assert len(reads) < 30, len(reads)


def test_a_batched_reader_hands_each_line_on_before_it_waits_for_more() -> None:
    # The second line comes 0.3 s after the first, within the batch: the reader then
    # waits 2 s for more, but only after the console has the line.
    console = Console()
    proc = ManagedProcess(
        "quiet", [sys.executable, "-u", "-c",
                  "import time\nprint('first')\ntime.sleep(0.3)\nprint('second')"],
        console, batch=2.0)
    proc.start()
    assert console.wait_for("first", 30, since=0) is not None
    assert console.wait_for("second", 1.2, since=0) is not None
    assert proc.exited.wait(10)  # and the exit after the wait
