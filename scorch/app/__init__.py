"""The facade: an Orchestra composing one component per feature (``orch.rooms``, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.app.models import (
        BufferInfo,
        NodeInfo,
        RoomRow,
        RoomState,
        RoomStatus,
        SampleInfo,
        ServerFields,
        StageInfo,
    )
    from scorch.app.notes import Notes, Span
    from scorch.app.orchestra import Orchestra
    from scorch.app.partner import Controls
    from scorch.app.scenes import MAX_MORPH_SECONDS, Applied
    from scorch.app.sessions import Reading, parse, render
    from scorch.app.undo import Scope, Step

__all__ = [
    "MAX_MORPH_SECONDS",
    "Applied",
    "BufferInfo",
    "Controls",
    "NodeInfo",
    "Notes",
    "Orchestra",
    "Reading",
    "RoomRow",
    "RoomState",
    "RoomStatus",
    "SampleInfo",
    "Scope",
    "ServerFields",
    "Span",
    "StageInfo",
    "Step",
    "parse",
    "render",
]
__getattr__ = lazy_face(__name__, __file__)
