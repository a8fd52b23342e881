"""room."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from actors.room.actor import Room
    from actors.room.processes import load_timeout
    from actors.room.proxy import RoomProxy

__all__ = [
    "Room", "RoomProxy", "load_timeout",
]
__getattr__ = lazy_face(__name__, __file__)
