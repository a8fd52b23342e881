"""The schedule's clockwork: what is due at each look at the clocks, and when to look again. Pure.

Whoever runs it looks at the wall clock and the monotonic one, and gets back
what to fire and when to look next. The first look, and any look at which the
wall clock moved apart from the monotonic one (a clock set by hand, a machine
that slept, NTP's first step after a reboot), gives the state for now instead
of every action missed: the last action of each kind (:meth:`Plan.state_at`).
Between looks, every action due is fired once, each at its own time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scorch.schedule.plan import Due, Plan

#: Seconds the wall clock may drift from the monotonic one between two looks before it
#: counts as a jump (NTP slews far less; a clock set or a machine woken moves more).
JUMP = 2.0


@dataclass(frozen=True)
class Tick:
    """What one look at the clocks found."""

    catch_up: list[Due] = field(default_factory=list)
    """The state for now, after a start or a jump: applied at once."""
    due: list[Due] = field(default_factory=list)
    """Actions due by the next look (each fired at its own time)."""
    wake: float | None = None
    """The wall-clock time to look again (None: nothing is ever due)."""
    jumped: float = 0.0
    """How far the wall clock jumped since the last look, seconds (0: it did not)."""


class Keeper:
    """Fires each action once, at its time; a start or a jump brings back the state."""

    def __init__(self, plan: Plan, lead: float = 0.0) -> None:
        self.plan = plan
        self.lead = lead
        """Seconds ahead of its time an action is handed out (a bundle must reach scsynth
        before its timestamp)."""
        self._anchor: tuple[float, float] | None = None
        self._upto = 0.0
        """Every action due up to this wall-clock time was handed out."""
        self._next: tuple[float, float | None] | None = None
        """(up to, the next time due after it), kept while still ahead."""

    def tick(self, wall: float, mono: float) -> Tick:
        """Look at the clocks: what to fire, and when to look again."""
        catch_up: list[Due] = []
        jumped = 0.0
        if self._anchor is not None:
            drift = (wall - self._anchor[0]) - (mono - self._anchor[1])
            if abs(drift) > JUMP:
                jumped = drift
        if self._anchor is None or jumped:
            catch_up = self.plan.state_at(wall, catching_up=True)
            self._upto = wall
            self._next = None
        self._anchor = (wall, mono)
        horizon = wall + self.lead
        due: list[Due] = []
        if horizon > self._upto:
            due = self.plan.between(self._upto, horizon)
            self._upto = horizon
        return Tick(catch_up, due, self._wake(), jumped)

    def _wake(self) -> float | None:
        if self._next is None or not (self._next[1] is None or self._upto < self._next[1]):
            self._next = (self._upto, self.plan.next_time(self._upto))
        following = self._next[1]
        return None if following is None else following - self.lead
