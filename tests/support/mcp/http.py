"""``scorch mcp --http`` as a process, and the MCP SDK's own HTTP client to talk to it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from scorch.config.installation import load_config
from scorch.wire.access import TOKEN_FILE
from tests.support.mcp.stdio import SCORCH

#: Connect and write within seconds; a call may wait for a room to boot.
TIMEOUT = httpx2.Timeout(30.0, read=120.0)


def wait_listening(host: str, port: int, proc: subprocess.Popen[bytes] | None, log: Path,
                   timeout: float = 60.0) -> None:
    """Until a TCP connection to ``host``:``port`` is accepted (``proc`` must not exit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1.0):
            return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {host}:{port}:\n{log.read_text()[-3000:]}")


class HttpServer:
    """``scorch mcp --http HOST:PORT --config CONFIG``, its log in ``log``."""

    def __init__(self, config: Path, host: str, port: int, log: Path) -> None:
        self.host, self.port, self.log = host, port, log
        self.url = f"http://{host}:{port}/mcp"
        self._out = log.open("ab")
        self.proc = subprocess.Popen(
            [*SCORCH, str(config), "--http", f"{host}:{port}"], stdin=subprocess.DEVNULL,
            stdout=self._out, stderr=self._out, start_new_session=True)
        try:
            wait_listening(host, port, self.proc, log)
        except BaseException:
            self.stop()
            raise
        self.token_file = load_config(config).state_path() / TOKEN_FILE
        self.token = self.token_file.read_text().strip()
        """Every request's (made by the server before it listened)."""

    @property
    def bearer(self) -> dict[str, str]:
        """The header that carries the token, for :func:`client` (``**server.bearer``)."""
        return {"authorization": f"Bearer {self.token}"}

    def stop(self) -> int:
        """SIGTERM, wait for the rooms to stop (SIGKILL its group if it does not); its code."""
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait()
        finally:
            self._out.close()


@contextlib.asynccontextmanager
async def client(url: str, mode: str = "auto", **headers: str) -> AsyncIterator[Client]:
    """An initialized ``mcp.Client`` over streamable HTTP, ``headers`` in every request.

    ``mode``: the client's (``legacy``: the initialize handshake and a session).
    """
    async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode) as mcp:
        yield mcp
