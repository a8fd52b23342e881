"""The page's server: uvicorn in a thread of ``scorch run``, started and stopped with it."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from scorch.errors import BootError
from scorch.web.app import make_app
from scorch.web.feed import Feed
from scorch.web.gate import Gate
from scorch.wire import READONLY_TOKEN_FILE, TOKEN_FILE, Access, load_token

if TYPE_CHECKING:
    import uvicorn

    from scorch.api import LocalService
    from scorch.app import Orchestra

log = logging.getLogger(__name__)

#: Seconds the server may take to listen before ``scorch run`` says why not.
START_TIMEOUT = 10.0


class WebServer:
    """The technician's page on ``host``:``port``, in its own thread."""

    def __init__(self, service: LocalService, orch: Orchestra, host: str, port: int,
                 state_dir: Path, meter_hz: float, open_loopback: bool = False) -> None:
        self.host = host
        self.port = port
        self.state_dir = state_dir
        self.gate = Gate(Access.for_listener(host, port, state_dir, open_loopback),
                         load_token(state_dir, READONLY_TOKEN_FILE))
        self.feed = Feed(service, orch)
        self.app = make_app(self.feed, self.gate, meter_hz)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where a browser opens it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def how_to_open(self, show_tokens: bool) -> str:
        """Where the page is and how to open it: with its tokens (``show_tokens``, a person
        at a terminal) or with where they are kept (a log that may go to a journal)."""
        if self.gate.access.token is None:
            return (f"the technician's page: {self.url} (open to every account of this "
                    "machine: [web] open_loopback = true)")
        if show_tokens:
            return (f"the technician's page: {self.url}?token={self.gate.access.token} "
                    f"(read-only: {self.url}?token={self.gate.readonly_token})")
        return (f"the technician's page: {self.url}; open it once as {self.url}?token=TOKEN, "
                f"TOKEN from {self.state_dir / TOKEN_FILE} (read-only: "
                f"{self.state_dir / READONLY_TOKEN_FILE})")

    def start(self) -> None:
        """Listen, or raise :class:`BootError` saying why not."""
        import uvicorn

        config = uvicorn.Config(self.app, host=self.host, port=self.port, log_level="warning",
                                access_log=False, lifespan="off", timeout_graceful_shutdown=1)
        server = self._server = uvicorn.Server(config)
        failed: list[BaseException] = []

        def run() -> None:
            try:
                server.run()
            except BaseException as err:  # uvicorn exits (SystemExit) when it cannot bind
                failed.append(err)

        self._thread = threading.Thread(target=run, name="web", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise BootError(f"[web] listen = \"{self.host}:{self.port}\": the page "
                                      "cannot listen there (address in use, or not this "
                                      "machine's); see the log above")
            time.sleep(0.02)
        log.info("the page listens on %s", self.url)

    def stop(self) -> None:
        """Close every stream, stop listening, release the meters."""
        server, self._server = self._server, None
        self.feed.closing.set()
        if server is not None:
            # not handle_exit: sse-starlette patches it to mark the whole process as ending,
            # which cuts every streamed answer of MCP over HTTP in this process from then on
            server.should_exit = True
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5.0)
        self.feed.close(everyone=True)
