"""Which events become messages: rate limits, reminders and recoveries (pure logic).

A fault opens when an event of an alerted kind arrives and closes on its recovery:
``READY`` or ``RESTORED`` close a room's process faults (``CRASHED``, ``HUNG``...),
``SOUND_OK`` closes its sound faults (``SOUND_SILENT``, ``SOUND_LIMITING``...). Kinds
are read by name, so the sound watch's kinds need no change here.
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass, field
from typing import Any

#: Kinds that end a room's faults: ``SOUND_OK`` its sound faults, the others the rest.
RECOVERIES = frozenset({"SOUND_OK", "READY", "RESTORED"})


class Phase(enum.StrEnum):
    """What a message says about its fault."""

    FAULT = "fault"
    REMINDER = "reminder"
    RECOVERED = "recovered"


@dataclass(frozen=True)
class Message:
    """One message to send: its fault's kind decides where it goes."""

    room: str
    kind: str
    phase: Phase
    title: str
    body: str


@dataclass
class _Fault:
    kind: str
    since: float
    message: str
    announced: bool
    reminded: float


def matches(kind: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``kind`` is one of ``patterns`` (shell patterns, case as written)."""
    return any(fnmatch.fnmatchcase(kind, pattern) for pattern in patterns)


def _ends(recovery: str, kind: str) -> bool:
    return kind.startswith("SOUND_") == (recovery == "SOUND_OK")


@dataclass
class AlertPolicy:
    """Turn a room's events into messages; time is given, never read."""

    kinds: tuple[str, ...]
    rate_s: float
    remind_s: float
    _faults: dict[tuple[str, str], _Fault] = field(default_factory=dict)
    _last: dict[tuple[str, str], float] = field(default_factory=dict)
    _held: dict[tuple[str, str], int] = field(default_factory=dict)

    def event(self, room: str, kind: str, message: str, when: float,
              details: dict[str, Any] | None = None) -> list[Message]:
        """The messages one event makes (none when it is not alerted or held back)."""
        if kind in RECOVERIES:
            return self._recover(room, kind, when)
        if not matches(kind, self.kinds):
            return []
        key = (room, kind)
        last = self._last.get(key)
        announced = last is None or when - last >= self.rate_s
        fault = self._faults.get(key)
        if fault is None or not fault.announced:
            self._faults[key] = _Fault(kind, when, message, announced, when)
        if not announced:
            self._held[key] = self._held.get(key, 0) + 1
            return []
        self._last[key] = when
        held = self._held.pop(key, 0)
        more = f" ({held} more since the last message)" if held else ""
        figures = "".join(f"\n{k}: {v}" for k, v in sorted((details or {}).items()))
        return [Message(room, kind, Phase.FAULT, f"scorch: {room} {kind}{more}",
                        f"{message}{figures}")]

    def _recover(self, room: str, recovery: str, when: float) -> list[Message]:
        out = []
        for key, fault in list(self._faults.items()):
            if key[0] != room or not _ends(recovery, fault.kind):
                continue
            del self._faults[key]
            if fault.announced:
                lasted = when - fault.since
                out.append(Message(room, fault.kind, Phase.RECOVERED,
                                   f"scorch: {room} recovered from {fault.kind}",
                                   f"{recovery} after {lasted:.1f} s: {fault.message}"))
        return out

    def tick(self, when: float) -> list[Message]:
        """Reminders of faults that last (call it now and then)."""
        if self.remind_s <= 0:
            return []
        out = []
        for (room, kind), fault in self._faults.items():
            if fault.announced and when - fault.reminded >= self.remind_s:
                fault.reminded = when
                out.append(Message(room, kind, Phase.REMINDER,
                                   f"scorch: {room} still {kind}",
                                   f"since {when - fault.since:.0f} s: {fault.message}"))
        return out

    def open_faults(self) -> list[tuple[str, str]]:
        """The (room, kind) of every fault not yet recovered."""
        return sorted(self._faults)
