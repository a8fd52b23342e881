"""Where a key of a TOML file is: its line, and the keys a table may hold.

Used to locate config and session errors (``file:line: key.path: what``) and to
suggest the nearest valid key. Pure: text and pydantic models in, names out.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BaseModel


def located(path: Path, lines: dict[tuple[str, ...], int], loc: tuple[str, ...]) -> str:
    """``path:line`` of the deepest part of ``loc`` the file defines (``path`` if none)."""
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return f"{path}:{lines[loc[:end]]}"
    return str(path)



def _unwrap(annotation: Any) -> Any:
    """Find the model class inside Optional/Union/Annotated/containers, if any."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _unwrap(arg)
            if found is not None:
                return found
    is_model = isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation if is_model else None


def fields_at(root: type[BaseModel], loc: tuple[str, ...]) -> list[str]:
    """The valid keys of the table at ``loc`` under ``root`` (walking models, dicts, lists)."""
    annotation: Any = root
    for part in loc:
        model = _unwrap(annotation)
        if model is not None and part in model.model_fields:
            annotation = model.model_fields[part].annotation
            continue
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is dict:
            annotation = args[1]
        elif origin in (tuple, list):
            annotation = args[0]
        else:
            model = _unwrap(annotation)
            if model is None:
                return []
            annotation = model
    model = _unwrap(annotation)
    if model is None:
        return []
    return [field.alias or name for name, field in model.model_fields.items()
            if not field.exclude]


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map key paths to the 1-based line that defines them (tables and keys)."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    array_counts: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            parts = tuple(p.strip().strip('"') for p in header.group(2).split("."))
            if header.group(1) == "[[":
                index = array_counts.get(parts, 0)
                array_counts[parts] = index + 1
                table = (*parts, str(index))
            else:
                table = parts
            lines.setdefault(table, number)
            for end in range(1, len(table)):
                lines.setdefault(table[:end], number)
            continue
        key = _KEY.match(line)
        if key:
            lines.setdefault((*table, key.group(1).strip('"')), number)
    return lines
