"""SuperCollider's warp names (``Warp.warps``) and the aliases ControlSpec accepts."""

from __future__ import annotations

#: Every name a ControlSpec's warp may be given, to its short name.
WARP_ALIASES = {
    "lin": "lin", "linear": "lin",
    "exp": "exp", "exponential": "exp",
    "sin": "sin", "sine": "sin",
    "cos": "cos", "cosine": "cos",
    "amp": "amp",
    "db": "db",
}
