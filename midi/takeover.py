"""Decide what a moved absolute control does to a parameter that is somewhere else.

The three modes are Ableton Live's (Preferences, Link/Tempo/MIDI, Takeover Mode),
in normalised units (0..1 along the control's travel):

- ``immediate``: the parameter jumps to the control.
- ``pickup``: nothing happens until the control reaches or crosses the
  parameter's value, then the parameter follows.
- ``scale``: the parameter moves in the control's direction, scaled so both
  reach the end of the travel together, and follows exactly once they meet.

A button or pad takes no pickup: :func:`button` says where its press puts the param.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Positions closer than this count as meeting (one 7-bit step).
TOLERANCE = 1.0 / 127.0


@dataclass(slots=True)
class Takeover:
    """One control's takeover state for one parameter."""

    mode: str
    """``immediate``, ``pickup`` or ``scale``."""
    control: float | None = None
    """The control's previous position, None until it first moves."""

    def move(self, position: float, current: float | None) -> float | None:
        """Return the parameter's new position, or None to leave it where it is.

        ``current`` is the parameter's position now (None when unknown: then the
        control takes it over at once, since there is nothing to jump from).
        """
        previous, self.control = self.control, position
        if self.mode == "immediate" or current is None or abs(position - current) <= TOLERANCE:
            return position
        if previous is not None and (abs(previous - current) <= TOLERANCE
                                     or (previous - current) * (position - current) <= 0):
            # held it (where it left it, give or take the rounding of the param's curve
            # there and back), reached or crossed it
            return position
        if self.mode == "pickup" or previous is None or position == previous:
            return None
        if position > previous:
            if previous >= 1.0:
                return None
            moved = current + (position - previous) * (1.0 - current) / (1.0 - previous)
        else:
            if previous <= 0.0:
                return None
            moved = current - (previous - position) * current / previous
        return min(1.0, max(0.0, moved))


def button(mode: str, pressed: bool, velocity: float, here: float | None) -> float | None:
    """Where a button or pad puts its param (0..1), or None to leave it.

    ``here``: the param's position now (None: unknown, taken as the bottom).
    """
    if mode == "toggle":
        return (0.0 if (here or 0.0) >= 0.5 else 1.0) if pressed else None
    if mode == "momentary":
        return 1.0 if pressed else 0.0
    return velocity if pressed else None  # velocity: a pad's hit sets it; its release keeps it
