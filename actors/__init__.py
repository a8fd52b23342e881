"""The actors: each room, the router, the supervisor and its watchdog, the keeper, JACK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from actors.conductor import ConductorProxy
    from actors.supervisor import Supervisor, SupervisorProxy
    from actors.watchdog import WatchdogProxy

__all__ = [
    "ConductorProxy", "Supervisor", "SupervisorProxy", "WatchdogProxy",
]
__getattr__ = lazy_face(__name__, __file__)
