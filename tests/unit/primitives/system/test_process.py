"""Child processes: exits reported at once, stop escalation, sclang dying at start."""

from __future__ import annotations

import stat
import sys
import time
from pathlib import Path

import pytest

from scorch.errors import BootError
from scorch.primitives.sclang.interpreter import Sclang
from scorch.primitives.system import process
from scorch.primitives.system.console import Console
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


def test_a_batched_reader_takes_a_flood_at_most_once_a_batch_and_misses_no_line() -> None:
    # 100 lines 10 ms apart: read as they come, about 100 reads; gathered, at most one
    # read per 0.2 s of the flood (plus the first), however slowly the child prints.
    reads: list[tuple[float, bytes]] = []

    def handler(chunk: bytes) -> list[str]:
        reads.append((time.monotonic(), chunk))
        return []

    proc = ManagedProcess(
        "flood", [sys.executable, "-u", "-c",
                  "import time\nfor i in range(100):\n print(i)\n time.sleep(0.01)"],
        Console(), on_output=handler, batch=0.2)
    proc.start()
    assert proc.exited.wait(60)
    assert proc._reader is not None
    proc._reader.join(5)
    assert b"".join(chunk for _, chunk in reads).split() == [str(i).encode() for i in range(100)]
    span = reads[-1][0] - reads[0][0]
    assert len(reads) <= span / 0.2 + 3, (len(reads), span)


def test_a_batched_reader_hands_each_line_on_before_it_waits_for_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console()
    seen_at_sleep: list[list[str]] = []
    monkeypatch.setattr(process.time, "sleep",
                        lambda _s: seen_at_sleep.append([line.text for line in console.tail(9)]))
    proc = ManagedProcess("quiet", ["unused"], console, batch=60.0)
    chunks = iter([b"first\n", b"second\n", b""])
    read = lambda self, n: next(chunks)  # noqa: E731
    stream = type("Stream", (), {"read1": read, "read": read})()
    proc._pump(stream, process.LineSplitter())
    # The second line came within the batch: the reader waited, with the line handed on.
    assert seen_at_sleep == [["first", "second"]]
