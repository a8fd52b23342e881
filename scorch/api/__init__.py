"""The operations every front end calls, and the services that run them here or elsewhere."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.api.coordinator import Coordinator
    from scorch.api.firing import Firing
    from scorch.api.live import live_view, meters_now
    from scorch.api.local import LocalService
    from scorch.api.operation import Access, Args, Operation, Result, Service
    from scorch.api.progress import PROGRESS, Listener
    from scorch.api.remote import RemoteService

__all__ = [
    "PROGRESS",
    "Access",
    "Args",
    "Coordinator",
    "Firing",
    "Listener",
    "LocalService",
    "Operation",
    "RemoteService",
    "Result",
    "Service",
    "live_view",
    "meters_now",
]
__getattr__ = lazy_face(__name__, __file__)
