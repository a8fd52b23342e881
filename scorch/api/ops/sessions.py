"""The session operation: save the whole installation's state, load it back, compare."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from scorch.api.operation import CHANGE, Args, Result, operation
from scorch.app.sessions import Reading, parse, render
from scorch.errors import InvalidRequest
from scorch.state.session import Change
from scorch.values import SessionName

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


class ChangeOut(BaseModel):
    """One step of loading a session."""

    action: str = Field(description="free, load, release, play, set, tempo, unmap or map")
    instance: str | None
    target: str = Field(description="the buffer, node or MIDI route id, or the tempo's scope")
    detail: str
    error: str | None = Field(None, description="why it failed, when it did")

    @classmethod
    def of(cls, change: Change, error: str | None = None) -> ChangeOut:
        """The API form of a change."""
        return cls(action=change.action, instance=change.instance, target=change.target,
                   detail=change.detail, error=error)


class SessionInfo(BaseModel):
    """A saved session."""

    name: str
    path: str
    saved: str = Field(description="when the file was last written (UTC)")
    kilobytes: float


class SessionArgs(Args):
    """One session action and its session's name."""

    action: Annotated[Literal["save", "load", "list", "diff", "delete"], Field(
        description="save: write the whole state (every room's nodes, params, buffers, "
        "the MIDI routes and the tempo) under a name; load: change only what differs; "
        "diff: show what load would change; list: saved sessions; delete: remove one")] = "list"
    name: Annotated[SessionName | None, Field(
        description='The session ("autosave" is the one kept every few seconds)')] = None


class SessionOutput(Result):
    """The answer of the session tool."""

    action: str
    name: str | None = None
    path: str | None = None
    changes: list[ChangeOut] = Field(default_factory=list,
                                     description="diff: what load would do; load: what it did")
    sessions: list[SessionInfo] = Field(default_factory=list)

    def failure(self) -> str | None:
        """A load where some changes failed (the others were applied)."""
        failed = [c for c in self.changes if c.error]
        if not failed:
            return None
        return (f"session {self.name!r}: {len(failed)} of {len(self.changes)} changes failed: "
                + "; ".join(f"{c.detail}: {c.error}" for c in failed))


@operation(access=CHANGE, command="session", positional=("action", "name"), patience=120.0)
def session(orch: Orchestra, args: SessionArgs) -> SessionOutput:
    """Sessions: the whole installation's state (every room's named nodes with their params,
    loaded buffers, and the MIDI routes) saved under a name as a readable file, and loaded
    back changing only what differs. An autosave is kept every few seconds and at shutdown;
    `scorch run --resume` starts from it."""
    store = orch.sessions.store
    if args.action == "list":
        return SessionOutput(action="list", sessions=[
            SessionInfo(name=f.name, path=str(f.path), kilobytes=round(f.size / 1024, 3),
                        saved=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(f.modified)))
            for f in store.list()])
    if args.name is None:
        raise InvalidRequest(f"session action {args.action!r} needs `name` (see action 'list')")
    name = args.name
    if args.action == "save":
        path = store.write(name, render(orch.sessions.capture(), name))
        return SessionOutput(action="save", name=name, path=str(path))
    if args.action == "delete":
        return SessionOutput(action="delete", name=name, path=str(store.delete(name)))
    text, path = store.read(name)
    target = parse(text, path, Reading(orch.config, orch.library))
    changes = orch.sessions.diff(target)
    if args.action == "diff":
        return SessionOutput(action="diff", name=name, path=str(path),
                             changes=[ChangeOut.of(c) for c in changes])
    failed = dict((id(c), error) for c, error in orch.sessions.apply(changes))
    return SessionOutput(action="load", name=name, path=str(path),
                         changes=[ChangeOut.of(c, failed.get(id(c))) for c in changes])
