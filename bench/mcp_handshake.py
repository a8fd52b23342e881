"""Spawn of ``scorch mcp`` to its ``initialize`` and ``tools/list`` answers, cold and warm.

Cold: a fresh handshake cache (``XDG_CACHE_HOME``), as on the first start after
an install (the answers shipped with scorch, ``mcp_server/handshake.json``);
warm: the cache an earlier start filled. Each start is a new process; the
answers are read from its stdout as Claude Desktop would, and the process is
ended by closing its stdin.
``python -m bench.mcp_handshake [runs] [--venv DIR]``: with ``--venv``, ``DIR/bin/scorch``
of a virtualenv where scorch was installed from a built wheel (not this checkout)
is spawned from an empty folder, as Claude Desktop spawns it after an install.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scorch", "mcp_server", "actors", "midi")


def config(folder: Path) -> Path:
    """A config with a mistake: ``scorch mcp`` stays up and boots nothing.

    The handshake is answered before the config is read, so what follows it does
    not change these figures; a hosted room would only make each start wait for
    its boot and stop when the session ends.
    """
    path = folder / "config.toml"
    path.write_text('[instances.room]\nnot_a_key = 1\n')
    return path


def start(config: Path, cache: Path, compiled: bool = True,
          venv: Path | None = None) -> tuple[float, float]:
    """Seconds from spawn to the initialize answer and to the tools/list answer.

    Not ``compiled``: scorch's own compiled modules are removed first, as in a
    fresh virtualenv (pip compiles the libraries it installs, not an editable tree).
    """
    trees = [ROOT] if venv is None else list(venv.glob("lib/python*/site-packages"))
    if not compiled:
        for tree in trees:
            for package in PACKAGES:
                for folder in (tree / package).rglob("__pycache__"):
                    shutil.rmtree(folder, ignore_errors=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    if venv is None:
        env["PYTHONPATH"] = str(ROOT)
        argv = [sys.executable, "-m", "scorch.cli.main"]
    else:
        env.pop("PYTHONPATH", None)
        argv = [str(venv / "bin" / "scorch")]
    spawned = time.perf_counter()
    proc = subprocess.Popen([*argv, "mcp", "--config", str(config)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            cwd=config.parent)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n"
                              for m in (INITIALIZE, INITIALIZED, TOOLS)))
    proc.stdin.flush()
    when: dict[int, float] = {}
    buffer = b""
    fd = proc.stdout.fileno()
    while len(when) < 2:
        ready, _, _ = select.select([fd], [], [], 60.0)
        assert ready, "no answer within 60 s"
        chunk = os.read(fd, 1 << 20)
        assert chunk, "scorch mcp ended before it answered"
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            when.setdefault(json.loads(line).get("id"), time.perf_counter() - spawned)
    proc.stdin.close()
    proc.wait(timeout=60)
    return when[1], when[2]


def summary(values: list[float]) -> str:
    return (f"median {statistics.median(values) * 1000:.0f} ms, "
            f"max {max(values) * 1000:.0f} ms")


def main() -> None:
    args = sys.argv[1:]
    venv = None
    if "--venv" in args:
        at = args.index("--venv")
        venv = Path(args[at + 1]).resolve()
        del args[at:at + 2]
    runs = int(args[0]) if args else 10
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = config(folder)
        fresh = [start(path, folder / f"fresh-{n}", compiled=False, venv=venv)
                 for n in range(runs)]
        cold = [start(path, folder / f"cold-{n}", venv=venv) for n in range(runs)]
        start(path, folder / "warm", venv=venv)  # fills the cache
        warm = [start(path, folder / "warm", venv=venv) for _ in range(runs)]
    print(f"scorch from {venv or ROOT}")
    for label, figures in (("cold, fresh tree (no .pyc)", fresh), ("cold", cold), ("warm", warm)):
        print(f"{label} ({runs} runs): spawn->initialize {summary([a for a, _ in figures])}; "
              f"spawn->tools/list {summary([b for _, b in figures])}")


if __name__ == "__main__":
    main()
