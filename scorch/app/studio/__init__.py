"""The studio: recordings, renders, listening, references and sweeps of a room's sound."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.app.studio.capture import AUDIO_BUSES, MAX_SECONDS, Source
    from scorch.app.studio.renderer import MAX_RENDER, Rendered
    from scorch.app.studio.studio import Heard, Studio
    from scorch.app.studio.sweep import Axis, Step, Target, closest, run

__all__ = [
    "AUDIO_BUSES",
    "MAX_RENDER",
    "MAX_SECONDS",
    "Axis",
    "Heard",
    "Rendered",
    "Source",
    "Step",
    "Studio",
    "Target",
    "closest",
    "run",
]
__getattr__ = lazy_face(__name__, __file__)
