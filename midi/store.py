"""Keep run-time routes in the state directory as JSON, written atomically.

A crash leaves either the old routes or the new ones, never half a file
(:func:`scorch.primitives.disk.files.write_json_atomically`).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from pydantic import ValidationError

from midi.routes import RouteEntry
from midi.schema import ControlRoute, CueRoute, KeyRoute, PageRoute
from scorch.primitives.disk import write_json_atomically

log = logging.getLogger(__name__)

FILENAME = "midi_routes.json"
_VERSION = 1
_MODELS: dict[str, type[ControlRoute | KeyRoute | PageRoute | CueRoute]] = {
    "control": ControlRoute, "key": KeyRoute, "page": PageRoute, "cue": CueRoute}
_TYPES: dict[type, str] = {model: name for name, model in _MODELS.items()}


def save_routes(path: Path, entries: list[RouteEntry]) -> None:
    """Write ``entries`` to ``path`` atomically."""
    document = {
        "version": _VERSION,
        "routes": [
            {
                "id": e.id,
                "type": _TYPES[type(e.route)],
                "route": e.route.model_dump(mode="json"),
            }
            for e in entries
        ],
    }
    write_json_atomically(path, document)


def load_routes(path: Path) -> list[RouteEntry]:
    """Read the routes saved at ``path``; a missing file is none, a bad one is set aside."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as err:
        _set_aside(path, f"unreadable: {err}")
        return []
    entries: list[RouteEntry] = []
    try:
        for item in document["routes"]:
            model = _MODELS[item["type"]]
            entries.append(RouteEntry(item["id"], model.model_validate(item["route"]), "runtime"))
    except (KeyError, TypeError, ValidationError) as err:
        _set_aside(path, f"not a routes file: {err}")
        return []
    return entries


def _set_aside(path: Path, reason: str) -> None:
    aside = path.with_suffix(".corrupt")
    log.error("MIDI routes in %s %s; moved to %s, starting without them", path, reason, aside)
    os.replace(path, aside)
