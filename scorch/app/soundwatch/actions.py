"""The call each action of ``[watch]`` is, in the tools' words (made through the firer)."""

from __future__ import annotations

from scorch.config import RECALL, WatchConfig
from scorch.primitives.synthdefs import GAIN_FLOOR_DB
from scorch.schedule import Call

#: Seconds the lower_gain action fades over.
LOWER_FADE = 2.0


def action_call(room: str, action: str, watch: WatchConfig, gain_db: float) -> Call:
    """The operation call an action in ``room`` is (the tools' words); ``gain_db``: now."""
    if action == "restart":
        return Call("instance", {"action": "restart", "name": room})
    if action.startswith(RECALL):
        return Call("scene", {"action": "recall", "name": action[len(RECALL):].strip(),
                              "instance": room})
    return Call("gain", {"instance": room, "fade": LOWER_FADE,
                         "db": max(GAIN_FLOOR_DB, round(gain_db - watch.lower_db, 1))})
