"""What the hours fire, as the rest of scorch hears of it, and the seam they fire through.

:class:`Fired` is the typed notification of a schedule entry or a cue that fired
(the page, the panel and alerts subscribe with :meth:`Hours.listen`);
:class:`Firer` is what makes the calls: the API layer's
(:class:`scorch.api.firing.Firing`), through the operations, as the tools do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from scorch.schedule import Call

if TYPE_CHECKING:
    from scorch.config import Config

Source = Literal["schedule", "cue", "catch-up", "watch"]
"""What fired: a schedule entry at its time, a cue, the state for now (a start, a jump), or
the sound watch's action for a fault."""


@dataclass(frozen=True)
class Outcome:
    """What became of one call."""

    call: Call
    ok: bool
    error: str | None = None
    """Why it failed (``ok`` false)."""
    skipped: bool = False
    """Another host's rooms: that host makes it."""
    rooms: tuple[str, ...] = ()
    """The rooms of this host it reached."""


@dataclass(frozen=True)
class Fired:
    """A schedule entry or a cue that fired, and what became of each of its calls."""

    source: Source
    label: str
    """``schedule 'evening'``, ``cue 3 'storm'``."""
    due: float
    """When it was due (Unix time)."""
    done: float
    """When its last call returned."""
    outcomes: tuple[Outcome, ...]

    @property
    def ok(self) -> bool:
        """Every call of this host's was made."""
        return all(o.ok for o in self.outcomes)


class Firer(Protocol):
    """Makes calls at a time, as the tools make them (journaled as one step, in the history)."""

    def fire(self, label: str, calls: Sequence[Call], at: float | None,
             source: Source) -> list[Outcome]:
        """Make ``calls`` (this host's part): timed ones stamped ``at``, the rest at ``at``."""
        ...

    def check(self, config: Config) -> None:
        """ConfigError naming each call of the config's schedule and cues that is wrong."""
        ...

    def check_calls(self, calls: Sequence[Call]) -> None:
        """InvalidRequest naming the first call of ``calls`` that is wrong (``do.N...``)."""
        ...

    def cue(self, args: dict[str, Any]) -> None:
        """Call the cue operation as a tool's call is made (its firings journaled, in the
        history)."""
        ...
