"""Named pieces of sclang code: the starter snippets shipped with scorch and the person's own.

A snippet is one ``NAME.scd`` file whose first lines are a header of
``// key: value`` comments (``description``, ``tags``, ``runs``, ``stop``), ended
by the first other line (a blank one is dropped), then the code.
Built-in snippets live in the package (:data:`BUILTIN_DIR`) and are read-only;
saved ones go to the user directory. A user snippet cannot take a built-in's
name, so a name always means one thing.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scorch import bundled
from scorch.errors import (
    InvalidSnippet,
    ReadOnlySnippet,
    SnippetExists,
    Unavailable,
    UnknownSnippet,
)
from scorch.primitives.disk import write_atomically

BUILTIN_DIR = bundled.folder("scorch.knowledge", "snippets")

NAME_RULE = ("1 to 40 characters: lower-case letters, digits, '-' and '_', "
             "starting with a letter or digit")

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_HEADER = re.compile(r"//\s*([a-z]+):\s?(.*)")
_HEADER_KEYS = ("description", "tags", "runs", "stop")
_MAX_DESCRIPTION = 300


@dataclass(frozen=True)
class Snippet:
    """One snippet with its header read."""

    name: str
    description: str
    tags: tuple[str, ...]
    runs: str
    """How long it plays ("5 s, then stops by itself", "until stopped ..."); may be empty."""
    stop: str
    """sclang code that stops it, for one that plays until stopped; else empty."""
    code: str
    """The code after the header, ready to evaluate."""
    builtin: bool
    path: Path

    def ends_after(self) -> float | None:
        """Return the seconds it plays before it stops by itself, None if it plays on."""
        match = re.match(r"\s*(\d+(?:\.\d+)?)\s*s\b", self.runs)
        return float(match.group(1)) if match else None


def validate_name(name: str) -> str:
    """Return ``name`` if it is a valid snippet name; raise InvalidSnippet saying the rule."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidSnippet(f"invalid snippet name {name!r}: use {NAME_RULE}")
    return name


def parse_snippet(text: str, name: str, *, builtin: bool, path: Path) -> Snippet:
    """Split a snippet file into its header fields and its code."""
    fields: dict[str, str] = {}
    lines = text.splitlines()
    body_start = 0
    for index, line in enumerate(lines):
        match = _HEADER.fullmatch(line.strip())
        if match is None or match.group(1) not in _HEADER_KEYS:
            break
        fields[match.group(1)] = match.group(2).strip()
        body_start = index + 1
    # One blank line ends a header, so saved code may itself start with "// tags: ...".
    if body_start < len(lines) and not lines[body_start].strip():
        body_start += 1
    code = "\n".join(lines[body_start:]).strip("\n") + "\n"
    return Snippet(name=name, description=fields.get("description", ""),
                   tags=_split_tags(fields.get("tags", "")), runs=fields.get("runs", ""),
                   stop=fields.get("stop", ""), code=code, builtin=builtin, path=path)


def render_snippet(code: str, description: str, tags: Iterable[str], runs: str = "") -> str:
    """Return the file text for a snippet: header comments, then the code."""
    header = [f"// description: {description}", f"// tags: {', '.join(tags)}"]
    if runs:
        header.append(f"// runs: {runs}")
    return "\n".join(header) + "\n\n" + code.strip("\n") + "\n"


class SnippetStore:
    """The built-in snippets (read-only) and the person's saved ones (``user_dir``)."""

    def __init__(self, user_dir: Path | str, builtin_dir: Path | str | None = None) -> None:
        self.user_dir = Path(user_dir)
        self.builtin_dir = Path(builtin_dir) if builtin_dir is not None else BUILTIN_DIR

    def list(self, tag: str | None = None, text: str | None = None) -> builtins.list[Snippet]:
        """Return the snippets, sorted by name, with ``tag`` and containing ``text`` if given.

        ``text`` is matched case-insensitively against name, description, tags and code.
        """
        wanted_tag = tag.strip().lower() if tag else None
        needle = text.strip().lower() if text else None
        found = []
        for snippet in self._all():
            if wanted_tag and wanted_tag not in snippet.tags:
                continue
            haystack = " ".join([snippet.name, snippet.description, *snippet.tags, snippet.code])
            if needle and needle not in haystack.lower():
                continue
            found.append(snippet)
        return found

    def show(self, name: str) -> Snippet:
        """Return the snippet called ``name``; raise UnknownSnippet naming the close ones."""
        validate_name(name)
        for builtin, path in ((True, self.builtin_dir / f"{name}.scd"),
                              (False, self.user_dir / f"{name}.scd")):
            if path.is_file():
                return self._read(path, builtin)
        known = [s.name for s in self._all()]
        raise UnknownSnippet(f"no snippet named {name!r}; known: {', '.join(known) or 'none'}",
                             name=name, known=known)

    def save(self, name: str, code: str, description: str = "",
             tags: Iterable[str] = (), *, replace: bool = False) -> Snippet:
        """Save a user snippet; replacing one needs ``replace``; built-ins are read-only."""
        validate_name(name)
        if (self.builtin_dir / f"{name}.scd").is_file():
            raise ReadOnlySnippet(f"{name!r} is a built-in snippet and is read-only; "
                                  "save yours under another name")
        if not code.strip():
            raise InvalidSnippet("a snippet needs some code")
        clean_tags = [validate_tag(t) for t in tags]
        line = " ".join(description.split())
        if len(line) > _MAX_DESCRIPTION:
            raise InvalidSnippet(f"the description is {len(line)} characters; "
                                 f"keep it under {_MAX_DESCRIPTION}")
        target = self.user_dir / f"{name}.scd"
        if target.exists() and not replace:
            raise SnippetExists(f"a saved snippet is already named {name!r}; "
                                "pass replace = true to overwrite it")
        write_atomically(target, render_snippet(code, line, clean_tags).encode("utf-8"))
        return self._read(target, builtin=False)

    def delete(self, name: str) -> None:
        """Delete a user snippet; raise ReadOnlySnippet for a built-in, UnknownSnippet if none."""
        validate_name(name)
        if (self.builtin_dir / f"{name}.scd").is_file():
            raise ReadOnlySnippet(f"{name!r} is a built-in snippet: built-ins are read-only "
                                  "and cannot be deleted")
        try:
            (self.user_dir / f"{name}.scd").unlink()
        except FileNotFoundError:
            saved = [s.name for s in self._all() if not s.builtin]
            raise UnknownSnippet(f"no saved snippet named {name!r}", name=name,
                                 known=saved) from None

    def _all(self) -> builtins.list[Snippet]:
        found: dict[str, Snippet] = {}
        for builtin, directory in ((False, self.user_dir), (True, self.builtin_dir)):
            if not directory.is_dir():
                continue
            for path in directory.glob("*.scd"):
                if _NAME.fullmatch(path.stem):  # a hand-made file with another name is ignored
                    found[path.stem] = self._read(path, builtin)
        return [found[name] for name in sorted(found)]

    @staticmethod
    def _read(path: Path, builtin: bool) -> Snippet:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise Unavailable(f"cannot read snippet {path.stem!r} ({path}): {err.strerror}"
                              ) from err
        return parse_snippet(text, path.stem, builtin=builtin, path=path)


def validate_tag(tag: str) -> str:
    """Return ``tag`` lower-cased if it is a valid tag; raise InvalidSnippet saying the rule."""
    clean = tag.strip().lower()
    if not _NAME.fullmatch(clean):
        raise InvalidSnippet(f"invalid tag {tag!r}: use {NAME_RULE}")
    return clean


def _split_tags(text: str) -> tuple[str, ...]:
    return tuple(t for t in (part.strip().lower() for part in text.split(",")) if t)
