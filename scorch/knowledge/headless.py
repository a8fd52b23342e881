"""Run one sclang script headless, with no server, no GUI and no user startup file.

sclang runs in its own process group with a private ``XDG_CONFIG_HOME`` and
``XDG_DATA_HOME`` (so a person's ``startup.scd`` does not boot a server in the
middle of a pure computation), dies with the thread that started it on Linux,
and is killed by its group id if it overruns: never by name.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: sclang as root crashes in QtWebEngine without these, even with no window.
HEADLESS_ENV = {
    "QTWEBENGINE_DISABLE_SANDBOX": "1",
    "QT_QPA_PLATFORM": "offscreen",
    "QTWEBENGINE_CHROMIUM_FLAGS": "--single-process",
}

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class SclangRun:
    """What one headless sclang run printed and how it ended."""

    output: str
    returncode: int | None
    """None when it was killed for overrunning its timeout."""
    seconds: float

    @property
    def timed_out(self) -> bool:
        """Say whether the run was killed for overrunning its timeout."""
        return self.returncode is None


def _die_with_parent_hook() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl

    def die_with_parent() -> None:
        # Runs in the child between fork and exec: a foreign call only, no allocation.
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return die_with_parent


# Loaded once, before any fork, so the child only makes the foreign call.
_DIE_WITH_PARENT = _die_with_parent_hook()


def run_sclang(
    script: str,
    *,
    timeout: float = 60.0,
    sclang: str = "sclang",
    data_home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> SclangRun:
    """Run ``script`` (which must end with ``0.exit;``) in a fresh headless sclang.

    ``data_home`` becomes ``XDG_DATA_HOME``: its ``SuperCollider/Extensions``
    is the user extension directory that sclang compiles. Raises OSError when
    sclang cannot be started.
    """
    with tempfile.TemporaryDirectory(prefix="scorch-sclang-") as work_str:
        work = Path(work_str)
        path = work / "script.scd"
        path.write_text(script, encoding="utf-8")
        full_env = {**os.environ, **HEADLESS_ENV, **(env or {})}
        full_env["XDG_CONFIG_HOME"] = str(work / "config")
        full_env["XDG_DATA_HOME"] = str(data_home if data_home is not None else work / "data")
        started = time.monotonic()
        proc = subprocess.Popen(
            [sclang, str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=full_env, cwd=work, start_new_session=True,
            preexec_fn=_DIE_WITH_PARENT,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            code = None
        finally:
            # sclang may leave helpers in its group (a crashed QtWebEngine process).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        return SclangRun(out.decode("utf-8", errors="replace"), code, time.monotonic() - started)


def sc_string(text: str) -> str:
    """Return ``text`` as an sclang string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
