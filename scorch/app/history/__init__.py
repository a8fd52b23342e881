"""The run's history in the state folder and what ``scorch report`` makes of it.

``store`` keeps events and samples in sqlite (bounded), ``summary`` turns them into each
room's figures (pure), ``recorder`` copies the rooms' events into the store while scorch runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.app.history.reading import render
    from scorch.app.history.recorder import Recorder

__all__ = [
    "Recorder", "render",
]
__getattr__ = lazy_face(__name__, __file__)
