"""The live view as the page's streams read it: built once for every open page.

While at least one page is open, a thread rebuilds the view
(:func:`scorch.api.live.live_view`) when the change bus (:mod:`scorch.state.bus`)
announces a change (a node's params, a pattern, the tempo, a room's state...: at
most every :data:`MIN_GAP` seconds, a burst in one build), and every
:data:`MEASURE_EVERY` seconds for what no change announces (CPU, uptime, the MIDI
counters, xruns); it joins the meters for as long. Each page's stream reads the
newest copy and the meters without asking anything itself, so ten open pages cost
what one does, and sends each change itself too, once and in order, as it is
published (the page updates a node's params at once).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from typing import TYPE_CHECKING

from scorch.api import live_view, meters_now
from scorch.errors import ScorchError
from scorch.state import Published, Reader, Subscription, as_json

if TYPE_CHECKING:
    from scorch.api import LocalService
    from scorch.app import Orchestra

log = logging.getLogger(__name__)

#: Seconds between two builds for what no change announces (CPU, uptime, MIDI counters).
MEASURE_EVERY = 1.0
#: Seconds at least between two builds a change asked for (a morph sends 30 a second).
MIN_GAP = 0.2
#: Views kept for streams that read a little late (each sends every view it missed).
KEPT = 16


class Feed:
    """The newest view (JSON), the changes and the meters, while pages watch."""

    def __init__(self, service: LocalService, orch: Orchestra) -> None:
        self.service = service
        self.orch = orch
        self._lock = threading.Lock()
        self._pages = 0
        self._views: deque[tuple[int, str]] = deque(maxlen=KEPT)
        self.version = 0
        """Counts the builds: a stream sends the view when it moved on."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._changed = threading.Event()
        """Set by the bus's subscription when a change came: the builder builds soon."""
        self._heard: Subscription | None = None
        self.closing = threading.Event()
        """Set when the server stops: every stream ends at its next wake."""

    @property
    def pages(self) -> int:
        """How many streams are open."""
        return self._pages

    def views_since(self, version: int) -> list[tuple[int, str]]:
        """The views built after ``version`` (the newest KEPT at most), oldest first."""
        with self._lock:
            return [(v, data) for v, data in self._views if v > version]

    def build(self) -> str:
        """The view now (JSON), built at once."""
        return live_view(self.service, self.orch).model_dump_json()

    def meters(self) -> str:
        """Each room's meter now (JSON)."""
        return json.dumps({name: meter.model_dump() if meter else None
                           for name, meter in meters_now(self.orch).items()})

    def changes(self) -> Reader:
        """A page's own cursor over the changes, from now (:meth:`Reader.take`)."""
        return self.orch.bus.reader()

    @staticmethod
    def change(published: Published) -> str:
        """One change as the stream sends it (JSON)."""
        return json.dumps(as_json(published))

    def open(self) -> None:
        """A page opened its stream: the first starts the builder and the meters."""
        with self._lock:
            self._pages += 1
            first = self._thread is None
            if first:  # a stop of its own: a builder that ends never stops the next
                self._stop = threading.Event()
                self._thread = threading.Thread(target=self._build, args=(self._stop,),
                                                name="web-view", daemon=True)
                self._heard = self.orch.bus.subscribe(lambda _: self._changed.set(), "web-page")
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
            heard, self._heard = self._heard, None
            self._stop.set()
            self._changed.set()  # the builder ends now, not after its wait
        if heard is not None:
            heard.close()
        thread.join(timeout=5.0)
        self.orch.meters.leave()

    def _build(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self._changed.clear()
            try:
                view = self.build()
            except ScorchError as err:
                log.debug("live view: %s", err)
            except Exception:
                log.exception("live view could not be built")
            else:
                with self._lock:
                    self.version += 1
                    self._views.append((self.version, view))
            if self._changed.wait(MEASURE_EVERY):
                stop.wait(MIN_GAP)  # what comes meanwhile is in the same build
