"""Write TOML by hand for files people read and edit: inline values, one table per thing.

Only what scorch writes: strings, booleans, integers, finite floats, lists and
inline tables of those. :func:`tomllib.loads` reads back exactly what was written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    """A key: bare when TOML allows it, else a quoted string."""
    return key if _BARE_KEY.match(key) else toml_string(key)


def toml_string(text: str) -> str:
    """A basic string. JSON's escapes are TOML's, but for DEL, which TOML wants escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    """One value, inline (lists and tables on one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML here holds finite numbers only, found {value!r}")
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}"
                                for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_table(header: str, values: Mapping[str, Any], array: bool = False) -> str:
    """``[header]`` (or ``[[header]]``) and its keys, one per line; None values left out."""
    brackets = ("[[", "]]") if array else ("[", "]")
    lines = [f"{brackets[0]}{header}{brackets[1]}"]
    lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in values.items() if v is not None]
    return "\n".join(lines) + "\n"
