"""The live view as the page's streams read it: built once for every open page.

A thread rebuilds the view (:func:`scorch.api.live.live_view`) every
:data:`VIEW_EVERY` seconds while at least one page is open, and joins the meters
for as long; each page's stream reads the newest copy and the meters without
asking anything itself, so ten open pages cost what one does.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING

from scorch.api.live import live_view, meters_now
from scorch.errors import ScorchError

if TYPE_CHECKING:
    from scorch.api.local import LocalService
    from scorch.app.orchestra import Orchestra

log = logging.getLogger(__name__)

#: Seconds between two builds of the view while a page is open.
VIEW_EVERY = 0.5


class Feed:
    """The newest view (JSON) and the meters, while pages watch."""

    def __init__(self, service: LocalService, orch: Orchestra) -> None:
        self.service = service
        self.orch = orch
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._pages = 0
        self._view = ""
        self.version = 0
        """Counts the builds: a stream sends the view when it moved on."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pages(self) -> int:
        """How many streams are open."""
        return self._pages

    def view(self) -> tuple[int, str]:
        """The newest view's version and JSON."""
        with self._lock:
            return self.version, self._view

    def build(self) -> str:
        """The view now (JSON), built at once."""
        return live_view(self.service, self.orch).model_dump_json()

    def meters(self) -> str:
        """Each room's meter now (JSON)."""
        return json.dumps({name: meter.model_dump() if meter else None
                           for name, meter in meters_now(self.orch).items()})

    def open(self) -> None:
        """A page opened its stream: the first starts the builder and the meters."""
        with self._lock:
            self._pages += 1
            first = self._thread is None
            if first:
                self._stop.clear()
                self._thread = threading.Thread(target=self._build, name="web-view",
                                                daemon=True)
        if first:
            self.orch.meters.join()
            assert self._thread is not None
            self._thread.start()

    def close(self, everyone: bool = False) -> None:
        """A page closed its stream (``everyone``: the server stops)."""
        with self._lock:
            self._pages = 0 if everyone else max(0, self._pages - 1)
            if self._pages or self._thread is None:
                return
            thread, self._thread = self._thread, None
            self._stop.set()
            self._changed.notify_all()
        thread.join(timeout=5.0)
        self.orch.meters.leave()

    def wait_view(self, version: int, timeout: float) -> None:
        """Wait until a view newer than ``version`` is built (or ``timeout``)."""
        with self._lock:
            if self.version <= version and not self._stop.is_set():
                self._changed.wait(timeout)

    def _build(self) -> None:
        while not self._stop.is_set():
            try:
                view = self.build()
            except ScorchError as err:
                log.debug("live view: %s", err)
            except Exception:
                log.exception("live view could not be built")
            else:
                with self._lock:
                    self._view = view
                    self.version += 1
                    self._changed.notify_all()
            self._stop.wait(VIEW_EVERY)
