"""The page's hours: the schedule (what holds now, what comes next) and the cue list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scorch.errors import ScorchError

if TYPE_CHECKING:
    from scorch.api import LocalService

#: Actions of the schedule shown as coming next.
NEXT = 5


def hours_view(service: LocalService) -> dict[str, Any]:
    """The schedule now and over the next day, and the cue list (each part says why not)."""
    out: dict[str, Any] = {}
    try:
        now = service.call("schedule", {"at": "now"}).model_dump()
        ahead = service.call("schedule", {"next": "24h"}).model_dump()
        out["schedule"] = {"holds": now.get("holds", []), "next": ahead.get("upcoming",
                                                                             [])[:NEXT],
                           "problem": now.get("problem"), "recent": now.get("recent", [])}
    except ScorchError as err:
        out["schedule"] = {"error": str(err)}
    try:
        cues = service.call("cue", {"action": "list"}).model_dump()
        out["cues"] = {key: cues.get(key) for key in ("cues", "standby", "running")}
    except ScorchError as err:
        out["cues"] = {"error": str(err)}
    return out
