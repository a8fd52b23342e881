"""The control socket and its wire: envelopes, limits, tokens, the server and its clients."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.wire.access import (
        READONLY_TOKEN_FILE,
        TOKEN_FILE,
        WILDCARDS,
        Access,
        bearer,
        is_loopback,
        load_token,
        machine_names,
        same_token,
    )
    from scorch.wire.bridge import Bridge
    from scorch.wire.client import EVICTIONS, IDLE_CONNECTIONS, ControlClient
    from scorch.wire.envelope import (
        MAX_LINE,
        PUBLISH,
        Reply,
        decode_reply,
        find_running,
        request_line,
        socket_path,
    )
    from scorch.wire.limits import REQUEST_LIMITS, Limits, OverLimit, check, loads
    from scorch.wire.once import derive, new_key
    from scorch.wire.server import ControlServer

__all__ = [
    "EVICTIONS",
    "IDLE_CONNECTIONS",
    "MAX_LINE",
    "PUBLISH",
    "READONLY_TOKEN_FILE",
    "REQUEST_LIMITS",
    "TOKEN_FILE",
    "WILDCARDS",
    "Access",
    "Bridge",
    "ControlClient",
    "ControlServer",
    "Limits",
    "OverLimit",
    "Reply",
    "bearer",
    "check",
    "decode_reply",
    "derive",
    "find_running",
    "is_loopback",
    "load_token",
    "loads",
    "machine_names",
    "new_key",
    "request_line",
    "same_token",
    "socket_path",
]
__getattr__ = lazy_face(__name__, __file__)
