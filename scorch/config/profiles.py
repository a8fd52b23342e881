"""Controller profiles: scorch's own (package data) and the user's, read and checked once.

Each file is one device (:mod:`midi.controllers.profile`); an error names the file,
the line and the key (``nanokontrol2.toml:12: controls.0.number: ...``). The user's
profiles (``profiles/`` beside the config file, and in the user's config folder)
replace scorch's of the same file name, so a device reprogrammed away from its
factory mode is described by its owner.
"""

from __future__ import annotations

import functools
import logging
import tomllib
from collections.abc import Iterable
from pathlib import Path

import platformdirs
from pydantic import ValidationError

from midi import controllers
from midi.controllers import Profile, ProfileFile, expand
from scorch.config.lines import fields_at, key_lines, located
from scorch.errors import ConfigError
from scorch.primitives.input import TooDeep, check_toml
from scorch.values import describe_errors

log = logging.getLogger(__name__)

#: The profiles scorch ships.
BUILT_IN = Path(controllers.__file__).resolve().parent / "profiles"
#: Bytes a profile file may hold (the largest device's is some 10 KiB).
MAX_BYTES = 256 * 1024


def parse_profile(text: str, path: Path | str) -> Profile:
    """Read one profile's TOML text; ConfigError says where it is wrong."""
    path = Path(path)
    try:
        check_toml(text, max_bytes=MAX_BYTES, max_items=20_000)
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, TooDeep) as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from err
    lines = key_lines(text)
    try:
        spec = ProfileFile.model_validate(data)
    except ValidationError as err:
        raise ConfigError("\n".join(describe_errors(
            err, where=lambda loc: located(path, lines, loc),
            known=lambda loc: fields_at(ProfileFile, loc), noun="key"))) from err
    try:
        return expand(path.stem, spec)
    except ValueError as err:
        index = str(err).split("]", 1)[0].removeprefix("controls[")
        where = located(path, lines, ("controls", index)) if index.isdigit() else str(path)
        raise ConfigError(f"{where}: {err}") from err


def user_folders(config_source: Path | None) -> list[Path]:
    """Where a user's own profiles are: beside the config file, and in the config folder."""
    folders = [platformdirs.user_config_path("scorch") / "profiles"]
    if config_source is not None:
        folders.insert(0, config_source.parent / "profiles")
    return folders


class Profiles:
    """The known devices: each port name to its profile (any thread; never changed)."""

    def __init__(self, profiles: Iterable[Profile]) -> None:
        self.all = {p.id: p for p in profiles}
        self._named = [p for p in self.all.values() if not p.fallback]
        self._fallback = next((p for p in self.all.values() if p.fallback), None)

    def for_port(self, port: str, fallback: bool = True) -> Profile | None:
        """The profile of the device ``port`` belongs to (the fallback for an unknown one)."""
        for profile in self._named:
            if profile.matches(port):
                return profile
        return self._fallback if fallback else None

    def for_pattern(self, pattern: str) -> list[Profile]:
        """The profiles a route's ``port`` may mean: names it contains or that contain it."""
        if pattern == "*":
            return list(self.all.values())
        lowered = pattern.lower()
        found = [p for p in self._named
                 if any(q.lower() in lowered or lowered in q.lower() for q in p.ports)]
        return found or ([self._fallback] if self._fallback is not None else [])


@functools.cache
def _built_in() -> dict[str, Profile]:
    """scorch's own profiles, read once a process (they are package data)."""
    return {path.stem: parse_profile(path.read_text(encoding="utf-8"), path)
            for path in sorted(BUILT_IN.glob("*.toml"))}


def load_profiles(folders: Iterable[Path] = ()) -> Profiles:
    """scorch's profiles, then those in ``folders`` (a later file of a name wins).

    A broken user file is logged and skipped (the others still load); a broken
    built-in one is a bug and raises.
    """
    found = dict(_built_in())
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                found[path.stem] = parse_profile(path.read_text(encoding="utf-8"), path)
            except (ConfigError, OSError, UnicodeDecodeError) as err:
                log.error("controller profile skipped: %s", err)
    return Profiles(found.values())
