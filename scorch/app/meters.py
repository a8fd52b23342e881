"""Level meters of every room, measured by scsynth itself while someone watches.

The first watcher (:meth:`Meters.watch`) starts a keeper thread that puts one
``scorch_meter_N`` synth (``scorch.primitives.synthdefs.meter``) at the tail of each
READY room's readers group (after its safety stage), reading its N outputs; scsynth
sends peak and RMS ``rate`` times a second to the room's own OSC client, whose receive
thread hands them (through a listener on the room's door) to that room's
:class:`~scorch.state.meters.Levels`. When the last watcher
leaves, the synths are freed and the thread ends: nobody watching costs nothing.

The synth is scorch's, not the room's content: its id lies in scorch's own client
range (client 3 of scsynth's 4 logins), never in the desired state, so no restore
replays it and ``playing`` names it ``scorch (meter)``. A restart of scsynth, or a
``stop`` that freed every synth, is noticed by the keeper (a new scsynth behind the
door, or no report for a second) and the synth is put back.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from scorch.app.tree import Tree
from scorch.errors import ScorchError
from scorch.primitives import OscMessage
from scorch.primitives.scsynth import METER_NODE, READERS_GROUP, AddAction, ScsynthDoor, commands
from scorch.primitives.synthdefs import (
    DEFAULT_RATE,
    MAX_RATE,
    METER_REPLY,
    levels,
    meter_name,
    meter_synthdef,
)
from scorch.state import SOUNDING, Levels

log = logging.getLogger(__name__)

#: Seconds between two looks of the keeper at the rooms.
KEEP_EVERY = 0.5
#: A meter silent this long is started again (freed by a stop, lost with its scsynth).
SILENT_AFTER = 1.5
#: Seconds a lease keeps the meters running (the panel asks again well before).
LEASE = 5.0


class Meters:
    """Each room's output levels, read while at least one watcher watches."""

    def __init__(self, tree: Tree, rate: float = DEFAULT_RATE) -> None:
        if not 0 < rate <= MAX_RATE:
            raise ValueError(f"meters report 1 to {MAX_RATE:g} times a second, not {rate}")
        self._tree = tree
        self.rate = rate
        self._lock = threading.Lock()
        self._watchers = 0
        self._lease_until = 0.0
        self._levels: dict[str, Levels] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def watchers(self) -> int:
        """How many watch now."""
        return self._watchers

    def levels(self, room: str) -> Levels:
        """The levels of ``room`` (kept across watchers, for the sparkline)."""
        with self._lock:
            return self._levels.setdefault(room, Levels())

    @contextmanager
    def watch(self) -> Iterator[Meters]:
        """Watch the meters for as long as the ``with`` lasts."""
        self.join()
        try:
            yield self
        finally:
            self.leave()

    def join(self) -> None:
        """One more watcher: the first places the meters. Call :meth:`leave` once done."""
        with self._lock:
            self._watchers += 1
            self._start()

    def lease(self, seconds: float = LEASE) -> None:
        """Meter for ``seconds`` more (a panel that polls, and may vanish without a word)."""
        with self._lock:
            self._lease_until = max(self._lease_until, time.monotonic() + seconds)
            self._start()

    def leave(self) -> None:
        """One watcher less: after the last, the meters are freed (waits for that)."""
        with self._lock:
            self._watchers = max(0, self._watchers - 1)
            if self._wanted() or self._thread is None:
                return
            thread, self._thread = self._thread, None
            self._stop.set()
        thread.join(timeout=5.0)

    def close(self) -> None:
        """Stop metering whoever still watches (scorch stops)."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._watchers, self._lease_until = 0, 0.0
            self._stop.set()
        if thread is not None:
            thread.join(timeout=5.0)

    def _wanted(self) -> bool:
        return self._watchers > 0 or time.monotonic() < self._lease_until

    def _start(self) -> None:
        """Under the lock: a keeper, unless one runs."""
        if self._thread is not None:
            return
        self._stop = stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, args=(stop,), name="meters",
                                        daemon=True)
        self._thread.start()

    def _keep(self, stop: threading.Event) -> None:
        # The scsynth each room's meter was placed on (its door's generation: a new one is a
        # new scsynth), and when: this keeper's own, so a keeper that ends never frees
        # another's.
        placed: dict[str, tuple[int, float]] = {}
        try:
            while not stop.is_set():
                with self._lock:
                    if not self._wanted():  # a lease ran out, nobody watches
                        if self._thread is threading.current_thread():
                            self._thread = None
                        return
                for name in list(self._tree.views):
                    try:
                        self._keep_room(name, placed)
                    except ScorchError as err:
                        log.debug("meter of %s: %s", name, err)
                stop.wait(KEEP_EVERY)
        finally:
            for name in list(placed):
                self._remove(name, placed)

    def _keep_room(self, name: str, placed: dict[str, tuple[int, float]]) -> None:
        view = self._tree.views.get(name)
        door = self._tree.doors.get(name)
        inst = self._tree.config.instances.get(name)
        if view is None or door is None or inst is None or inst.outputs < 1:
            return
        osc = door.scsynth
        there, at = placed.get(name, (None, 0.0))
        if not osc.is_open or view.snapshot.state not in SOUNDING:
            if there is not None and there != osc.generation:
                self._remove(name, placed)
            return
        room = self.levels(name)
        now = time.time()
        if there == osc.generation:
            last = room.last(now, stale=SILENT_AFTER)
            if last is None and now - at > SILENT_AFTER:
                self._place(osc, room, inst.outputs)
                placed[name] = (osc.generation, now)
            return
        if there is not None:
            self._remove(name, placed)
        osc.send(commands.d_recv(meter_synthdef(inst.outputs)))
        osc.sync(timeout=2.0)
        self._place(osc, room, inst.outputs)
        placed[name] = (osc.generation, now)

    def _place(self, osc: ScsynthDoor, room: Levels, outputs: int) -> None:
        def heard(msg: OscMessage) -> None:
            found = levels(msg)
            if found is not None and found[0] == METER_NODE:
                room.add(time.time(), found[1], found[2])

        osc.listen(METER_REPLY, heard)
        osc.send(commands.s_new(meter_name(outputs), METER_NODE, AddAction.TAIL, READERS_GROUP,
                                ["rate", self.rate]))

    def _remove(self, name: str, placed: dict[str, tuple[int, float]]) -> None:
        generation, _ = placed.pop(name, (None, 0.0))
        door = self._tree.doors.get(name)
        if generation is None or door is None:
            return
        door.scsynth.unlisten(METER_REPLY)
        if door.scsynth.generation == generation:  # a new scsynth has no meter to free
            with contextlib.suppress(ScorchError):
                door.scsynth.send(commands.n_free(METER_NODE))
