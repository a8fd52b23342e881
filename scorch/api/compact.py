"""Any result as compact text: what a model reads where a result has no text of its own.

Indented JSON spends most of its characters on quotes, braces and indentation; this
says the same in ``key: value`` lines. Empty values are left out (a null, an empty
list or object), a list of plain values is one line, an object of plain values is
``key=value`` pairs on one line, and each object of a list is one line when it is
flat, an indented block when it is not. The structured content keeps every field as
it is; this is only the text. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: A line of ``key=value`` pairs longer than this becomes an indented block.
WIDE = 160
INDENT = "  "


def render(data: Mapping[str, Any]) -> str:
    """``data`` (a model's JSON dump) as ``key: value`` lines; ``(nothing)`` when all is empty."""
    return "\n".join(_lines(data, "")) or "(nothing)"


def scalar(value: Any) -> str:
    """A plain value as a person writes it: 96 for 96.0, true, a string as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple, dict, str)) and not value)


def _plain(value: Any) -> bool:
    return not isinstance(value, (list, tuple, dict)) and not (
        isinstance(value, str) and "\n" in value)


def _inline(item: Mapping[str, Any]) -> str | None:
    """A flat object as ``key=value`` pairs on one line (None: it is not flat, or too wide)."""
    pairs = []
    for key, value in item.items():
        if _empty(value):
            continue
        if _plain(value):
            pairs.append(f"{key}={scalar(value)}")
        elif isinstance(value, (list, tuple)) and all(_plain(v) for v in value):
            pairs.append(f"{key}=[{', '.join(scalar(v) for v in value)}]")
        else:
            return None
    line = ", ".join(pairs)
    return line if len(line) <= WIDE else None


def _lines(data: Mapping[str, Any], indent: str) -> list[str]:
    out: list[str] = []
    for key, value in data.items():
        if _empty(value):
            continue
        if _plain(value):
            out.append(f"{indent}{key}: {scalar(value)}")
        elif isinstance(value, str):  # several lines: a block under its key
            out.append(f"{indent}{key}:")
            out.extend(f"{indent}{INDENT}{line}" for line in value.splitlines())
        elif isinstance(value, Mapping):
            flat = _inline(value)
            if flat is not None:
                out.append(f"{indent}{key}: {flat}")
            else:
                out.append(f"{indent}{key}:")
                out.extend(_lines(value, indent + INDENT))
        else:
            out.extend(_items(key, value, indent))
    return out


def _items(key: str, items: Sequence[Any], indent: str) -> list[str]:
    if all(_plain(v) for v in items):
        return [f"{indent}{key}: {', '.join(scalar(v) for v in items)}"]
    out = [f"{indent}{key}:"]
    for item in items:
        if _plain(item) or isinstance(item, str):
            first, *rest = scalar(item).splitlines() or [""]
            out.append(f"{indent}- {first}")
            out.extend(f"{indent}{INDENT}{line}" for line in rest)
        elif isinstance(item, Mapping):
            flat = _inline(item)
            if flat is not None:
                out.append(f"{indent}- {flat}")
                continue
            block = _lines(item, indent + INDENT)
            if block:
                out.append(f"{indent}- {block[0].lstrip()}")
                out.extend(block[1:])
        else:
            out.extend(_items("-", item, indent + INDENT))
    return out
