"""scorch's OSC address space: what a message from a surface asks, read without trusting it.

::

    /scorch/ROOM/NODE/PARAM value      set a named node's param (no value: ask for it)
    /scorch/scene/recall NAME [1]      recall a scene (a button's 0, its release, is nothing)
    /scorch/scene/morph NAME position  morph toward a scene, 0..1
    /scorch/cue/go NUMBER [at]         GO on a cue (the `cue` tool's go; at: Unix seconds)
    /scorch/panic [1]                  all notes off everywhere
    /scorch/surface/add [port]         send me every param change (to port, else the sender's)
    /scorch/surface/remove [port]      stop

Pure: :func:`parse` takes a decoded message and returns a command, or raises
:class:`~scorch.errors.InvalidRequest` saying what was wrong.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from scorch.errors import InvalidRequest
from scorch.primitives import OscArg, OscMessage

PREFIX = "/scorch"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
#: A cue's number as schedules write them: 1, 2.5, 10a.
_CUE = re.compile(r"^[0-9][0-9A-Za-z._-]{0,31}$")
#: Words of the address space that are never a room's name.
RESERVED = frozenset({"scene", "cue", "panic", "surface"})


class SetParam(NamedTuple):
    """Set a named node's param, or (``value`` None) ask for its value."""

    room: str
    node: str
    param: str
    value: float | None


class Scene(NamedTuple):
    """Recall a scene, or morph toward it to ``position``."""

    action: str
    name: str
    position: float | None


class CueGo(NamedTuple):
    """GO on a cue of the schedule."""

    number: str
    at: float | None


class Panic(NamedTuple):
    """All notes off everywhere."""


class Surface(NamedTuple):
    """Register (or unregister) the sender as a surface told every change."""

    add: bool
    port: int | None


class Nothing(NamedTuple):
    """A message that asks nothing (a button's release)."""


Command = SetParam | Scene | CueGo | Panic | Surface | Nothing


def param_address(room: str, node: str, param: str) -> str:
    """The address of one param, as surfaces send and are sent it."""
    return f"{PREFIX}/{room}/{node}/{param}"


def parse(message: OscMessage) -> Command:
    """What ``message`` asks; InvalidRequest says why it asks nothing scorch does."""
    parts = message.address.split("/")
    if len(parts) < 3 or parts[0] != "" or "/" + parts[1] != PREFIX:
        raise InvalidRequest(f"{_short(message.address)}: not under {PREFIX}/")
    words, args = parts[2:], message.args
    head = words[0]
    if head == "panic" and len(words) == 1:
        return Nothing() if _released(args) else Panic()
    if head == "scene" and len(words) == 2 and words[1] in ("recall", "morph"):
        return _scene(words[1], args)
    if head == "cue" and words[1:] == ["go"]:
        return _cue(args)
    if head == "surface" and len(words) == 2 and words[1] in ("add", "remove"):
        port = _int(args[0], "port") if args else None
        if port is not None and not 1 <= port <= 65535:
            raise InvalidRequest(f"surface port must be 1-65535, found {port}")
        return Surface(words[1] == "add", port)
    if len(words) == 3 and head not in RESERVED:
        room, node, param = (_name(w, k) for w, k in zip(words, ("room", "node", "param"),
                                                          strict=True))
        if len(args) > 1:
            raise InvalidRequest(f"{_short(message.address)}: one value, found {len(args)}")
        return SetParam(room, node, param, _number(args[0], "value") if args else None)
    raise InvalidRequest(f"{_short(message.address)}: no such address; see "
                         f"{PREFIX}/ROOM/NODE/PARAM, {PREFIX}/scene/recall, {PREFIX}/cue/go, "
                         f"{PREFIX}/panic, {PREFIX}/surface/add")


def _scene(action: str, args: tuple[OscArg, ...]) -> Command:
    if not args or not isinstance(args[0], str):
        raise InvalidRequest(f"{PREFIX}/scene/{action} takes the scene's name first")
    name = _name(args[0], "scene")
    if action == "recall":
        if len(args) > 2:
            raise InvalidRequest(f"{PREFIX}/scene/recall takes a name (and a button's value)")
        return Nothing() if _released(args[1:]) else Scene("recall", name, None)
    if len(args) != 2:
        raise InvalidRequest(f"{PREFIX}/scene/morph takes a name and a position 0..1")
    position = _number(args[1], "position")
    if not 0.0 <= position <= 1.0:
        raise InvalidRequest(f"a morph's position is 0..1, found {position}")
    return Scene("morph", name, position)


def _cue(args: tuple[OscArg, ...]) -> CueGo:
    if not args or len(args) > 2:
        raise InvalidRequest(f"{PREFIX}/cue/go takes a cue number (and a Unix time)")
    first = args[0]
    number = str(first) if isinstance(first, int) and not isinstance(first, bool) else (
        f"{first:g}" if isinstance(first, float) and math.isfinite(first) else first)
    if not isinstance(number, str) or not _CUE.match(number):
        raise InvalidRequest(f"a cue number such as 1, 2.5 or 10a, found {_short(first)}")
    at = _number(args[1], "at") if len(args) == 2 else None
    if at is not None and not 0 <= at < 2**33:
        raise InvalidRequest(f"at is a Unix time in seconds, found {at}")
    return CueGo(number, at)


def _released(args: tuple[OscArg, ...]) -> bool:
    """A button's release (its value 0) after the arguments that matter."""
    if not args:
        return False
    if len(args) > 1:
        raise InvalidRequest("one value at most (a button's 1 or 0)")
    return _number(args[0], "value") == 0.0


def _name(word: object, kind: str) -> str:
    if not isinstance(word, str) or not _NAME.match(word):
        raise InvalidRequest(f"{_short(word)} is not a {kind} name (a letter, then letters, "
                             "digits, _ or -)")
    return word


def _number(value: OscArg, what: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        number = float(value)
        if math.isfinite(number) and abs(number) <= 3.4e38:
            return number
    raise InvalidRequest(f"{what} must be a finite number, found {_short(value)}")


def _int(value: OscArg, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidRequest(f"{what} must be an integer, found {_short(value)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
