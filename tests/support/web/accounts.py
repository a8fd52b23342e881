"""Another account of this machine, made for a test and removed after it: who is not scorch's user.

``useradd`` makes a system account without a home or a login shell; programs run as
it through ``setpriv`` (its uid and gid, no supplementary groups, nothing of root's
left). Needs root, as CI has.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from tests.support.skips import missing


@dataclass(frozen=True)
class Account:
    """A throwaway account: its name, uid and gid."""

    name: str
    uid: int
    gid: int

    def run(self, argv: list[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` as this account (from ``/``, with a bare environment)."""
        return subprocess.run(
            ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
             "--", *argv], cwd="/", env={"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8"},
            capture_output=True, text=True, timeout=timeout, check=False)


@contextlib.contextmanager
def another_account(tag: str) -> Iterator[Account]:
    """A new account for the block (``scorch-<tag>-<pid>``), deleted after it."""
    if os.geteuid() != 0:
        missing("root, to make another account (CI is root)")
    for tool in ("useradd", "userdel", "setpriv"):
        if shutil.which(tool) is None:
            missing(f"{tool} (passwd, util-linux)")
    name = f"scorch-{tag}-{os.getpid()}"[:32]
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    "--user-group", name], check=True, capture_output=True, timeout=30)
    try:
        ids = subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True)
        gid = subprocess.run(["id", "-g", name], capture_output=True, text=True, check=True)
        yield Account(name, int(ids.stdout), int(gid.stdout))
    finally:
        subprocess.run(["userdel", name], capture_output=True, timeout=30, check=False)
