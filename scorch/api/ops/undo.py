"""The undo operation: step back and forth through the journal of changes, and checkpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from scorch.api.fields import InstanceName
from scorch.api.operation import CHANGE, DESTROY, READ, Action, Result, operation
from scorch.api.ops.sessions import ChangeOut
from scorch.app.sessions import Reading, parse, render
from scorch.values import SessionName

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra
    from scorch.app.undo import Step

#: Steps one call may take at most.
MAX_STEPS = 50

Room = Annotated[InstanceName | None, Field(
    description="Only this room's changes (omitted: the whole installation's, latest first)")]
Steps = Annotated[int, Field(ge=1, le=MAX_STEPS, strict=True,
                             description=f"How many changes (1 to {MAX_STEPS})")]
DryRun = Annotated[bool, Field(strict=True, description=(
    "Say what it would change, change nothing (one step)"))]
Checkpoint = Annotated[SessionName, Field(
    description="The checkpoint's name (a session file: `session list` shows them)")]


class UndoStep(Action):
    """Undo the latest changes (play, set, release, stop, pattern, buffer, scene, tempo,
    MIDI route, session load), bringing back what each changed as it was before it."""

    access = CHANGE
    action: Literal["undo"] = "undo"
    instance: Room = None
    steps: Steps = 1
    dry_run: DryRun = False


class RedoStep(Action):
    """Redo the latest undone changes."""

    access = CHANGE
    action: Literal["redo"]
    instance: Room = None
    steps: Steps = 1
    dry_run: DryRun = False


class UndoList(Action):
    """List the journal: each change, latest last, and whether it is undone."""

    access = READ
    action: Literal["list"]
    instance: Room = None


class UndoCheckpoint(Action):
    """Keep the whole installation's state now under a name (a session file)."""

    access = DESTROY
    action: Literal["checkpoint"]
    name: Checkpoint


class UndoBack(Action):
    """Go back to a checkpoint (itself a change that undo takes back)."""

    access = DESTROY
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

    def failure(self) -> str | None:
        failed = [f"{c.detail}: {c.error}" for s in self.steps for c in s.changes if c.error]
        return "\n".join(failed) or None


def _steps(done: list[Step]) -> list[StepOut]:
    failed = {id(c): why for s in done for c, why in s.failed}
    return [StepOut(seq=s.seq, summary=s.summary,
                    changes=[ChangeOut.of(c, failed.get(id(c))) for c in s.changes])
            for s in done]


@operation(command="undo", positional=("action",))
def undo(orch: Orchestra, args: UndoArgs) -> UndoOutput:
    """Undo and redo changes (per room or for the whole installation), list the journal,
    keep a named checkpoint and go back to it. Each change that a session holds is
    journaled with the state it changed; `dry_run` says what a step would change."""
    if args.action == "list":
        return UndoOutput(action="list", journal=[
            EntryOut(seq=e.seq, call=e.call, summary=e.summary, rooms=list(e.rooms),
                     undone=bool(e.undone)) for e in orch.undo.entries(args.instance)])
    if args.action == "checkpoint":
        orch.sessions.store.write(args.name, render(orch.sessions.capture(), args.name))
        return UndoOutput(action="checkpoint", name=args.name)
    if args.action == "back":
        text, path = orch.sessions.store.read(args.name)
        target = parse(text, path, Reading(orch.config, orch.library))
        changes = orch.sessions.diff(target)
        failed = {} if args.dry_run else dict(
            (id(c), why) for c, why in orch.sessions.apply(changes))
        return UndoOutput(action="back", name=args.name, dry_run=args.dry_run, steps=[
            StepOut(seq=0, summary=f"back to {args.name}",
                    changes=[ChangeOut.of(c, failed.get(id(c))) for c in changes])])
    step = orch.undo.undo if args.action == "undo" else orch.undo.redo
    done = step(args.instance, args.steps, args.dry_run)
    return UndoOutput(action=args.action, dry_run=args.dry_run, steps=_steps(done))
