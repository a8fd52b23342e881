"""The technician's page: ``scorch run`` serves it when ``[web] listen`` is set (docs/web.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.web.metrics import MetricsServer, RoomCollector
    from scorch.web.serve import WebServer

__all__ = [
    "MetricsServer", "RoomCollector", "WebServer",
]
__getattr__ = lazy_face(__name__, __file__)
