"""The one way to run an operation: journaled when it changes what a session holds, in the history.

A call that changes the state a session holds (named nodes and their values,
buffers, patterns, master gains, the tempo, the MIDI routes) is journaled: its operation's
:class:`~scorch.api.declarations.Changes` says what it may touch, so that just that
is captured before it runs and ``undo`` takes the call back. Reads, dry runs and
failed calls are not journaled; nor are calls whose effect no session holds (an
unnamed synth, ``execute``'s code). What a call changed is kept in the execution
history too. :func:`perform` runs one call as its own step of the journal; a
:class:`Step` runs several as one (a schedule's firing, a cue).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scorch.app import Scope
from scorch.errors import ScorchError

if TYPE_CHECKING:
    from scorch.api.operation import Args, Operation, Result
    from scorch.app import Orchestra


def perform(orch: Orchestra, op: Operation[Any, Any], parsed: Args) -> Result:
    """Run one call, journaled as its own step when it changes what a session holds."""
    try:
        scope = scope_of(orch, op, parsed)
    except ScorchError as err:
        op.blame(err, parsed)
        raise
    step = Step(orch, [scope])
    result = step.call(op, parsed)
    step.record(call_of(op.name, parsed), summary_of(op.name, parsed))
    return result


class Step:
    """One step of the journal: what some calls may change, captured before they run."""

    def __init__(self, orch: Orchestra, scopes: Sequence[Scope | None]) -> None:
        self.orch = orch
        self.scope = union([scope for scope in scopes if scope is not None])
        self.before = orch.undo.capture(self.scope) if self.scope is not None else None

    def call(self, op: Operation[Any, Any], parsed: Args) -> Result:
        """Run one call of the step and keep it in the history; a ScorchError names the
        argument at fault where it can be told."""
        started = time.time()
        try:
            result: Result = op.run(self.orch, parsed)
        except ScorchError as err:
            op.blame(err, parsed)
            raise
        keep_in_history(self.orch, op, parsed, result, started)
        return result

    def record(self, call: str, summary: str) -> None:
        """Keep the step in the journal (nothing when its calls change nothing it keeps)."""
        if self.scope is not None and self.before is not None:
            self.orch.undo.record(call, summary, self.scope, self.before)


def scope_of(orch: Orchestra, op: Operation[Any, Any], args: Args) -> Scope | None:
    """What the call ``op(args)`` may change, by its journal, or None when it is not journaled."""
    journal = op.journal_of(args)
    if journal is None:
        return None
    if journal.rooms == "every":
        rooms = tuple(orch.rooms.names())
    elif journal.rooms == "named" and op.spread.rooms is not None:
        # resolved: an unknown room is RoomNotFound, as the call itself would say
        rooms = tuple(orch.rooms.resolve(getattr(args, op.spread.rooms)))
    else:
        rooms = ()
    return Scope(rooms=rooms, tempo=journal.tempo, routes=journal.routes,
                 patterns=journal.patterns)


def union(scopes: Sequence[Scope]) -> Scope | None:
    """What the calls may change, together (None: nothing the journal keeps)."""
    if not scopes:
        return None
    rooms = dict.fromkeys(room for s in scopes for room in s.rooms)
    return Scope(rooms=tuple(rooms), tempo=any(s.tempo for s in scopes),
                 routes=any(s.routes for s in scopes), patterns=any(s.patterns for s in scopes))


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
