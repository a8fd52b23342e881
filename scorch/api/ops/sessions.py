"""The session operation: save the whole installation's state, load it back, compare."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fanout import label
from scorch.api.operation import (
    CODE,
    DESTROY,
    EVERYTHING,
    READ,
    WRITE_OVER,
    Action,
    Answer,
    CliForm,
    Host,
    Patience,
    Result,
    Spread,
    operation,
)
from scorch.app import Reading, parse, render
from scorch.state.session import Change
from scorch.values import Flag, SessionName

if TYPE_CHECKING:
    from scorch.app import Orchestra


class ChangeOut(BaseModel):
    """One step of loading a session."""

    action: str = Field(description="free, load, release, play, set, move, tempo, unmap, map, "
                        "pattern (define, play or stop one), mute (mute, solo or unmute "
                        "one) or clear (a pattern)")
    instance: str | None
    target: str = Field(description="the buffer, node or MIDI route id, or the tempo's scope")
    detail: str
    error: str | None = Field(None, description="why it failed, when it did")

    @classmethod
    def of(cls, change: Change, error: str | None = None) -> ChangeOut:
        """The API form of a change."""
        return cls(action=change.action, instance=change.room, target=change.target,
                   detail=change.detail, error=error)


class SessionInfo(BaseModel):
    """A saved session."""

    name: str
    path: str
    saved: str = Field(description="when the file was last written (UTC)")
    kilobytes: float


SessionNamed = Annotated[SessionName, Field(
    description='The session (or "autosave")')]


class SessionList(Action):
    """List the saved sessions."""

    access = READ
    action: Literal["list"] = "list"
    full: Annotated[Flag, Field(description="Every session, however many (by default the "
                                "newest that fit the answer's size budget)")] = False


class SessionSave(Action):
    """Write the whole state under a name, over a session of that name."""

    access = WRITE_OVER
    action: Literal["save"]
    name: SessionNamed


class SessionLoad(Action):
    """Load a session, changing only what differs (nodes it lacks are released)."""

    access = CODE
    journal = EVERYTHING
    action: Literal["load"]
    name: SessionNamed


class SessionDiff(Action):
    """Show what loading a session would change."""

    access = READ
    action: Literal["diff"]
    name: SessionNamed


class SessionDelete(Action):
    """Delete a saved session."""

    access = DESTROY
    action: Literal["delete"]
    name: SessionNamed


SessionArgs = Annotated[SessionList | SessionSave | SessionLoad | SessionDiff | SessionDelete,
                        Field(discriminator="action")]


class SessionOutput(Result):
    """The answer of the session tool."""

    action: str
    name: str | None = None
    path: str | None = None
    changes: list[ChangeOut] = Field(default_factory=list,
                                     description="diff: what load would do; load: what it did")
    sessions: list[SessionInfo] = Field(default_factory=list, description="list: newest "
                                        "first")
    more: int = Field(0, description="list: older sessions left out (the size budget): "
                      "full=true returns them")

    def failure(self) -> str | None:
        """A load where some changes failed (the others were applied)."""
        failed = [c for c in self.changes if c.error]
        if not failed:
            return None
        return (f"session {self.name!r}: {len(failed)} of {len(self.changes)} changes failed: "
                + "; ".join(f"{c.detail}: {c.error}" for c in failed))

    def text(self) -> str:
        if self.action != "list":
            return super().text()
        return budget.lines([f"{s.name}  {s.saved}  {s.kilobytes:g} kB  {s.path}"
                             for s in self.sessions], self.more, "older sessions",
                            "session(action='list', full=true)", "no sessions")


def _changes_say_host(merged: Answer, answers: Sequence[tuple[Host, Answer]],
                      args: Any) -> Answer:
    """A change that names no room (a tempo, a MIDI route) says whose host it is."""
    if len(answers) == 1:
        return merged
    changes = [{**change, "detail": f"{label(host)}: {change['detail']}"}
               if change.get("instance") is None else change
               for host, answer in answers for change in answer.get("changes") or []]
    return {**merged, "changes": changes}


@operation(cli=CliForm("session", ("action", "name")), spread=Spread(merge=_changes_say_host),
           patience=Patience(seconds=120.0))
def session(orch: Orchestra, args: SessionArgs) -> SessionOutput:
    """Sessions: the whole installation's state (named nodes and their params, buffers, MIDI
    routes, tempo) as a readable file under a name, loaded back changing only what differs;
    "autosave" is kept every few seconds."""
    store = orch.sessions.store
    if args.action == "list":
        kept, more = budget.listing([
            SessionInfo(name=f.name, path=str(f.path), kilobytes=round(f.size / 1024, 3),
                        saved=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(f.modified)))
            for f in store.list()], budget.json_size, args.full)
        return SessionOutput(action="list", sessions=kept, more=more)
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
