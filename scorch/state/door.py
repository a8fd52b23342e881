"""A room's doors: to its scsynth and to its sclang, as the room's actor opens and shuts them.

:func:`doors_of` makes them with the room's own error for a call that finds a door
shut: the state its view shows says why (BOOTING, RESTARTING, FAILED, sclang down).
"""

from __future__ import annotations

from typing import NamedTuple

from scorch.errors import RoomNotReady, ScorchError
from scorch.primitives.sclang import SclangDoor
from scorch.primitives.scsynth import ScsynthDoor
from scorch.state.view import RoomView


class Door(NamedTuple):
    """The ways into one room's processes that anyone but its actor may use."""

    scsynth: ScsynthDoor
    """Its scsynth (OSC)."""
    sclang: SclangDoor
    """Its sclang (code)."""


def doors_of(view: RoomView) -> Door:
    """A room's doors, shut until its actor opens them; a call then raises what the view says."""

    def no_scsynth() -> ScorchError:
        return _why(view, need_sclang=False, what="scsynth is not running")

    def no_sclang() -> ScorchError:
        return _why(view, need_sclang=True, what="sclang is not attached")

    return Door(ScsynthDoor(view.name, no_scsynth), SclangDoor(view.name, no_sclang))


def _why(view: RoomView, need_sclang: bool, what: str) -> ScorchError:
    snap = view.snapshot
    try:
        snap.require_ready(sclang_attached=False, need_sclang=need_sclang)
    except ScorchError as err:
        return err
    return RoomNotReady(f"room {view.name!r} is {snap.state}, but {what} (a moment "
                            "between two processes); try again shortly")
