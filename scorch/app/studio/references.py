"""Reference sounds: the figures of a named sound, kept to compare what is heard with.

Each reference is one JSON file under the state directory's ``references/``
(``NAME.json``), written atomically: its loudness, balance, width, tilt, brightness,
tempo and key (:class:`~scorch.audio.reference.Reference`). Only the figures are
kept, not the audio: a reference taken from a room's sound stays whatever the room
plays next.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from pydantic import ValidationError

from scorch.audio import Reference
from scorch.errors import InvalidRequest, ReferenceNotFound
from scorch.primitives.disk import write_json_atomically

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class References:
    """The references of one installation, under ``folder``; thread-safe."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self._lock = threading.Lock()

    def save(self, reference: Reference) -> Path:
        """Keep ``reference`` under its name (replacing one of the same name)."""
        path = self._path(reference.name)
        with self._lock:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                write_json_atomically(path, reference.model_dump(mode="json"), durable=False)
            except OSError as err:
                raise InvalidRequest(f"cannot keep reference {reference.name!r} in "
                                     f"{self.folder}: {err.strerror or err}") from err
        return path

    def get(self, name: str) -> Reference:
        """The reference called ``name``; ReferenceNotFound lists the others."""
        path = self._path(name)
        try:
            return Reference.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            names = [r.name for r in self.list()]
            raise ReferenceNotFound(
                f"no reference {name!r}; references: {', '.join(names) or 'none yet'} "
                "(reference action='capture' keeps one)", name=name, known=names) from None
        except (OSError, ValueError, ValidationError) as err:
            raise ReferenceNotFound(f"reference {name!r} cannot be read ({path}): "
                                    f"{str(err)[:200]}; capture it again", name=name,
                                    known=()) from None

    def list(self) -> list[Reference]:
        """Every readable reference, by name."""
        found = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                found.append(Reference.model_validate(
                    json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, ValidationError):
                continue  # a file that is no reference (or half of one) is not listed
        return found

    def forget(self, name: str) -> Reference:
        """Remove reference ``name``; the reference it was."""
        reference = self.get(name)
        with self._lock:
            self._path(name).unlink(missing_ok=True)
        return reference

    def check_name(self, name: str) -> None:
        """Refuse a name no reference may have (InvalidRequest says what may be)."""
        self._path(name)

    def _path(self, name: str) -> Path:
        if not _NAME.match(name):
            raise InvalidRequest(f"reference name {name[:80]!r}: use letters, digits, '_', "
                                 "'.' and '-' (up to 64, not starting with '.' or '-')")
        return self.folder / f"{name}.json"
