"""The values every edge checks: names, numbers scsynth can hold, bounded text.

The API schema, ``config.toml`` and the MIDI routes all build on these types,
so a value refused in one place is refused everywhere with the same words.
:func:`describe_errors` turns pydantic's errors into lines a person reads.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    WithJsonSchema,
)

#: Names of rooms, groups, nodes, routes, SynthDefs: short, safe in file
#: names, OSC, sclang symbols and shell arguments.
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
NAME_RULE = "1-64 characters: a letter, then letters, digits, _ or -"
#: A name, or ``*`` for every room.
SELECTOR_PATTERN = r"^(\*|[A-Za-z][A-Za-z0-9_-]{0,63})$"
#: The largest finite float32: scsynth's controls are float32, so OSC floats are too.
FLOAT32_MAX = 3.4028234663852886e38
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
#: Shown of a bad value in an error: enough to recognise it, never a flood.
SHOWN = 80


class StrictModel(BaseModel):
    """A model read at an edge: an unknown key is an error, and it never changes once read."""

    # Built on first use: `scorch run` imports every operation's models and uses few.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def shorten(value: object, limit: int = SHOWN) -> str:
    """``repr(value)`` cut to ``limit`` characters, saying how long it was."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}... ({len(text)} characters)"


def _float32(value: float) -> float:
    if not math.isfinite(value) or abs(value) > FLOAT32_MAX:
        raise ValueError(f"must be a finite number within float32 range (|x| <= 3.4e38), "
                         f"found {shorten(value)}")
    return value


def no_nul(text: str) -> str:
    """Refuse text with a NUL byte: C strings, sclang and SQLite would cut it short there."""
    if "\x00" in text:
        raise ValueError(f"must not contain a NUL byte (at character {text.index(chr(0)) + 1})")
    return text


def name_check(kind: str) -> Callable[[str], str]:
    """A validator that refuses anything but a name, saying what kind of name it wanted."""
    pattern = re.compile(NAME_PATTERN)

    def check(value: str) -> str:
        if not pattern.fullmatch(value):  # whole: re.match with $ takes "verse\n"
            raise ValueError(f"{kind} must be {NAME_RULE}, found {shorten(value)}")
        return value

    return check


Float32 = Annotated[float, Strict(), AfterValidator(_float32), WithJsonSchema(
    {"type": "number", "minimum": -FLOAT32_MAX, "maximum": FLOAT32_MAX})]
"""A finite number scsynth can hold as a control value (ints are accepted)."""

Int32 = Annotated[int, Strict(), Field(ge=INT32_MIN, le=INT32_MAX)]

#: What the JSON schema says of a name (the check itself is name_check's, with its message);
#: the pattern bounds its length (64).
_NAME_SCHEMA = WithJsonSchema({"type": "string", "pattern": NAME_PATTERN})

RoomName = Annotated[str, Strict(), AfterValidator(name_check("a room name")),
                         _NAME_SCHEMA]
GroupName = Annotated[str, Strict(), AfterValidator(name_check("a group name")), _NAME_SCHEMA]
NodeName = Annotated[str, Strict(), AfterValidator(name_check("a node name")), _NAME_SCHEMA]
ParamName = Annotated[str, Strict(), AfterValidator(name_check("a param name")), _NAME_SCHEMA]
SynthDefName = Annotated[str, Strict(), AfterValidator(name_check("a SynthDef name")),
                         _NAME_SCHEMA]
RouteId = Annotated[str, Strict(), AfterValidator(name_check("a route id")), _NAME_SCHEMA]
BufferName = Annotated[str, Strict(), AfterValidator(name_check("a buffer name")), _NAME_SCHEMA]
SessionName = Annotated[str, Strict(), AfterValidator(name_check("a session name")),
                        _NAME_SCHEMA]
SceneName = Annotated[str, Strict(), AfterValidator(name_check("a scene name")), _NAME_SCHEMA]
HostName = Annotated[str, Strict(), AfterValidator(name_check("a host name")), _NAME_SCHEMA]
"""A host's name in the config (``[hosts.NAME]``), not its network address."""


def _selector(value: str) -> str:
    return value if value == "*" else name_check("a room or group name")(value)


Selector = Annotated[str, Strict(), AfterValidator(_selector), WithJsonSchema(
    {"type": "string", "pattern": SELECTOR_PATTERN})]
"""A room name, a group name, or ``*`` for every room."""

Text = Annotated[str, Strict(), AfterValidator(no_nul)]
"""Any text without a NUL byte (bounded where it is used)."""

Flag = Annotated[bool, Strict()]
"""true or false only: not "yes", not 1."""

Seconds = Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]
"""A finite, positive duration in seconds (bound it further where it is used)."""


Where = Callable[[tuple[str, ...]], str]
"""Where a key path is (e.g. ``config.toml:12``), for the start of its line."""
Known = Callable[[tuple[str, ...]], list[str]]
"""The valid keys beside a key path, to suggest the nearest for an unknown one."""


def describe_errors(err: ValidationError, where: Where | None = None, known: Known | None = None,
                    noun: str = "argument") -> list[str]:
    """One line per problem: the key's path, what was wrong, the bad value shortened."""
    return [_line(item, where, known, noun) for item in err.errors(include_url=False)]


def _line(item: Any, where: Where | None, known: Known | None, noun: str) -> str:
    loc = tuple(str(part) for part in item["loc"] if part != "[key]")
    key = ".".join(loc) or "(top level)"
    message = str(item["msg"]).removeprefix("Value error, ")
    if item["type"] == "missing":
        message = f"this {noun} is required"
    elif item["type"] == "extra_forbidden":
        message = f"unknown {noun}"
        valid = known(loc[:-1]) if known is not None else []
        near = difflib.get_close_matches(loc[-1], valid, n=1) if loc else []
        if near:
            message += f"; did you mean {near[0]!r}?"
        elif valid:
            message += f"; valid: {', '.join(valid)}"
    elif item["type"] not in ("value_error", "assertion_error") and "input" in item:
        found = item["input"]
        if not isinstance(found, dict | list):
            message += f", found {shorten(found)}"
    prefix = f"{where(loc)}: " if where is not None else ""
    return f"{prefix}{key}: {message}"
