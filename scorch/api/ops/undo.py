"""The undo operation: step back and forth through the journal of changes, and checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fanout import label
from scorch.api.fields import RoomName
from scorch.api.operation import (
    CODE,
    EVERYTHING,
    READ,
    WRITE_OVER,
    Action,
    CliForm,
    Host,
    Hosts,
    Result,
    Spread,
    operation,
)
from scorch.api.ops.sessions import ChangeOut
from scorch.app import Reading, parse, render
from scorch.errors import InvalidRequest, SessionNotFound
from scorch.values import Flag, SessionName

if TYPE_CHECKING:
    from scorch.app import Orchestra, Step

#: Steps one call may take at most.
MAX_STEPS = 50

Room = Annotated[RoomName | None, Field(
    description="Only this room's changes (default: every room's)")]
Steps = Annotated[int, Field(ge=1, le=MAX_STEPS, strict=True,
                             description="How many changes")]
DryRun = Annotated[bool, Field(strict=True, description=(
    "Say what it would change, change nothing (one step)"))]
Checkpoint = Annotated[SessionName, Field(
    description="The checkpoint's name (a session file: `session list` shows them)")]


class UndoStep(Action):
    """Undo the latest changes, bringing back what each changed."""

    access = CODE
    action: Literal["undo"] = "undo"
    instance: Room = None
    steps: Steps = 1
    dry_run: DryRun = False


class RedoStep(Action):
    """Redo the latest undone changes."""

    access = CODE
    action: Literal["redo"]
    instance: Room = None
    steps: Steps = 1
    dry_run: DryRun = False


class UndoList(Action):
    """List the journal: each change, latest last, and whether it is undone."""

    access = READ
    action: Literal["list"]
    instance: Room = None
    full: Annotated[Flag, Field(description="The whole journal (by default the latest "
                                "changes that fit the answer's size budget)")] = False


class UndoCheckpoint(Action):
    """Keep the whole installation's state now under a name (a session file)."""

    access = WRITE_OVER
    action: Literal["checkpoint"]
    name: Checkpoint


class UndoBack(Action):
    """Go back to a checkpoint (itself a change that undo takes back)."""

    access = CODE
    journal = EVERYTHING
    action: Literal["back"]
    name: Checkpoint
    dry_run: DryRun = False


UndoArgs = Annotated[UndoStep | RedoStep | UndoList | UndoCheckpoint | UndoBack,
                     Field(discriminator="action")]


class EntryOut(BaseModel):
    """One change in the journal."""

    seq: int
    call: str
    summary: str
    rooms: list[str]
    undone: bool
    time: float = Field(0.0, description="Unix time of the change")
    undone_order: int = Field(0, description="the order it was undone in (the latest undone "
                              "redoes first); 0 while done")


class StepOut(BaseModel):
    """One change undone or redone, and what that did."""

    seq: int
    summary: str
    changes: list[ChangeOut]


class UndoOutput(Result):
    """What was (or would be) undone, redone or listed."""

    action: str
    dry_run: bool = False
    steps: list[StepOut] = Field(default_factory=list)
    journal: list[EntryOut] = Field(default_factory=list)
    name: str | None = None
    more: int = Field(0, description="list: earlier changes left out (the size budget): "
                      "full=true returns them")

    def text(self) -> str:
        if self.action != "list":
            return super().text()
        return budget.lines([f"#{e.seq} {'undone ' if e.undone else ''}{e.summary} "
                             f"({', '.join(e.rooms) or 'installation'})" for e in self.journal],
                            self.more, "earlier changes", "undo(action='list', full=true)",
                            "nothing to undo")

    def failure(self) -> str | None:
        failed = [f"{c.detail}: {c.error}" for s in self.steps for c in s.changes if c.error]
        return "\n".join(failed) or None


def _steps(done: list[Step]) -> list[StepOut]:
    failed = {id(c): why for s in done for c, why in s.failed}
    return [StepOut(seq=s.seq, summary=s.summary,
                    changes=[ChangeOut.of(c, failed.get(id(c))) for c in s.changes])
            for s in done]


def next_host(journals: Mapping[Host, list[EntryOut]], back: bool) -> Host | None:
    """The host whose journal the installation's next undo (``back``) or redo steps, or None.

    Undo: the host with the latest change still done. Redo: each host would redo its
    latest undone entry; undone across the installation newest first, the one to redo
    first is the oldest of those. Pure.
    """
    best: tuple[float, Host] | None = None
    for host, entries in journals.items():
        if back:
            done = [e for e in entries if not e.undone]
            if done and (best is None or done[-1].time > best[0]):
                best = (done[-1].time, host)
        else:
            undone = [e for e in entries if e.undone]
            if undone:
                first = max(undone, key=lambda e: e.undone_order)
                if best is None or first.time < best[0]:
                    best = (first.time, host)
    return best[1] if best is not None else None


#: Journal calls that several hosts make at one moment (a cue, a schedule entry): their
#: entries of one firing (the same summary, naming its time) are one step of the installation.
TOGETHER = frozenset({"cue", "schedule"})


def _next_entry(entries: list[EntryOut], back: bool) -> EntryOut | None:
    """The entry a host's next undo (``back``) or redo steps."""
    if back:
        done = [e for e in entries if not e.undone]
        return done[-1] if done else None
    undone = [e for e in entries if e.undone]
    return max(undone, key=lambda e: e.undone_order) if undone else None


def together(journals: Mapping[Host, list[EntryOut]], host: Host, back: bool) -> list[Host]:
    """The other hosts whose next step is the same firing as ``host``'s (a cue fired on
    every host): one undo takes it back everywhere. Pure."""
    first = _next_entry(journals[host], back)
    if first is None or first.call not in TOGETHER:
        return []
    return [other for other, entries in journals.items() if other != host
            and (same := _next_entry(entries, back)) is not None
            and (same.call, same.summary) == (first.call, first.summary)]


def _across(hosts: Hosts, args: Any) -> UndoOutput | None:
    """Undo or redo the installation's changes on several hosts: each step on the host whose
    journal holds the latest change (a host with nothing to undo is left alone)."""
    if args.action not in ("undo", "redo") or args.instance is not None or len(hosts.parts) < 2:
        return None
    back = args.action == "undo"
    steps: list[StepOut] = []
    for _ in range(args.steps):
        whole = UndoList(action="list", full=True)  # the step is picked from every entry
        journals = {host: UndoOutput.model_validate(answer).journal
                    for host, answer in hosts.answers("undo", whole).items()}
        host = next_host(journals, back)
        if host is None:
            break
        one = (UndoStep if back else RedoStep)(action=args.action, dry_run=args.dry_run)
        for part in [host, *together(journals, host, back)]:
            for step in UndoOutput.model_validate(hosts.ask(part, "undo", one)).steps:
                steps.append(step.model_copy(
                    update={"summary": f"{label(part)}: {step.summary}"}))
        if args.dry_run:
            break  # what a second step would do depends on this one's
    if not steps and not args.dry_run:
        raise InvalidRequest(f"nothing to {args.action} on any host")
    return UndoOutput(action=args.action, dry_run=args.dry_run, steps=steps)


@operation(cli=CliForm("undo", ("action",)), spread=Spread(across=_across))
def undo(orch: Orchestra, args: UndoArgs) -> UndoOutput:
    """Undo and redo changes, per room or for all: what play, set, release, stop, pattern,
    buffer, scene, tempo, MIDI routes and session loads changed (execute's code is not
    journaled). Keep a checkpoint and go back to it."""
    if args.action == "list":
        kept, more = budget.listing([
            EntryOut(seq=e.seq, call=e.call, summary=e.summary, rooms=list(e.rooms),
                     undone=bool(e.undone), time=e.time, undone_order=e.undone)
            for e in orch.undo.entries(args.instance)], budget.json_size, args.full,
            latest=True)
        return UndoOutput(action="list", journal=kept, more=more)
    if args.action == "checkpoint":
        orch.sessions.store.write(args.name, render(orch.sessions.capture(), args.name))
        return UndoOutput(action="checkpoint", name=args.name)
    if args.action == "back":
        try:
            text, path = orch.sessions.store.read(args.name)
        except SessionNotFound as err:
            err.argument = "name"  # the checkpoint's: what the caller can change
            raise
        target = parse(text, path, Reading(orch.config, orch.library))
        changes = orch.sessions.diff(target)
        failed = {} if args.dry_run else dict(
            (id(c), why) for c, why in orch.sessions.apply(changes, by="undo"))
        return UndoOutput(action="back", name=args.name, dry_run=args.dry_run, steps=[
            StepOut(seq=0, summary=f"back to {args.name}",
                    changes=[ChangeOut.of(c, failed.get(id(c))) for c in changes])])
    step = orch.undo.undo if args.action == "undo" else orch.undo.redo
    done = step(args.instance, args.steps, args.dry_run)
    return UndoOutput(action=args.action, dry_run=args.dry_run, steps=_steps(done))
