"""``scorch service install``: a systemd unit that runs ``scorch run`` for months.

``Type=notify``: systemd waits for scorch's READY=1 (every room READY or given
up); ``WatchdogSec=``: systemd restarts scorch if its own loop stops saying it
is alive; ``Restart=on-failure``; ``ExecReload=`` sends SIGHUP, which re-reads
the config. Logs go to the journal (``journalctl -u scorch``).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import platformdirs

from scorch import bundled

#: Seconds systemd waits for WATCHDOG=1 before it restarts scorch (sent every half of it).
WATCHDOG_SEC = 30
#: Seconds a start may take: every room booted or given up, with retries.
START_TIMEOUT_SEC = 180


def unit_text(scorch: Path, config: Path, user: bool, host: str | None = None,
              resume: bool = False) -> str:
    """The unit file for ``scorch run --config CONFIG`` (``--host HOST``: that host's rooms).

    ``resume``: every start (after a crash, a power cut, a restart) comes back from
    the last autosave: what was played, loaded and mapped at run time is kept.
    """
    argv = [str(scorch), "run", "--config", str(config)]
    if host is not None:
        argv += ["--host", host]
    if resume:
        argv.append("--resume")
    command = shlex.join(argv)
    rooms = f"host {host}'s rooms" if host is not None else "rooms"
    lines = [
        "[Unit]",
        f"Description=scorch: SuperCollider {rooms} of {config}",
        "Documentation=file://" + str(bundled.docs() / "operations.md"),
        # Several hosts: chrony's clock first, so timed bundles start together.
        "After=network-online.target sound.target time-sync.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"ExecStart={command}",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "RestartSec=2",
        f"WatchdogSec={WATCHDOG_SEC}",
        f"TimeoutStartSec={START_TIMEOUT_SEC}",
        "TimeoutStopSec=60",
        "KillMode=mixed",
        f"WorkingDirectory={config.parent}",
        "Environment=PYTHONUNBUFFERED=1",
        "LimitNOFILE=65536",
    ]
    if not user:
        lines.append(f"User={_user()}")
    lines += ["", "[Install]", f"WantedBy={'default.target' if user else 'multi-user.target'}",
              ""]
    return "\n".join(lines)


def unit_path(user: bool, name: str = "scorch") -> Path:
    """Where the unit goes: the user's systemd folder, or the system's."""
    if user:
        return platformdirs.user_config_path("systemd") / "user" / f"{name}.service"
    return Path("/etc/systemd/system") / f"{name}.service"


def scorch_executable() -> Path:
    """The ``scorch`` console script of this Python (the virtualenv's)."""
    return Path(sys.executable).parent / "scorch"


def next_steps(path: Path, user: bool, name: str = "scorch") -> str:
    """What to type after the unit is written."""
    ctl = "systemctl --user" if user else "sudo systemctl"
    journal = "journalctl --user" if user else "journalctl"
    steps = [f"wrote {path}", f"  {ctl} daemon-reload", f"  {ctl} enable --now {name}",
             f"  {ctl} status {name}        # rooms ready, restarts", f"  {journal} -u {name} -f"
             "     # the log", f"  {ctl} reload {name}        # re-read the config"]
    if user:
        steps.append(f"  loginctl enable-linger {_user()}   # start at boot, without a login")
    return "\n".join(steps)


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name
