"""A scorch mcp process spoken to over its stdio line by line, as Claude Desktop does."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from mcp_server.early import SNAPSHOT_ENV

#: ``scorch mcp --config`` from this checkout's interpreter.
SCORCH = [sys.executable, "-m", "scorch.cli.main", "mcp", "--config"]

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


class Session:
    """``scorch mcp`` over raw pipes: lines in, lines out, stderr kept."""

    def __init__(self, config: Path, cache: Path, snapshot: str | None = "",
                 args: tuple[str, ...] = ()) -> None:
        """``snapshot``: where the shipped handshake is read ("": none; None: the shipped one);
        ``args``: more of ``scorch mcp``'s options."""
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        env.pop(SNAPSHOT_ENV, None)
        if snapshot is not None:
            env[SNAPSHOT_ENV] = snapshot
        self.proc = subprocess.Popen(
            [*SCORCH, str(config), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, env=env)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def answers(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        out = []
        while len(out) < count:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
                out.append(json.loads(line))
            except queue.Empty:
                raise AssertionError(f"only {len(out)} of {count} answers came") from None
        return out

    def nothing_more(self, within: float) -> bool:
        try:
            self.lines.get(timeout=within)
        except queue.Empty:
            return True
        return False

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.stderr.read().decode()


def one_room_config(folder: Path, jack: str) -> Path:
    """A config of one headless room, MIDI off, docs built on demand, in ``folder``."""
    path = folder / "config.toml"
    path.write_text(textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack}"
        [midi]
        enabled = false
        [docs]
        build = "on-demand"
        [instances.room]
        """))
    return path
