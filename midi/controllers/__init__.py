"""Controllers by name: device profiles, their feedback language, pages of mappings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from midi.controllers.devices import describe, groups, has_feedback, pair
    from midi.controllers.echoes import WINDOW, Echoes
    from midi.controllers.feedback import address, encode
    from midi.controllers.profile import (
        Control,
        ControlName,
        Feedback,
        Profile,
        ProfileFile,
        expand,
    )

__all__ = [
    "WINDOW",
    "Control",
    "ControlName",
    "Echoes",
    "Feedback",
    "Profile",
    "ProfileFile",
    "address",
    "describe",
    "encode",
    "expand",
    "groups",
    "has_feedback",
    "pair",
]
__getattr__ = lazy_face(__name__, __file__)
