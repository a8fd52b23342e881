"""scorch's OSC door: surfaces on phones and tablets set params, recall scenes, GO on cues."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.osc.door import OscDoor, open_door

__all__ = [
    "OscDoor", "open_door",
]
__getattr__ = lazy_face(__name__, __file__)
