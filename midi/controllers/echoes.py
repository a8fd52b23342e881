"""Feedback a device may send back: expected for a while, then taken as a move again.

A device with a MIDI thru, or software looping its output to its input, sends back
each message its feedback was. The router expects each for :data:`WINDOW` seconds;
one that comes back in time is dropped once, so it neither loops nor moves the param
back to an older value (several may be on their way for one light). Pure.
"""

from __future__ import annotations

from collections.abc import Callable

#: Seconds within which a message equal to one sent is taken as its echo.
WINDOW = 0.25
#: Values kept per light: the newest, a burst of changes on their way back.
KEPT = 8

Key = tuple[str, int, int]
"""(input port, status byte, first data byte): what one light's messages share."""


class Echoes:
    """The feedback sent lately, by the input it would come back on."""

    def __init__(self) -> None:
        self._sent: dict[Key, list[tuple[int, float]]] = {}

    def __bool__(self) -> bool:
        return bool(self._sent)

    def expect(self, key: Key, value: int, until: float) -> None:
        """``value`` was sent for ``key``'s light; it may come back until ``until``."""
        sent = self._sent.setdefault(key, [])
        sent.append((value, until))
        if len(sent) > KEPT:
            del sent[0]

    def back(self, key: Key, value: int, clock: Callable[[], float]) -> bool:
        """Whether a message is the echo of one sent (then it is expected no more)."""
        sent = self._sent.get(key)
        if not sent:
            return False
        # The hot path: most messages match no value sent, and pay no clock for it; old
        # entries are pushed out by newer ones (KEPT), never pruned here. Newest first:
        # if the newest sending of this value is too old, every older one is too.
        for index in range(len(sent) - 1, -1, -1):
            if sent[index][0] == value:
                if sent[index][1] < clock():
                    return False
                del sent[index]
                return True
        return False
