"""Calls of a schedule entry or a cue, made through the operations as the tools make them.

A ``do`` item is an operation call in the tools' words; ``instance`` names its
rooms whatever the operation calls that argument (``instance`` quits with
``name``), and a group or ``*`` given to an operation of one room makes one call
per room. On several hosts each host makes its own part: the calls naming its
rooms, and those naming none. At a time, a call that takes one (``set``,
``play``, ``release``, ``execute``) goes out at once stamped with it, so every
room, on every host, plays it on scsynth's own clock; the others are made at
the time. The calls of one firing are one step of the journal (one ``undo``
takes them back) and each is in the history, as a tool's call is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorch.api import journaled
from scorch.api.fields import TimedArgs
from scorch.api.operation import Args, Operation
from scorch.app.hours import Outcome, Source
from scorch.config import call_lines, located
from scorch.errors import ConfigError, InvalidRequest, NotFound, ScorchError
from scorch.schedule import Call

if TYPE_CHECKING:
    from scorch.app import Orchestra
    from scorch.config import Config

Operations = Callable[[], Mapping[str, Operation[Any, Any]]]
"""Every operation by name (``scorch.api.ops.load_all``, given by the caller: the
operations' modules import this one)."""

#: Operations a schedule or a cue may not call: a schedule's dry run, a cue list from a cue.
NOT_FROM = {"schedule": frozenset({"schedule"}), "cues": frozenset({"schedule", "cue"})}


def operation_of(call: Call, operations: Mapping[str, Operation[Any, Any]],
                 table: str = "schedule") -> Operation[Any, Any]:
    """The operation a call names; NotFound (or InvalidRequest) says why it cannot be called."""
    op = operations.get(call.op)
    if op is None or not op.tool:
        err = NotFound(f"no tool {call.op!r}", name=call.op,
                       known=[n for n, o in operations.items() if o.tool])
        err.argument = "op"
        raise err
    if op.access.read_only or op.name in NOT_FROM.get(table, ()):
        err2 = InvalidRequest(f"{call.op!r} cannot be called from [[{table}]]"
                              + (": it only reads" if op.access.read_only else ""))
        err2.argument = "op"
        raise err2
    return op


def expand(call: Call, config: Config, operations: Operations, table: str = "schedule"
           ) -> list[tuple[Operation[Any, Any], Args]]:
    """The operation calls one ``do`` item makes, parsed (one per room for an operation of
    one room given a group or ``*``)."""
    op = operation_of(call, operations(), table)
    raw = dict(call.args)
    rooms = op.spread.rooms
    if "instance" in raw and rooms not in (None, "instance") and "instance" not in op.fields:
        raw[rooms] = raw.pop("instance")  # type: ignore[index]
    named = raw.get(rooms) if rooms is not None else None
    if isinstance(named, str) and not _one_room(named, config) and _takes_one(op, raw, rooms):
        return [(op, op.parse({**raw, rooms: room}))  # type: ignore[dict-item]
                for room in config.resolve_everywhere(named)]
    return [(op, op.parse(raw))]


def _one_room(name: str, config: Config) -> bool:
    return name in config.instances or name in config.remote


def _takes_one(op: Operation[Any, Any], raw: Mapping[str, Any], rooms: str | None) -> bool:
    """Whether ``op``'s rooms argument names one room only (``*`` is refused there)."""
    try:
        op.parse({**raw, rooms: "*"})  # type: ignore[dict-item]
    except InvalidRequest as err:
        return err.argument == rooms
    return False


def rooms_here(op: Operation[Any, Any], parsed: Args, config: Config) -> list[str] | None:
    """This host's rooms a call acts on (empty: another host's call; None: it names no room,
    so every host makes it)."""
    where = op.where(parsed)
    if where.host is not None:
        return [] if where.host != config.host else None
    if where.rooms is None:
        return None
    return [room for room in config.resolve_everywhere(where.rooms) if room in config.instances]


def check_calls(config: Config, operations: Operations) -> None:
    """Check each call of the schedule and the cues against its operation: ConfigError says
    ``file:line: schedule.N.do.M.argument: what``, for every wrong call."""
    problems = []
    text = config.source.read_text() if config.source and config.source.is_file() else ""
    lines = call_lines(text)
    path = config.source or Path("config.toml")
    items: list[tuple[tuple[str, ...], Call, str]] = []
    for index, entry in enumerate(config.schedule):
        pure = entry.entry(index, config.location.holidays())
        for part in ("do", "after"):
            items += [(("schedule", str(index), part, str(n)), call, "schedule")
                      for n, call in enumerate(getattr(pure, part))]
    for index, cue in enumerate(config.cues):
        items += [(("cues", str(index), "do", str(n)), call, "cues")
                  for n, call in enumerate(cue.cue().do)]
    for loc, call, table in items:
        try:
            for op, parsed in expand(call, config, operations, table):
                try:
                    rooms_here(op, parsed, config)
                except ScorchError as err:
                    op.blame(err, parsed)
                    if err.argument == op.spread.rooms and "instance" in call.args:
                        err.argument = "instance"  # as the call says it
                    raise
        except ScorchError as err:
            key = ".".join((*loc, err.argument)) if err.argument else ".".join(loc)
            problems.append(f"{located(path, lines, loc)}: {key}: {_said(call, err)}")
    if problems:
        raise ConfigError("\n".join(problems))


class Firing:
    """Makes the calls of schedule entries and cues on an orchestra of this process."""

    def __init__(self, orch: Orchestra, operations: Operations) -> None:
        self.orch = orch
        self.operations = operations

    def check(self, config: Config) -> None:
        """ConfigError naming each wrong call of the config's schedule and cues."""
        check_calls(config, self.operations)

    def check_calls(self, calls: Sequence[Call]) -> None:
        """InvalidRequest for the first wrong call of a cue (``do.N``...)."""
        for number, call in enumerate(calls):
            try:
                expand(call, self.orch.config, self.operations, "cues")
            except ScorchError as err:
                where = f"do.{number}" + (f".{err.argument}" if err.argument else "")
                refused = InvalidRequest(f"{where}: {_said(call, err)}")
                refused.argument = "do"
                raise refused from None

    def cue(self, args: dict[str, Any]) -> None:
        """Call the cue operation as a tool's call is made (a cue button's): each cue it
        fires is one journal step, and the call is in the history."""
        op = self.operations()["cue"]
        journaled.perform(self.orch, op, op.parse(args))

    def fire(self, label: str, calls: Sequence[Call], at: float | None,
             source: Source) -> list[Outcome]:
        """Make this host's part of ``calls``: timed ones at once stamped ``at``, then the
        others at ``at`` (None: all now, in order); one journal step."""
        orch, config = self.orch, self.orch.config
        parts: dict[int, list[Outcome]] = {number: [] for number in range(len(calls))}
        timed, later, scopes = [], [], []
        for number, call in enumerate(calls):
            try:
                for op, parsed in expand(call, config, self.operations):
                    rooms = rooms_here(op, parsed, config)
                    if rooms == []:
                        parts[number].append(Outcome(call, True, skipped=True))
                        continue
                    scopes.append(journaled.scope_of(orch, op, parsed))
                    step = (number, op, parsed, tuple(rooms or ()))
                    if at is not None and _timed(parsed):
                        timed.append((number, op, parsed.model_copy(update={"at": at}),
                                      step[3]))
                    else:
                        later.append(step)
            except ScorchError as err:
                parts[number].append(Outcome(call, False, str(err)))
        entry = journaled.Step(orch, scopes)  # one step of the journal
        made = [(n, _call(entry, calls[n], op, parsed, rooms)) for n, op, parsed, rooms in timed]
        if at is not None and later:
            time.sleep(max(0.0, at - time.time()))
        made += [(n, _call(entry, calls[n], op, parsed, rooms)) for n, op, parsed, rooms in later]
        for number, outcome in made:
            parts[number].append(outcome)
        if any(o.ok for _, o in made):
            entry.record(source if source != "catch-up" else "schedule", label)
        return [_merged(calls[number], parts[number]) for number in range(len(calls))]


def _call(step: journaled.Step, call: Call, op: Operation[Any, Any], parsed: Args,
          rooms: tuple[str, ...]) -> Outcome:
    """Make one call of a firing's step: how it went."""
    try:
        result = step.call(op, parsed)
    except ScorchError as err:
        return Outcome(call, False, str(err), rooms=rooms)
    failure = result.failure()
    return Outcome(call, failure is None, failure, rooms=rooms)


def _said(call: Call, err: ScorchError) -> str:
    """An operation's refusal on one line, naming the operation once."""
    why = str(err).replace(":\n", ": ").replace("\n", "; ")
    return why if why.startswith(call.op) or err.argument == "op" else f"{call.op}: {why}"


def _timed(parsed: Args) -> bool:
    """A call scsynth can be told to make at a time, given none of its own."""
    return isinstance(parsed, TimedArgs) and parsed.at is None and parsed.delay is None


def _merged(call: Call, parts: Sequence[Outcome]) -> Outcome:
    """One outcome for a call that made several (one per room), or another host's."""
    made = [part for part in parts if not part.skipped]
    if not made:
        return Outcome(call, True, skipped=True)
    errors = [part.error or "failed" for part in made if not part.ok]
    rooms = tuple(dict.fromkeys(room for part in made for room in part.rooms))
    return Outcome(call, not errors, "; ".join(errors) or None, rooms=rooms)
