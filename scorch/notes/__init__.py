"""Notes as data: capture, compact text, Standard MIDI Files and a playing partner.

Pure: no threads, sockets or processes. The router, the rooms and the API feed
these modules and read them; nothing here knows who they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.notes.capture import (
        OUTPUT,
        PARTNER,
        PLACES,
        ROOM,
        Capture,
        Note,
        NoteRing,
        is_input,
        place,
    )
    from scorch.notes.partner import DEFAULT_ORDER, MAX_ORDER, Partner, Phrase, key
    from scorch.notes.pbind import velocity_of

__all__ = [
    "DEFAULT_ORDER",
    "MAX_ORDER",
    "OUTPUT",
    "PARTNER",
    "PLACES",
    "ROOM",
    "Capture",
    "Note",
    "NoteRing",
    "Partner",
    "Phrase",
    "is_input",
    "key",
    "place",
    "velocity_of",
]
__getattr__ = lazy_face(__name__, __file__)
