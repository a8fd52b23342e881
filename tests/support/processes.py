"""Processes as /proc shows them (the tests that check what scorch leaves running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


SCORCH = str(Path(sys.executable).parent / "scorch")


def pids_using(jack: str) -> list[int]:
    """Processes whose command line or environment names this test's JACK server."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            blob = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if jack.encode() in blob and state != "Z":
            found.append(int(entry.name))
    return found


def terminate(proc: subprocess.Popen[Any], timeout: float = 40.0) -> int:
    """SIGTERM, as systemd stops a service; its process group SIGKILLed if it outlives
    ``timeout``. Its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def sclangs_started_before_jackd(pid: int) -> tuple[int, int]:
    """How many of ``pid``'s children are sclangs, and how many of those started before its
    jackd did: rooms that took the sclang started while scorch imported its modules."""
    import psutil

    kids = psutil.Process(pid).children()
    jackd = min(p.create_time() for p in kids if p.name() == "jackd")
    sclangs = [p.create_time() for p in kids if p.name() == "sclang"]
    return len(sclangs), sum(started < jackd for started in sclangs)
