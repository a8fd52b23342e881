"""A cue list: numbered cues fired by GO, one after another, with waits and follows. Pure.

As in a theatre's cue list (QLab's words): each cue waits ``pre_wait`` after its
GO, then makes its calls; ``then`` says what comes next: ``stop`` (the next cue
waits on standby for the next GO), ``continue`` (the next cue gets its GO
``post_wait`` after this one fired) or ``follow`` (the next cue gets its GO once
this one's calls are done, their longest ``seconds`` (a fade, a glide), and
``post_wait`` more). A GO fires the cue on standby and every cue it continues
or follows into; standby then moves past them. A GO within ``double_go``
seconds of the last one counted is a double press, and counts once: the time
compared is the GO's own (the moment every host fires it), so every host of an
installation decides alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from scorch.errors import CueNotFound, InvalidRequest
from scorch.schedule.plan import Call

Then = Literal["stop", "continue", "follow"]
#: Cues a list holds at most.
MAX_CUES = 1000


@dataclass(frozen=True)
class Cue:
    """One cue: its number, its name, its calls and what comes after it."""

    number: str
    name: str = ""
    do: tuple[Call, ...] = ()
    pre_wait: float = 0.0
    then: Then = "stop"
    post_wait: float = 0.0

    def length(self) -> float:
        """How long its calls take: the longest ``seconds`` among them (a fade, a glide)."""
        lengths = [float(c.args["seconds"]) for c in self.do
                   if isinstance(c.args.get("seconds"), int | float)]
        return max(lengths, default=0.0)

    def label(self) -> str:
        """``cue 3 'storm'``."""
        return f"cue {self.number}" + (f" {self.name!r}" if self.name else "")


@dataclass(frozen=True)
class Firing:
    """A cue to fire at a time, for a GO."""

    cue: Cue
    time: float
    go: float
    """The GO's time (the chain's first cue's, before its pre-wait)."""


@dataclass
class CueList:
    """The cues in order and the one on standby; not thread-safe (its owner locks)."""

    cues: list[Cue] = field(default_factory=list)
    standby: int = 0
    """The index of the cue the next GO fires (its length: past the last)."""
    double_go: float = 0.3
    last_go: float | None = None
    """The time of the last GO that counted."""

    def index(self, number: str) -> int:
        """Where cue ``number`` is; CueNotFound lists the numbers there are."""
        for at, cue in enumerate(self.cues):
            if cue.number == number:
                return at
        numbers = ", ".join(c.number for c in self.cues[:40]) or "(none)"
        err = CueNotFound(f"no cue {number[:20]!r}; cues: {numbers}", name=number,
                          known=[c.number for c in self.cues])
        err.argument = "cue"
        raise err

    def on_standby(self) -> Cue | None:
        """The cue the next GO fires (None: the list is done)."""
        return self.cues[self.standby] if self.standby < len(self.cues) else None

    def go(self, at: float, number: str | None = None) -> list[Firing] | None:
        """GO at ``at`` (the standby cue, or cue ``number``): the cues it fires and when.

        None for a double GO (within ``double_go`` seconds of the last one counted).
        """
        if self.last_go is not None and abs(at - self.last_go) < self.double_go:
            return None
        first = self.index(number) if number is not None else self.standby
        if first >= len(self.cues):
            raise InvalidRequest("no cue on standby: the list is done; give a cue number, "
                                 "or put one on standby")
        fired, trigger, at_index = [], at, first
        while True:
            cue = self.cues[at_index]
            start = trigger + cue.pre_wait
            fired.append(Firing(cue, start, at))
            if cue.then == "stop" or at_index + 1 >= len(self.cues):
                break
            trigger = start + cue.post_wait + (cue.length() if cue.then == "follow" else 0.0)
            at_index += 1
        self.standby = at_index + 1
        self.last_go = at
        return fired

    def put_on_standby(self, number: str) -> Cue:
        """Put cue ``number`` on standby."""
        self.standby = self.index(number)
        return self.cues[self.standby]

    def add(self, cue: Cue, before: str | None = None) -> Cue:
        """Add a cue at the end, or before cue ``before``; its number must be new."""
        if any(c.number == cue.number for c in self.cues):
            err = InvalidRequest(f"cue {cue.number!r} exists already: edit it, or give "
                                 "another number")
            err.argument = "cue"
            raise err
        if len(self.cues) >= MAX_CUES:
            raise InvalidRequest(f"a cue list holds at most {MAX_CUES} cues")
        at = self.index(before) if before is not None else len(self.cues)
        if at < self.standby or at == self.standby < len(self.cues):
            self.standby += 1  # standby stays on its cue (a cue added to a done list is next)
        self.cues.insert(at, cue)
        return cue

    def edit(self, number: str, changes: Mapping[str, Any]) -> Cue:
        """Change some of cue ``number``'s fields (name, do, pre_wait, then, post_wait)."""
        at = self.index(number)
        self.cues[at] = replace(self.cues[at], **changes)
        return self.cues[at]

    def delete(self, number: str) -> Cue:
        """Take cue ``number`` out; standby stays on the cue it was on (or the next)."""
        at = self.index(number)
        if at < self.standby:
            self.standby -= 1
        return self.cues.pop(at)

