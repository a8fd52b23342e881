"""The live view as the page's streams read it: built once for every open page.

A thread rebuilds the view (:func:`scorch.api.live.live_view`) every
:data:`VIEW_EVERY` seconds while at least one page is open, and at once when a
room's state changes (a watcher thread per room sleeps on its view's condition:
no polling), and joins the meters for as long; each page's stream reads the newest
copy and the meters without asking anything itself, so ten open pages cost what
one does.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from typing import TYPE_CHECKING

from scorch.api.live import live_view, meters_now
from scorch.errors import ScorchError

if TYPE_CHECKING:
    from scorch.api.local import LocalService
    from scorch.app.orchestra import Orchestra
    from scorch.state.view import InstanceView, Snapshot

log = logging.getLogger(__name__)

#: Seconds between two builds of the view while a page is open; a room's change of state
#: is built and sent at once (a restart can be over in less than this; each state shows).
VIEW_EVERY = 0.5
#: Seconds a room's watcher sleeps at most before it looks whether the page closed.
WATCH_EVERY = 1.0
#: Views kept for streams that read a little late (each sends every view it missed).
KEPT = 16


class Feed:
    """The newest view (JSON) and the meters, while pages watch."""

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
        """Set by a room's watcher when its state changed: the builder builds at once."""

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

    def open(self) -> None:
        """A page opened its stream: the first starts the builder and the meters."""
        with self._lock:
            self._pages += 1
            first = self._thread is None
            if first:  # a stop of its own: the last builder's watchers end with theirs
                self._stop = threading.Event()
                self._thread = threading.Thread(target=self._build, args=(self._stop,),
                                                name="web-view", daemon=True)
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
            self._changed.set()  # the builder ends now, not after its wait
        thread.join(timeout=5.0)
        self.orch.meters.leave()

    def _build(self, stop: threading.Event) -> None:
        watched: set[str] = set()
        while not stop.is_set():
            self._watch_new_rooms(watched, stop)
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
            self._changed.wait(VIEW_EVERY)

    def _watch_new_rooms(self, watched: set[str], stop: threading.Event) -> None:
        """A watcher for each room not ``watched`` yet (rooms come with a reload)."""
        for name, view in list(self.orch.views.items()):
            if name in watched:
                continue
            watched.add(name)
            threading.Thread(target=self._watch, args=(view, stop), name=f"web-watch-{name}",
                             daemon=True).start()

    def _watch(self, view: InstanceView, stop: threading.Event) -> None:
        """Wake the builder whenever ``view``'s state changes, until ``stop``."""
        seen = [view.snapshot.state]

        def moved(snap: Snapshot) -> bool:
            return snap.state != seen[0]

        while not stop.is_set():
            now = view.wait_until(moved, WATCH_EVERY).state
            if now != seen[0]:
                seen[0] = now
                self._changed.set()
