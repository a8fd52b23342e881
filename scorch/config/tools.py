"""``[mcp] tools``: which MCP tools a conversation carries: all, a named profile, or a list.

Every tool's name, description and schema is read by the model before the first word
of every conversation; a profile carries only what one kind of work needs. The value
is ``"all"`` (the default), a profile's name (:data:`PROFILES`), or a list of tool
names; ``scorch mcp --tools`` (and the MCP Bundle's setting) gives the same as text,
names separated by commas.

The standard library alone: ``scorch mcp`` reads the choice before the MCP SDK loads,
to answer the handshake with the tool list of that choice (``mcp_server.early``).
The tools themselves are the operations' (``scorch.api``, above this layer): a list's
names are checked against them by :func:`problems` with the names given.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Sequence
from pathlib import Path

#: The whole list.
ALL = "all"

#: The tools of each kind of work (a tool that shows the panel brings the panel's own).
PROFILES: dict[str, tuple[str, ...]] = {
    # A musician: sounds, patterns, notes and a partner, the tempo, hearing it, undo.
    "play": ("list_instances", "play", "set", "release", "stop", "synthdefs", "pattern",
             "playing", "tempo", "notes", "partner", "listen", "undo"),
    # A technician: the rooms' health and life, the machine, the saved state, MIDI routes.
    "installation": ("list_instances", "status", "instance", "events", "console", "doctor",
                     "playing", "stop", "set", "midi", "tempo", "session", "scene", "record",
                     "listen", "gain", "undo"),
    # A live coder: code and its output, the docs and history, patterns, hearing it, undo.
    "code": ("list_instances", "status", "execute", "console", "wait_for", "docs", "history",
             "snippet", "synthdefs", "pattern", "playing", "stop", "tempo", "listen",
             "events", "undo"),
}

#: A line that may set ``tools`` (``tools =``, ``mcp.tools =``, ``mcp = { tools = ...}``),
#: not a comment: without one, the file is not parsed (tomllib costs the early answer tens
#: of ms, and the starter config mentions ``tools`` in a comment).
_SETS_TOOLS = re.compile(r"^(?!\s*#).*\btools\s*=", re.MULTILINE)

Choice = str | list[str]
"""What ``[mcp] tools`` holds: ``all``, a profile's name, or tool names."""


def from_option(text: str) -> Choice:
    """The choice ``--tools TEXT`` gives: ``all``, a profile, or names separated by commas."""
    text = text.strip()
    if not text or text == ALL or text in PROFILES:
        return text or ALL
    return [name.strip() for name in text.split(",") if name.strip()]


def valid(choice: Choice) -> Choice:
    """The choice, if it has the right shape (a config's check); else ValueError."""
    wrong = problems(choice)
    if wrong is not None:
        raise ValueError(wrong)
    return choice


def requested(config: Path, option: str | None = None) -> object:
    """The choice as asked for, unchecked: ``option`` (``--tools``) when given, else the
    ``[mcp] tools`` of the file at ``config`` (``all`` when it has none or does not read)."""
    if option is not None:
        return from_option(option)
    try:
        text = config.read_text(encoding="utf-8")
        if not _SETS_TOOLS.search(text):
            return ALL
        import tomllib

        table = tomllib.loads(text).get("mcp", {})
    except (OSError, ValueError):  # the server says what is wrong with the file
        return ALL
    return table.get("tools", ALL) if isinstance(table, dict) else ALL


def key(choice: object) -> str:
    """A short name for a choice, to keep its handshake answers apart ("" for all)."""
    if choice == ALL:
        return ""
    if isinstance(choice, str) and choice in PROFILES:
        return choice
    text = json.dumps(choice, sort_keys=True, default=str)
    return "list-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def problems(choice: object, known: Collection[str] | None = None) -> str | None:
    """What is wrong with a choice, or None; ``known``: the tools there are (None: names are
    not checked, only the shape)."""
    import difflib  # only for a message

    if isinstance(choice, str):
        if choice == ALL or choice in PROFILES:
            return None
        near = difflib.get_close_matches(choice, [ALL, *PROFILES], n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        return (f"no tool profile {choice[:60]!r}; {hint}give {ALL!r}, one of "
                f"{', '.join(map(repr, PROFILES))}, or a list of tool names")
    if not isinstance(choice, list) or not all(isinstance(name, str) for name in choice):
        return f"expected {ALL!r}, a profile's name or a list of tool names, found {choice!r:.80}"
    if not choice:
        return "an empty list of tools: give at least one, or 'all'"
    doubled = sorted({name for name in choice if choice.count(name) > 1})
    if doubled:
        return f"tools named twice: {', '.join(doubled)}"
    if known is not None:
        unknown = [(name, difflib.get_close_matches(name, list(known), n=1))
                   for name in choice if name not in known]
        if unknown:
            said = ", ".join(f"{name!r} (did you mean {near[0]!r}?)" if near else repr(name)
                             for name, near in unknown)
            return f"no tool {said}; the tools are: {', '.join(known)}"
    return None


def chosen(choice: Choice, known: Sequence[str]) -> list[str]:
    """The tools a valid choice names, in ``known``'s order."""
    wanted = set(known) if choice == ALL else set(
        PROFILES[choice] if isinstance(choice, str) else choice)
    return [name for name in known if name in wanted]
