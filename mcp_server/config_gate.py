"""A ``scorch mcp`` whose config has mistakes stays up, says them, and starts once they are fixed.

Claude Desktop shows only that a server's connection closed, never its stderr:
so a config that does not load does not end the session. Every tool answers
with the located errors (``file:line: key: what``), and the file is read again
at the next call and whenever it changes (polled in a thread); the first read
that loads starts the installation, as a start with a good file would have, and
the calls go to it from then on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scorch.api import Args, Result, Service
from scorch.config import Config, load_config
from scorch.errors import ConfigError
from scorch.wire import find_running

log = logging.getLogger(__name__)

#: How often the file's size and time are looked at while it has mistakes.
POLL = 0.5

#: The service a loaded config runs on, and how to end it when the session ends.
Opener = Callable[[Config], tuple[Service, Callable[[], None]]]


class ConfigGate:
    """The service of a session that began with a broken config (thread-safe)."""

    mode = "hosted"

    def __init__(self, path: Path, error: ConfigError, open_service: Opener,
                 read: Callable[[Path], Config] = load_config) -> None:
        self.path = path
        self.error = error
        """The mistakes of the last read."""
        self._open = open_service
        self._read = read
        self._service: Service | None = None
        self._close: Callable[[], None] = lambda: None
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._seen = self._stamp()
        self._watcher = threading.Thread(target=self._watch, name="config-watch", daemon=True)

    def start(self) -> ConfigGate:
        """Watch the file for changes."""
        self._watcher.start()
        return self

    def call(self, name: str, args: Mapping[str, Any] | Args, key: str | None = None) -> Result:
        """Run ``name`` on the installation, once the file loads; else raise its mistakes."""
        return self.service().call(name, args, key)

    def service(self) -> Service:
        """The installation's service, the file read again first if it has not loaded yet."""
        with self._lock:
            if self._service is None:
                self._load()
            if self._service is None:
                raise ConfigError(
                    f"scorch cannot start: {self.path} has mistakes; fix the file and call "
                    f"again (it is read at every call until it loads):\n{self.error}")
            return self._service

    def close(self) -> None:
        """Stop watching; end the installation if it started (the session ends)."""
        self._closed.set()
        with self._lock:
            self._close()
            self._close = lambda: None

    def _load(self) -> None:
        """Read the file once (under the lock); start the installation if it loads."""
        if self._closed.is_set():
            return
        try:
            config = self._read(self.path)
        except ConfigError as err:
            if str(err) != str(self.error):
                log.error("%s still has mistakes:\n%s", self.path, err)
            self.error = err
            return
        log.info("%s loads now: starting the installation", self.path)
        self._service, self._close = self._open(config)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            found = self.path.stat()
        except OSError:
            return None
        return found.st_mtime_ns, found.st_size

    def _watch(self) -> None:
        while not self._closed.wait(POLL):
            stamp = self._stamp()
            if stamp == self._seen:
                continue
            self._seen = stamp
            with self._lock:
                if self._service is None:
                    self._load()
            if self._service is not None:
                return


def hosted_here(config: Config) -> bool:
    """True when ``scorch mcp`` runs the config's rooms itself: no ``[hosts]`` to
    coordinate, and no ``scorch run`` of the config answering to attach to."""
    return not config.hosts and find_running(config.state_path()) is None
