"""Which shared-memory segments the suite leaked: the watcher's decisions, without I/O.

A segment is known by its name and inode (a segment made again under the same
name is another). One that was there when the session began is never the
suite's. One made during the session is the suite's once a process of the
suite maps it (a scsynth, a jackd or a JACK client below pytest), or, for a
scsynth's segment that no one was seen to map, once its port is a port the
suite's scsynths used. It is foreign, whatever else, once a process outside
the suite maps it: another checkout's tests, a SuperCollider or a JACK of the
machine. A segment of the suite that no process maps for ``leak_after``
seconds is a leak, recorded with when that began and which test ran then,
even if a later sweep removes it (scorch's own sweep at every scsynth start
would otherwise hide all but the last seconds' leaks).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: scsynth's segment (named after its UDP port) and JACK's (``jack-UID-INDEX``); not JACK's
#: semaphores and sockets, which a server leaves by design and the next of its name reuses.
WATCHED = re.compile(r"SuperColliderServer_(\d+)|jack-\d+-\d+")


@dataclass(frozen=True)
class SegmentId:
    """One segment file: its name in /dev/shm and its inode."""

    name: str
    inode: int

    @property
    def port(self) -> int | None:
        """The UDP port of a scsynth's segment, else None."""
        found = WATCHED.fullmatch(self.name)
        return int(found[1]) if found and found[1] else None


@dataclass(frozen=True)
class Leak:
    """A segment of the suite that stayed mapped by no process."""

    name: str
    size: int
    """Bytes, when last seen."""
    since: float
    """Wall-clock time it was first seen mapped by no process."""
    test: str
    """The test that ran then (``PYTEST_CURRENT_TEST``), or "" between tests."""
    removed: bool = False
    """Gone by the session's end (a sweep freed it, late)."""

    def describe(self) -> str:
        """One line for the failure: which, how large, since when, during which test."""
        clock = time.strftime("%H:%M:%S", time.localtime(self.since))
        during = f" during {self.test}" if self.test else " between tests"
        late = " (removed later by a sweep)" if self.removed else ""
        return f"{self.name} ({self.size} bytes): mapped by no process since {clock}{during}{late}"


@dataclass
class _Seen:
    """What is known of one segment made during the session."""

    size: int
    mapped: bool = False
    """Seen mapped by a process of the suite."""
    claimed: bool = False
    """A scsynth's, on a port of the suite's scsynths."""
    foreign: bool = False
    unmapped_since: float | None = None
    unmapped_wall: float = 0.0
    unmapped_test: str = ""

    def ours(self) -> bool:
        """Whether the suite made it, as far as is known."""
        return self.mapped or self.claimed


class Ledger:
    """Decide, one observation at a time, which of the session's segments leaked."""

    def __init__(self, before: Iterable[SegmentId], leak_after: float) -> None:
        self._before = frozenset(before)
        self._leak_after = leak_after
        self._seen: dict[SegmentId, _Seen] = {}
        self._leaks: dict[SegmentId, Leak] = {}

    def tracked(self) -> bool:
        """Whether any segment made during the session is there now (else no need to scan)."""
        return bool(self._seen)

    def new(self, present: Mapping[SegmentId, int]) -> bool:
        """Whether ``present`` holds a segment not there before and not tracked yet."""
        return any(seg not in self._before and seg not in self._seen for seg in present)

    def undecided(self, seg: SegmentId) -> bool:
        """Whether ``seg`` was made during the session and neither seen mapped by the suite
        nor foreign yet: another program's maps may still say whose it is."""
        seen = self._seen.get(seg)
        return seg not in self._before and (seen is None or not (seen.mapped or seen.foreign))

    def observe(self, now: float, wall: float, present: Mapping[SegmentId, int],
                mappers: Mapping[SegmentId, set[int]], suite: set[int], ports: set[int],
                test: str) -> None:
        """Take one look: the segments ``present`` (with their sizes), the pids that map
        each, the pids of the suite, the ports its scsynths used, the test running."""
        for seg in list(self._seen):
            if seg not in present:
                del self._seen[seg]  # freed: only a recorded leak outlives it
        for seg, size in present.items():
            if seg in self._before:
                continue
            seen = self._seen.setdefault(seg, _Seen(size))
            seen.size = size
            pids = mappers.get(seg, set())
            seen.foreign |= bool(pids - suite)
            seen.mapped |= bool(pids & suite)
            seen.claimed |= seg.port is not None and seg.port in ports
            if pids:
                seen.unmapped_since = None
            elif seen.unmapped_since is None:
                seen.unmapped_since, seen.unmapped_wall, seen.unmapped_test = now, wall, test
            if (seen.ours() and not seen.foreign and seen.unmapped_since is not None
                    and now - seen.unmapped_since >= self._leak_after and seg not in self._leaks):
                self._leaks[seg] = Leak(seg.name, size, seen.unmapped_wall, seen.unmapped_test)

    def finish(self, present: Mapping[SegmentId, int]) -> list[Leak]:
        """Every leak: those recorded, and the suite's segments mapped by no process now
        (the suite's processes have ended: no one is left to free them)."""
        for seg, seen in self._seen.items():
            if (seg in present and seen.ours() and not seen.foreign
                    and seen.unmapped_since is not None and seg not in self._leaks):
                self._leaks[seg] = Leak(seg.name, seen.size, seen.unmapped_wall,
                                        seen.unmapped_test)
        return [leak if seg in present else
                Leak(leak.name, leak.size, leak.since, leak.test, removed=True)
                for seg, leak in sorted(self._leaks.items(), key=lambda x: x[1].since)]
