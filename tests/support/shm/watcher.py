"""The session's /dev/shm watcher: a thread that looks every 1.5 s, and the end's verdict.

Each look lists the watched segments; only when one made during the session is
there does it read every process's parent (which processes are the suite's),
the suite's processes' maps (which segments they map) and its scsynths' command
lines (the ports they use). A segment of the suite that none of its processes
maps is taken as mapped by no one: no other program maps a scsynth's or a JACK
server's segment but its own scsynth, server and clients. What it decides is
:class:`~tests.support.shm.ledger.Ledger`'s.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable

from tests.support.shm import scan
from tests.support.shm.ledger import Leak, Ledger

#: How often it looks: some 600 looks in a 15-minute suite, 8-23 ms of CPU each
#: (measured beside other checkouts' suites: 4 to 18 processes under pytest).
INTERVAL = 1.5
#: How long a segment of the suite may be mapped by no process: scorch frees a crashed
#: scsynth's at once, and the JACK server it starts again frees a killed one's.
LEAK_AFTER = 10.0


class SegmentWatcher:
    """Watch /dev/shm for the whole session; :meth:`finish` says what the suite leaked."""

    def __init__(self, root: int | None = None, interval: float = INTERVAL,
                 leak_after: float = LEAK_AFTER,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.root = os.getpid() if root is None else root
        self.ports: set[int] = set()
        """The ports of the suite's scsynths (:meth:`add_port` and the scsynths seen)."""
        self.failure = ""
        """The first error a look raised: the check would be blind, so the session fails."""
        self.note = ""
        """The processes :meth:`finish` waited for: a test left them running."""
        self._clock = clock
        self._interval = interval
        self._ledger = Ledger(scan.segments(), leak_after)
        self._lock = threading.Lock()
        self._last_test = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shm-watcher", daemon=True)
        self._thread.start()

    def add_port(self, port: int) -> None:
        """Count ``port`` as a port of the suite's scsynths (told as each one starts)."""
        with self._lock:
            self.ports.add(port)

    def look(self) -> None:
        """Take one look now (the thread's, and the end's)."""
        present = scan.segments()
        test = os.environ.get("PYTEST_CURRENT_TEST", "")
        with self._lock:
            self._last_test = test or self._last_test
            if not (self._ledger.tracked() or self._ledger.new(present)):
                return  # nothing made during the session is there: no /proc to read
            parents = scan.processes()
            suite = scan.below(self.root, parents)
            self.ports |= _scsynth_ports(suite)
            # The suite's own maps tell what is its and what it still maps. Other processes'
            # maps (ten times the text: browsers, other checkouts' rooms) are read only for
            # a segment on a port of the suite's that none of its processes maps: a foreign
            # scsynth's on a port the suite used before, or a suite's that no one maps.
            by_name = scan.mappers(suite)
            if any(seg.name not in by_name and seg.port in self.ports
                   and self._ledger.undecided(seg) for seg in present):
                for name, pids in scan.mappers(parents.keys() - suite).items():
                    by_name.setdefault(name, set()).update(pids)
            mappers = {seg: by_name.get(seg.name, set()) for seg in present}
            after = f"after {self._last_test}" if self._last_test else ""
            self._ledger.observe(self._clock(), time.time(), present, mappers, suite,
                                 set(self.ports), test or after)

    def finish(self, grace: float = 10.0) -> list[Leak]:
        """Stop looking; wait up to ``grace`` s for the suite's processes to end, then
        return every leak of the session."""
        self._stop.set()
        self._thread.join(timeout=5)
        start = time.monotonic()
        waited_for = ""
        while left := {pid for pid in scan.below(self.root, scan.processes()) - {self.root}
                       if not _helper_of_python(pid)}:
            waited_for = waited_for or ", ".join(_command(pid) for pid in sorted(left))
            if time.monotonic() > start + grace:
                break
            time.sleep(0.1)
        if waited_for:  # a test left a process running: say which, for whoever looks next
            self.note = (f"/dev/shm watcher: waited {time.monotonic() - start:.1f} s after the "
                         f"last test for {waited_for}" + (" (still running)" if left else ""))
        self.look()
        with self._lock:
            return self._ledger.finish(scan.segments())

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.look()
            except OSError:  # out of descriptors (a test's EMFILE): the next look sees it
                continue
            except Exception as err:  # a bug here: say so at the end rather than go blind
                self.failure = self.failure or f"{type(err).__name__}: {err}"


def _helper_of_python(pid: int) -> bool:
    """Whether ``pid`` is multiprocessing's resource tracker: started by the first use of
    multiprocessing in the session, it lives as long as pytest does (maps no segment)."""
    return "multiprocessing.resource_tracker" in _command(pid)


def _command(pid: int) -> str:
    """``pid`` and its command line, for a message."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        argv = "(gone)"
    return f"{pid} {argv[:120]}"


def _scsynth_ports(pids: set[int]) -> set[int]:
    """The ``-u PORT`` of each scsynth among ``pids``."""
    ports = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"scsynth"):
            for flag, value in itertools.pairwise(argv):
                if flag == b"-u" and value.isdigit():
                    ports.add(int(value))
    return ports
