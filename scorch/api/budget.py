"""The size budget of a result: how much of one answer a model reads by default.

A result that could grow without bound (posted output, console lines, lists,
histories) keeps by default what fits in :data:`TEXT` characters (the newest
lines, the first items) and says how many it left out and how to ask for them
(``full=true``, a smaller ``since``, a larger ``limit``); its full form comes on
request. MCP cuts any text beyond :data:`HARD` as a last guard.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

#: Characters of a result's text (and, roughly, of its structured content) by default.
TEXT = 12_000
#: No tool's text goes beyond this, whatever it asked for: the MCP front cuts it there.
HARD = 60_000
#: What one item costs beyond its text in the structured content (keys, quotes, numbers).
OVERHEAD = 60

T = TypeVar("T")


def newest(items: Sequence[T], size: Callable[[T], int], budget: int = TEXT) -> list[T]:
    """The last ``items`` whose sizes (plus :data:`OVERHEAD` each) fit in ``budget``; at
    least the last one, cut or not."""
    kept: list[T] = []
    used = 0
    for item in reversed(items):
        used += size(item) + OVERHEAD
        if kept and used > budget:
            break
        kept.append(item)
    kept.reverse()
    return kept


def first(items: Sequence[T], size: Callable[[T], int], budget: int = TEXT) -> list[T]:
    """The first ``items`` that fit in ``budget`` (at least one)."""
    return list(reversed(newest(list(reversed(items)), size, budget)))


def cut(text: str, limit: int, how: str, keep_end: bool = False) -> str:
    """``text`` within ``limit`` characters, saying how many more there are and ``how`` to
    get them."""
    if len(text) <= limit:
        return text
    shown = text[-limit:] if keep_end else text[:limit]
    note = more(len(text) - limit, "characters", how)
    return f"[{note}]\n{shown}" if keep_end else f"{shown}\n[{note}]"


def more(count: int, what: str, how: str) -> str:
    """``"N more WHAT not shown: ask with HOW"``."""
    return f"{count} more {what} not shown: ask with {how}"


def listing(items: Sequence[T], size: Callable[[T], int], full: bool, latest: bool = False,
            budget: int = TEXT) -> tuple[list[T], int]:
    """The items a list answer keeps (all when ``full``; else the first, or the ``latest``,
    that fit ``budget``) and how many it left out."""
    if full:
        return list(items), 0
    kept = newest(items, size, budget) if latest else first(items, size, budget)
    return kept, len(items) - len(kept)


def json_size(item: object) -> int:
    """What ``item`` (a pydantic model, or plain data) costs as JSON, roughly."""
    dump = getattr(item, "model_dump_json", None)
    return len(dump()) if callable(dump) else len(json.dumps(item, default=str))


def lines(rows: Sequence[str], left_out: int, what: str, how: str, empty: str) -> str:
    """``rows`` one a line, with the note of what was left out (when any) last."""
    shown = list(rows)
    if left_out:
        shown.append(f"[{more(left_out, what, how)}]")
    return "\n".join(shown) or empty
