"""Other hosts of the installation: links to them, their rooms, and what crosses the link."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.hosts.channel import Channel, open_channel
    from scorch.hosts.link import CONNECT_TIMEOUT, HostInfo, HostLink, HostState
    from scorch.hosts.remote_rooms import HostRooms

__all__ = [
    "CONNECT_TIMEOUT", "Channel", "HostInfo", "HostLink", "HostRooms", "HostState",
    "open_channel",
]
__getattr__ = lazy_face(__name__, __file__)
