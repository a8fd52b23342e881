"""New patterns and proxies, and changes to one while it plays, through the room's sclang.

Each change is one request to sclang (``ScorchPatternOps.sc``, code from
:mod:`scorch.primitives.sclang.pattern_ops`, and for a new one
:mod:`scorch.primitives.sclang.pattern_define`) that lands on the next beat or bar of
the room's clock, and one ``PATTERN_CHANGED`` event in the room's log. The names a
change may use are those sclang last reported (``playing`` lists them); a new one's
must not be among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorch.app.rooms import Rooms
from scorch.errors import InvalidRequest, PatternFailed, PatternNotFound
from scorch.primitives.sclang import (
    PatternRecord,
    new_pattern_code,
    pattern_key,
    pattern_ops,
    short,
)
from scorch.state import Kind

#: Seconds a change request may take in sclang (it evaluates the source and schedules).
CHANGE_TIMEOUT = 10.0
#: Actions that act on one pattern (``unmute`` may name none: every muted one).
ONE = ("source", "set", "play", "stop", "mute", "solo", "fade")


@dataclass(frozen=True)
class Change:
    """What one change did: to which pattern, when it lands, and the record it had before."""

    room: str
    action: str
    kind: str | None
    name: str | None
    lands_in: float
    """Seconds from the answer until sclang makes the change (0: made)."""
    before: PatternRecord | None
    """The pattern as sclang last reported it before the change (None: a new one)."""


class Patterns:
    """Change, stop, mute, solo and fade the patterns of the rooms (any thread)."""

    def __init__(self, rooms: Rooms) -> None:
        self._rooms = rooms

    def find(self, room: str, name: str, kind: str | None = None) -> PatternRecord:
        """The pattern ``name`` of ``room`` (``kind`` when two kinds share the name)."""
        patterns = self._rooms.view(room).patterns
        found = [p for p in patterns.values() if p.name == name
                 and (kind is None or pattern_ops.proxy_kind(p.kind)
                      == pattern_ops.proxy_kind(kind))]
        if not found:
            known = ", ".join(f"{p.kind} {p.name}" for p in patterns.values()) or "none"
            err = PatternNotFound(f"no pattern or proxy {name!r}"
                                  f"{f' of kind {kind}' if kind else ''} in {room}; "
                                  f"it has: {known} (action define makes a new one)",
                                  name=name, known=[p.name for p in patterns.values()])
            err.argument = "name"
            raise err
        if len(found) > 1:
            err2 = InvalidRequest(f"{room} has {' and '.join(p.kind for p in found)} {name!r}: "
                                  "say which with `kind`")
            err2.argument = "kind"
            raise err2
        return found[0]

    def define(self, room: str, kind: str, name: str, source: str, play: bool = True,
               when: str = "bar") -> Change:
        """Define a new pattern or proxy ``kind`` ``name`` by ``source``, played if ``play``."""
        known = self._rooms.view(room).patterns.get(pattern_key(kind, name))
        if known is not None:
            err = InvalidRequest(f"{room} has {known.kind} {name} already: change its source "
                                 "with action source, or define another name")
            err.argument = "name"
            raise err
        result = self._rooms.execute_one(room, new_pattern_code(kind, name, source, play, when),
                                         timeout=CHANGE_TIMEOUT)
        if not result.ok:
            why = result.error.describe() if result.error is not None else "it failed"
            failed = PatternFailed(f"define of {kind} {name} in {room}: {why}")
            failed.argument = "source"
            raise failed
        lands_in = _seconds(result.value)
        then = " and play it" if play else ""
        on = f" (on the next {when})" if when != "now" else ""
        self._rooms.view(room).events.add(
            Kind.PATTERN_CHANGED, f"define {kind} {name}: {short(source)}{then}{on}",
            action="define", pattern=f"{kind} {name}", when=when, lands_in=round(lands_in, 3))
        return Change(room, "define", kind, name, lands_in, None)

    def change(self, room: str, action: str, name: str | None, kind: str | None = None,
               when: str = "bar", source: str | None = None, key: str | None = None,
               value: str | None = None, seconds: float = 2.0) -> Change:
        """Make one change (see the ``pattern`` operation for each action)."""
        record = self.find(room, name, kind) if name is not None else None
        if action in ONE and record is None:
            err = InvalidRequest(f"pattern action {action!r} needs `name`")
            err.argument = "name"
            raise err
        code = self._code(action, record, when, source, key, value, seconds)
        result = self._rooms.execute_one(room, code, timeout=CHANGE_TIMEOUT)
        if not result.ok:
            why = result.error.describe() if result.error is not None else "it failed"
            err3 = PatternFailed(f"{action} of {name} in {room}: {why}")
            err3.argument = "source" if action == "source" else (
                "value" if action == "set" else None)
            raise err3
        lands_in = _seconds(result.value)
        what = f"{record.kind} {record.name}" if record is not None else "every muted pattern"
        detail = {"source": f": {short(source or '')}", "set": f": {key} = {short(value or '')}",
                  "fade": f" over {seconds:g} s"}.get(action, "")
        self._rooms.view(room).events.add(
            Kind.PATTERN_CHANGED, f"{action} {what}{detail} (on the next {when})"
            if when != "now" else f"{action} {what}{detail}",
            action=action, pattern=what, when=when, lands_in=round(lands_in, 3))
        return Change(room, action, record.kind if record else None,
                      record.name if record else None, lands_in, record)

    @staticmethod
    def _code(action: str, record: PatternRecord | None, when: str, source: str | None,
              key: str | None, value: str | None, seconds: float) -> str:
        if record is None:
            return pattern_ops.simple_code(action, None, None, when)
        if action == "source":
            if source is None:
                raise _needs("source", action)
            return pattern_ops.replace_code(record.kind, record.name, source, when)
        if action == "set":
            if record.kind not in ("Pbindef", "Pdef"):
                err = InvalidRequest(f"set changes a key of a Pbindef; {record.name} is a "
                                     f"{record.kind}: replace its source instead")
                err.argument = "name"
                raise err
            if key is None:
                raise _needs("key", action)
            if value is None:
                raise _needs("value", action)
            return pattern_ops.set_key_code(record.name, key, value, when)
        if action == "fade":
            if record.kind == "Tdef":
                err = InvalidRequest(f"{record.name} is a Tdef: it has no level to fade; "
                                     "stop it")
                err.argument = "name"
                raise err
            return pattern_ops.fade_code(record.kind, record.name, seconds, when)
        return pattern_ops.simple_code(action, record.kind, record.name, when)


def _seconds(value: str | None) -> float:
    """The seconds sclang answered until the change lands (0: now, or no number)."""
    try:
        return max(0.0, float(value or 0))
    except ValueError:
        return 0.0


def _needs(argument: str, action: str) -> InvalidRequest:
    err = InvalidRequest(f"pattern action {action!r} needs `{argument}`")
    err.argument = argument
    return err
