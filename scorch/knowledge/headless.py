"""Run one sclang script headless, with no server, no GUI and no user startup file.

sclang is started by :func:`scorch.primitives.system.process.spawn` (its own process
group, dying with the thread that started it, no systemd variables) with
sclang's headless environment and a private ``XDG_CONFIG_HOME``, so a person's
``startup.scd`` does not boot a server in the middle of a pure computation. The
class library is the one the rooms compile, but for scorch's own classes: ``-l``
names an ``sclang_conf.yaml`` with the person's include and exclude paths (quarks
among them), and ``XDG_DATA_HOME`` stays the person's, so their ``Extensions``
folder is compiled too. scorch's classes stay out because a room's sclang refuses
``0.exit``, which ends every script here. A run that overruns is killed by its
group id, never by name.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from scorch.primitives.sclang import SCLANG_ENV, class_library_conf
from scorch.primitives.system import spawn


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


def run_sclang(
    script: str,
    *,
    timeout: float = 60.0,
    sclang: str = "sclang",
    data_home: Path | None = None,
    library_conf: Path | None = None,
) -> SclangRun:
    """Run ``script`` (which must end with ``0.exit;``) in a fresh headless sclang.

    ``data_home`` becomes ``XDG_DATA_HOME`` (default: the person's own): its
    ``SuperCollider/Extensions`` is the user extension directory sclang compiles.
    ``library_conf`` is the ``sclang_conf.yaml`` given with ``-l`` (default:
    ``class_library_conf`` without scorch's classes). Call it from a thread that
    outlives the run. Raises OSError when sclang cannot be started.
    """
    conf = library_conf if library_conf is not None else class_library_conf(
        scorch_classes=False)
    with tempfile.TemporaryDirectory(prefix="scorch-sclang-") as work_str:
        work = Path(work_str)
        path = work / "script.scd"
        path.write_text(script, encoding="utf-8")
        env = {**SCLANG_ENV, "XDG_CONFIG_HOME": str(work / "config")}
        if data_home is not None:
            env["XDG_DATA_HOME"] = str(data_home)
        started = time.monotonic()
        proc = spawn([sclang, "-l", str(conf), str(path)], env=env, cwd=work)
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
