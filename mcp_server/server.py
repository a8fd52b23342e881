"""``scorch mcp``: serve the tools over stdio, hosting the orchestra or attaching to one.

When a ``scorch run`` of the same config answers on its control socket, the
server attaches to it and never boots a process; otherwise it hosts an
Orchestra for the session: started in the lifespan, stopped when the client
closes stdin or the process gets SIGTERM, SIGINT or SIGHUP.

Only the protocol reaches stdout: file descriptor 1 points at stderr for the
whole run (children, stray prints, C libraries), and the protocol writes to a
private duplicate of the real stdout.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from mcp_server.instructions import INSTRUCTIONS
from mcp_server.tools import register
from scorch.config import Config, load_config
from scorch.service.api import Service
from scorch.service.local import LocalService
from scorch.service.remote import RemoteService
from scorch.service.wire import find_running

log = logging.getLogger(__name__)

Lifespan = Callable[[MCPServer[Any]], contextlib.AbstractAsyncContextManager[Any]]


def build_server(service: Service, lifespan: Lifespan | None = None) -> MCPServer[Any]:
    """The MCP server with every scorch tool and the workflow instructions."""
    server: MCPServer[Any] = MCPServer(
        name="scorch", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING")
    register(server, service)
    return server


def hosting_lifespan(service: LocalService, config: Config) -> Lifespan:
    """A lifespan that starts an Orchestra for ``service`` and always stops it."""

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        from scorch.service.orchestra import Orchestra

        orchestra = Orchestra(config, hosted_by="scorch mcp")
        try:
            errors = await anyio.to_thread.run_sync(orchestra.start)
        except Exception as err:
            log.exception("scorch could not start")
            service.unavailable = f"scorch could not start: {err}; fix it and restart the server"
        else:
            for name, error in errors.items():
                if error:
                    log.error("instance %r failed to boot: %s", name, error)
            service.orchestra = orchestra
            log.info("scorch mcp pid %d: hosting %s: %s", os.getpid(), config.source,
                     ", ".join(orchestra.names()))
        try:
            yield
        finally:
            service.orchestra = None
            service.unavailable = "scorch is shutting down"
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(orchestra.stop)
            log.info("orchestra stopped; no process left")

    return lifespan


def serve(config_path: Path) -> None:
    """Serve MCP on stdio for the installation of ``config_path`` until the client goes."""
    config = load_config(config_path)
    running = find_running(config.state_path())
    if running is not None:
        log.info("scorch mcp pid %d: attaching to the running installation at %s",
                 os.getpid(), running)
        server = build_server(RemoteService(running))
    else:
        local = LocalService()
        server = build_server(local, hosting_lifespan(local, config))
    with _protocol_streams() as (stdin, stdout):
        anyio.run(_run, server, stdin, stdout)


async def _run(server: MCPServer[Any], stdin: _PipeLines, stdout: Any) -> None:
    """Serve until the client closes stdin or a signal asks to stop."""
    lowlevel = _lowlevel(server)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_stop_on_signal, tasks.cancel_scope)
        async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):  # type: ignore[arg-type]
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        tasks.cancel_scope.cancel()


def _lowlevel(server: MCPServer[Any]) -> Any:
    """The SDK's low-level server, which alone runs on streams other than the process's own.

    ``MCPServer.run_stdio_async`` always reads fd 0 in a worker thread, which a
    signal cannot interrupt, and offers no hook for malformed lines; scorch reads
    stdin itself (:class:`_PipeLines`) and so needs the server's ``run(read, write)``,
    for which the SDK has no public accessor. This is the one place that reaches in.
    """
    return server._lowlevel_server


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            log.info("%s: stopping", signal.Signals(signum).name)
            scope.cancel()
            return


class _PipeLines:
    """Lines of text from a file descriptor, read without a thread so a cancel ends it.

    (A thread blocked in ``read()`` would hold shutdown until the client writes again.)
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False
        os.set_blocking(fd, False)

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        while b"\n" not in self._buffer:
            if self._eof:
                if not self._buffer:
                    raise StopAsyncIteration
                line, self._buffer = self._buffer, b""
                return line.decode("utf-8", errors="replace")
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            except OSError as err:
                if err.errno != errno.EBADF:
                    log.warning("reading stdin failed: %s", err)
                chunk = b""
            if not chunk:
                self._eof = True
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace") + "\n"


class _Writer:
    """The async text writer stdio_server expects, on the private stdout duplicate."""

    def __init__(self, fd: int) -> None:
        self._file = open(fd, "w", encoding="utf-8", closefd=False)  # noqa: SIM115

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._file.write, text)

    async def flush(self) -> None:
        await anyio.to_thread.run_sync(self._file.flush)


@contextlib.contextmanager
def _protocol_streams() -> Any:
    """Move the protocol to private fds; point fd 0 at /dev/null and fd 1 at stderr."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    os.set_inheritable(wire_in, False)
    os.set_inheritable(wire_out, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        readable = stat.S_ISFIFO(os.fstat(wire_in).st_mode) or stat.S_ISSOCK(
            os.fstat(wire_in).st_mode)
        stdin: Any = _PipeLines(wire_in) if readable else anyio.wrap_file(
            open(wire_in, encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115
        yield stdin, _Writer(wire_out)
    finally:
        os.set_blocking(wire_in, True)
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
