"""``scorch mcp``: serve the tools over stdio, hosting the orchestra or attaching to one.

When a ``scorch run`` of the same config answers on its control socket, the
server attaches to it and never boots a process; otherwise it hosts an
Orchestra for the session: started in the lifespan, stopped when the client
closes stdin or the process gets SIGTERM, SIGINT or SIGHUP.

A config with mistakes does not end the session: every tool says them, located,
until the file loads (``mcp_server.config_gate``), and then the installation starts.

Only the protocol reaches stdout (``mcp_server.stdio``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from mcp_server.config_gate import ConfigGate
from mcp_server.early import EarlyFront
from mcp_server.instructions import instructions
from mcp_server.stdio import protocol_streams
from mcp_server.tools import PANEL_URI, choose, tools
from scorch.api import LocalService, RemoteService, Service
from scorch.config import Config, key_lines, load_config, located
from scorch.config import tools as tool_profiles
from scorch.errors import ConfigError
from scorch.wire import find_running

if TYPE_CHECKING:
    from scorch.app import Orchestra
    from scorch.primitives.sclang import EarlySclang

log = logging.getLogger(__name__)

Lifespan = Callable[[MCPServer[Any]], contextlib.AbstractAsyncContextManager[Any]]


def build_server(service: Service, lifespan: Lifespan | None = None,
                 listed: Sequence[str] | None = None) -> MCPServer[Any]:
    """The MCP server with scorch's tools (those ``listed``, else all) and the workflow
    instructions for them."""
    made = tools(service, listed)
    server: MCPServer[Any] = MCPServer(
        name="scorch", instructions=instructions([tool.name for tool in made]),
        lifespan=lifespan, log_level="WARNING", tools=made, extensions=[panel()])
    return server


def panel() -> Apps:
    """The MCP Apps extension with the panel ``status`` and ``listen`` show (``panel.html``)."""
    apps = Apps()
    html = resources.files("mcp_server").joinpath("panel.html").read_text()
    apps.add_html_resource(PANEL_URI, html, name="scorch panel", title="scorch: the rooms live",
                           description="Every room's state, levels and named nodes' faders",
                           prefers_border=True)
    return apps


def hosting_lifespan(service: LocalService, config: Config,
                     early: Mapping[str, EarlySclang] | None = None) -> Lifespan:
    """A lifespan that starts an Orchestra for ``service`` and always stops it.

    ``early``: the rooms' first sclangs, started before the server was built.
    """

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        from scorch.app import Orchestra

        # Rooms boot in the background: Claude's initialize is answered at once, and a
        # call that needs a room still booting waits for it (list_instances: BOOTING).
        orchestra = Orchestra(config, hosted_by="scorch mcp")
        orchestra.announce_start()  # before any call can find the orchestra
        service.orchestra = orchestra
        starter = threading.Thread(target=_start, args=(orchestra, service, early),
                                   name="orchestra-start", daemon=True)
        starter.start()
        try:
            yield
        finally:
            service.orchestra = None
            service.unavailable = "scorch is shutting down"
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(starter.join)
                await anyio.to_thread.run_sync(orchestra.stop)
            log.info("orchestra stopped; no process left")

    return lifespan


def _start(orchestra: Orchestra, service: LocalService,
           early: Mapping[str, EarlySclang] | None = None) -> None:
    """Boot the rooms (a background thread of the hosting lifespan)."""
    try:
        errors = orchestra.start(early=early)
    except Exception as err:
        log.exception("scorch could not start")
        # The orchestra stays for what needs only its config: the doctor, wanted most now.
        service.unavailable = f"scorch could not start: {err}; fix it and restart the server"
        return
    for name, error in errors.items():
        if error:
            log.error("room %r failed to boot: %s", name, error)
    orchestra.sessions.start_autosave()
    from scorch.api import Firing
    from scorch.api.ops import load_all

    orchestra.hours.start(Firing(orchestra, load_all))  # a wrong call: the hours off, saying why
    log.info("scorch mcp pid %d: hosting %s: %s", os.getpid(), orchestra.config.source,
             ", ".join(orchestra.rooms.names()))


def serve(config_path: Path, front: EarlyFront, early: Mapping[str, EarlySclang] | None = None,
          config: Config | None = None, option: str | None = None) -> None:
    """Serve MCP on stdio for the installation of ``config_path`` until the client goes.

    ``front`` took the protocol's streams when the process started and may have
    answered the handshake already (``mcp_server.early``). ``early``: the rooms'
    first sclangs, started while the SDK loaded (:func:`mcp_server.config_gate.hosted_here`);
    ``config``: the file as it loaded then (else it is loaded here); ``option``: the tools
    ``--tools`` asks for (else the config's ``[mcp] tools``).
    """
    early = early or {}
    server, close = server_for(config_path, early, config, option)
    try:
        with protocol_streams(front) as (stdin, stdout):
            anyio.run(_run, server, stdin, stdout)
    finally:
        close()
        for process in early.values():  # the server hosted no room after all
            process.discard()


def server_for(config_path: Path, early: Mapping[str, EarlySclang] | None = None,
               config: Config | None = None, option: str | None = None,
               ) -> tuple[MCPServer[Any], Callable[[], None]]:
    """The MCP server for the installation of ``config_path``, and what ends it after serving.

    Whatever the transport (stdio, HTTP): a config with mistakes gives a server
    whose tools say them until the file is fixed (``mcp_server.config_gate``); a
    config with ``[hosts]`` a coordinator over every host's ``scorch run``,
    watching them while the server lasts (it never runs a room itself); else
    the running ``scorch run`` of the config if one answers, or rooms hosted here
    for the server's life (its lifespan). It lists the tools ``option`` (``--tools``)
    asks for, else those of the config's ``[mcp] tools``; a choice with mistakes is one
    of the config's (with a broken file, the choice as written, if it holds, else all).
    """

    def read(path: Path) -> Config:
        loaded = load_config(path)
        listed_for(loaded, option)  # a wrong choice of tools is a mistake of the file
        return loaded

    try:
        config = config or load_config(config_path)
        listed = listed_for(config, option)
    except ConfigError as err:
        log.error("%s has mistakes; every tool says them until the file is fixed:\n%s",
                  config_path, err)
        gate = ConfigGate(config_path, err, open_service, read).start()
        return build_server(gate, closing(gate.close), as_written(config_path, option)), _nothing
    if config.hosts:
        from scorch.api import Coordinator

        coordinator = Coordinator(config, watch=True)
        log.info("scorch mcp pid %d: coordinating hosts %s", os.getpid(),
                 ", ".join(link.label for link in coordinator.links.values()))
        return build_server(coordinator, listed=listed), coordinator.close
    running = find_running(config.state_path())
    if running is not None:
        log.info("scorch mcp pid %d: attaching to the running installation at %s",
                 os.getpid(), running)
        return build_server(RemoteService(running), listed=listed), _nothing
    local = LocalService()
    return build_server(local, hosting_lifespan(local, config, early), listed), _nothing


def listed_for(config: Config, option: str | None = None) -> list[str]:
    """The tools ``--tools`` (``option``) or else the config's ``[mcp] tools`` choose;
    ConfigError, located, when the choice is wrong."""
    if option is not None:
        return choose(tool_profiles.from_option(option), "scorch mcp --tools")
    source = config.source or Path("config.toml")
    try:
        text = source.read_text(encoding="utf-8")
    except OSError:
        text = ""
    return choose(config.mcp.tools, f"{located(source, key_lines(text), ('mcp', 'tools'))}: "
                                    "mcp.tools")


def as_written(config_path: Path, option: str | None = None) -> list[str] | None:
    """The tools a file that does not load asks for, when that choice holds (else all)."""
    try:
        return choose(tool_profiles.requested(config_path, option), "the choice of tools")
    except ConfigError:
        return None


def _nothing() -> None:
    """Nothing to end: the server's lifespan ended what it started."""


def open_service(config: Config) -> tuple[Service, Callable[[], None]]:
    """The service for a config that loaded only after the session began, and its end.

    The same choice as at a start with a good file: a coordinator over the hosts,
    a running ``scorch run`` to attach to, else rooms hosted here (booting in the
    background).
    """
    if config.hosts:
        from scorch.api import Coordinator

        coordinator = Coordinator(config, watch=True)
        return coordinator, coordinator.close
    running = find_running(config.state_path())
    if running is not None:
        log.info("attaching to the running installation at %s", running)
        return RemoteService(running), lambda: None
    from scorch.app import Orchestra

    local = LocalService()
    orchestra = Orchestra(config, hosted_by="scorch mcp")
    local.orchestra = orchestra
    starter = threading.Thread(target=_start, args=(orchestra, local), name="orchestra-start",
                               daemon=True)
    starter.start()

    def close() -> None:
        local.orchestra = None
        local.unavailable = "scorch is shutting down"
        starter.join()
        orchestra.stop()
        log.info("orchestra stopped; no process left")

    return local, close


def closing(close: Callable[[], None]) -> Lifespan:
    """A lifespan that calls ``close`` (in a worker thread) when the session ends."""

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(close)

    return lifespan


async def _run(server: MCPServer[Any], stdin: Any, stdout: Any) -> None:
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
    stdin itself (``mcp_server.stdio``) and so needs the server's ``run(read, write)``,
    for which the SDK has no public accessor. This is the one place that reaches in.
    """
    return server._lowlevel_server


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            log.info("%s: stopping", signal.Signals(signum).name)
            scope.cancel()
            return
