"""Which calls the journal keeps (so that ``undo`` can take them back), and what each touches.

A call that changes the state a session holds (named nodes and their values,
buffers, patterns, master gains, the tempo, the MIDI routes) is journaled: :func:`scope_of` says
what it may touch, so that just that is captured before it runs. Reads, dry runs
and failed calls are not journaled; nor are calls whose effect no session holds
(an unnamed synth, ``execute``'s code). What a call changed is kept in the execution
history too (:func:`keep_in_history`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scorch.app.undo import Scope

if TYPE_CHECKING:
    from scorch.api.operation import Args, Operation, Result
    from scorch.app.orchestra import Orchestra

#: Pattern actions whose effect a session holds (every one: a new one, mutes and solos too).
PATTERN_STATE = ("define", "source", "set", "play", "stop", "fade", "mute", "unmute", "solo")


def scope_of(orch: Orchestra, name: str, args: Any) -> Scope | None:
    """What the call ``name(args)`` may change, or None when it is not journaled."""
    if getattr(args, "dry_run", False):
        return None
    action = getattr(args, "action", None)
    if name in ("play", "set", "release", "pattern"):
        if name == "play" and args.node is None:
            return None
        if name == "pattern" and action not in PATTERN_STATE:
            return None
        # resolved: an unknown room is InstanceNotFound, as the call itself would say
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)), patterns=name == "pattern")
    if name == "stop":  # it stops the patterns too
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)), patterns=True)
    if name == "buffer" and action in ("load", "free"):
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)))
    if name == "scene" and action in ("recall", "morph"):
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)))
    if name == "gain" and args.db is not None:
        return Scope(rooms=tuple(orch.rooms.resolve(args.instance)))
    if name == "tempo" and args.bpm is not None:
        return Scope(tempo=True)
    if name == "midi" and action in ("map", "unmap"):
        return Scope(routes=True)
    if (name == "session" and action == "load") or (name == "undo" and action == "back"):
        # a session file with a room's patterns changes them too
        return Scope(rooms=tuple(orch.rooms.names()), tempo=True, routes=True, patterns=True)
    return None


def summary_of(name: str, args: Any) -> str:
    """The call in a few words, for the journal."""
    fields = args.model_dump(exclude_none=True, exclude_defaults=True)
    action = fields.pop("action", getattr(args, "action", None))
    shown = ", ".join(f"{k}={str(v)[:40]}" for k, v in fields.items())
    return f"{name}{f' {action}' if action else ''}({shown})"


def call_of(name: str, args: Any) -> str:
    """The operation and its action."""
    action = getattr(args, "action", None)
    return f"{name} {action}" if action else name


def keep_in_history(orch: Orchestra, op: Operation[Any, Any], parsed: Args, result: Result,
                    started: float) -> None:
    """Keep a change in the execution history as ``@NAME {arguments}`` (never fails it)."""
    if op.tool and result.in_history() and not op.access_of(parsed).read_only:
        room = getattr(parsed, "instance", None)
        orch.knowledge.record(
            started, room if isinstance(room, str) else "*",
            f"@{op.name} {parsed.model_dump_json(exclude_defaults=True)}",
            result.text()[:2000], "", result.failure(), (time.time() - started) * 1000)
