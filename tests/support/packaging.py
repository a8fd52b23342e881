"""scorch as people install it: the built wheel, a uv tool environment, the MCP Bundle.

Everything runs outside the checkout: the environment a command gets names
no PYTHONPATH and no virtualenv of the tests, and its HOME and XDG folders are
the test's own, so nothing of this machine's user is read or written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The mcpb CLI, installed under the checkout (never globally) by `make` or here.
MCPB = ROOT / "build" / "mcpb" / "node_modules" / ".bin" / "mcpb"
#: The version the Makefile installs (MCPB_PACKAGE there).
MCPB_PACKAGE = "@anthropic-ai/mcpb@^2.1"
#: uv, a dev dependency: it installs the wheel as `uv tool install` does for people.
UV = Path(sys.executable).parent / "uv"
#: The system's own folders of commands (jackd, scsynth, sclang, sh), on every PATH here.
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


def build_dist(out: Path) -> Path:
    """``python -m build`` (sdist, then the wheel from it) into ``out``; return the wheel."""
    # --no-isolation: the backend is a dev dependency, not downloaded again for each build.
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "-o", str(out), str(ROOT)],
                   check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    (wheel,) = out.glob("scorch-*.whl")
    return wheel


def mcpb() -> Path:
    """The mcpb CLI (``npm install --prefix build/mcpb`` when `make` did not install it)."""
    if not MCPB.exists():
        npm = shutil.which("npm")
        assert npm, "npm is missing: `make test` installs nodejs and npm"
        subprocess.run([npm, "install", "--prefix", str(MCPB.parents[2]), "--no-audit",
                        "--no-fund", MCPB_PACKAGE], check=True, timeout=300,
                       stdout=subprocess.DEVNULL)
    return MCPB


def outside(home: Path) -> dict[str, str]:
    """An environment with nothing of the checkout: HOME and XDG folders under ``home``.

    The caches stay the user's (uv's, scorch's compiled SynthDefs, Python's bytecode:
    each keyed by what it was made from): a second install copies from them, a room
    boots without compiling what an earlier run compiled already.
    """
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "JACK_DEFAULT_SERVER",
                          "PYTHONDONTWRITEBYTECODE")
           and not key.startswith("XDG_")}
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    env["PYTHONPYCACHEPREFIX"] = str(Path(env["XDG_CACHE_HOME"]) / "scorch-tests" / "pycache")
    for name, sub in (("HOME", ""), ("XDG_CONFIG_HOME", ".config"),
                      ("XDG_STATE_HOME", ".local/state"), ("XDG_DATA_HOME", ".local/share")):
        env[name] = str(home / sub)
    (home / ".config").mkdir(parents=True, exist_ok=True)
    # uv alone: the folder it lives in (the checkout's .venv/bin) holds the checkout's own
    # scorch and python too, which a command of this environment must never reach.
    alone = home / ".uv-alone"
    alone.mkdir(exist_ok=True)
    if not (alone / "uv").is_symlink():
        (alone / "uv").symlink_to(UV)
    env["PATH"] = os.pathsep.join([str(alone), *SYSTEM_PATH])
    return env


def fixed_folder(name: str) -> Path:
    """An empty temporary folder whose path is the same run after run (this user, this tag).

    Python's bytecode of a fresh environment goes to the user's cache
    (``PYTHONPYCACHEPREFIX``, keyed by the source's path and mtime): at a path that
    does not change, the next run's fresh environment imports without compiling
    numpy, scipy, matplotlib and the MCP SDK again.
    """
    tag = os.environ.get("SCORCH_TEST_JACK", "scorch-test")
    folder = Path(tempfile.gettempdir()) / f"scorch-{os.getuid()}-{tag}-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def base_python() -> str:
    """The Python the tests' virtualenv was made from (uv makes a new one from it)."""
    return str(Path(getattr(sys, "_base_executable", sys.executable)).resolve())


def headless(config: Path, jack: str, state: Path) -> None:
    """Make a starter config play on the test's own headless JACK server, MIDI off."""
    text = config.read_text(encoding="utf-8")
    assert 'driver = "auto"' in text, text
    text = text.replace('driver = "auto"', f'driver = "dummy"\njack_server = "{jack}"', 1)
    config.write_text(f'state_dir = "{state}"\n{text}\n[midi]\nenabled = false\n'
                      '[docs]\nbuild = "on-demand"\n', encoding="utf-8")
