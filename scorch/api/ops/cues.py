"""The cue operation: the cue list, GO, standby, and its cues made and edited."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from scorch.api import ops
from scorch.api.firing import Firing
from scorch.api.operation import (
    CHANGE,
    CODE,
    DESTROY,
    READ,
    SET,
    SILENCE,
    Action,
    Answer,
    CliForm,
    Host,
    Hosts,
    Result,
    Spread,
    operation,
)
from scorch.errors import InvalidRequest, Unavailable
from scorch.schedule import Call, Cue
from scorch.schedule.cuelist import Firing as CueFiring
from scorch.state import tempo as timing

if TYPE_CHECKING:
    from scorch.app import Orchestra
    from scorch.app.hours import Cues

Number = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$",
                                          strict=True), Field(
    description="A cue's number: 1, 2.5, 3A")]
Wait = Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False, strict=True)]
Calls = Annotated[list[dict[str, Any]], Field(max_length=64, description=(
    'Its calls, as the tools take them: [{"op": "scene", "action": "recall", '
    '"name": "evening"}, {"op": "set", "instance": "lobby", "node": "drone", "params": '
    '{"amp": 0.2}}]; instance names the rooms of any tool'))]
Then = Annotated[Literal["stop", "continue", "follow"], Field(description=(
    "The next cue's GO: stop: a GO; continue: post_wait after this one fires; follow: "
    "post_wait after its fades and glides end"))]
Name = Annotated[str, StringConstraints(max_length=200, strict=True), Field(
    description="The cue's name")]


class CueShow(Action):
    """List the cues, the one on standby, and the cues waiting to fire."""

    access = READ
    action: Literal["list"] = "list"


class CueGo(Action):
    """GO: fire the cue on standby (or `cue`), then those it continues or follows into;
    standby moves past them. A double GO counts once."""

    access = CODE  # a cue's calls may be any tool's, execute's code among them
    action: Literal["go"]
    cue: Annotated[Number | None, Field(description="Fire this cue (default: the one on "
                                        "standby)")] = None
    at: Annotated[float | None, Field(allow_inf_nan=False, strict=True, description=(
        "The Unix time every room fires it (default: soon enough for every host)"))] = None


class CueStandby(Action):
    """Put a cue on standby: the next GO fires it."""

    access = SET
    action: Literal["standby"]
    cue: Number


class CueAdd(Action):
    """Add a cue (at the end, or before another)."""

    access = CHANGE
    action: Literal["add"]
    cue: Number
    name: Name = ""
    do: Calls
    pre_wait: Annotated[Wait, Field(description="Seconds from its GO to its calls")] = 0.0
    then: Then = "stop"
    post_wait: Annotated[Wait, Field(description="Seconds before the next cue's GO")] = 0.0
    before: Annotated[Number | None, Field(description="Put it before this cue (default: "
                                           "at the end)")] = None


class CueEdit(Action):
    """Change a cue: what is given replaces its own."""

    access = SET
    action: Literal["edit"]
    cue: Number
    name: Name | None = None
    do: Calls | None = None
    pre_wait: Wait | None = None
    then: Then | None = None
    post_wait: Wait | None = None


class CueDelete(Action):
    """Delete a cue."""

    access = DESTROY
    action: Literal["delete"]
    cue: Number


class CueStop(Action):
    """Cancel the cues waiting to fire (a wait, a follow); what fired stays."""

    access = SILENCE
    action: Literal["stop"]


CueArgs = Annotated[CueShow | CueGo | CueStandby | CueAdd | CueEdit | CueDelete | CueStop,
                    Field(discriminator="action")]


class CueOut(BaseModel):
    """One cue."""

    number: str
    name: str
    do: list[str] = Field(description="its calls")
    pre_wait: float
    then: str
    post_wait: float

    @classmethod
    def of(cls, cue: Cue) -> CueOut:
        """The API form of a cue."""
        return cls(number=cue.number, name=cue.name, do=[c.text() for c in cue.do],
                   pre_wait=cue.pre_wait, then=cue.then, post_wait=cue.post_wait)


class FiringOut(BaseModel):
    """A cue fired (or waiting to fire) at a time."""

    cue: str
    name: str
    time: float
    local: str
    host: str | None = None


class CueOutput(Result):
    """The cue list, and what a GO or an edit did."""

    action: str
    cues: list[CueOut] = Field(default_factory=list)
    standby: str | None = Field(None, description="the cue the next GO fires (None: done)")
    fired: list[FiringOut] = Field(default_factory=list, description="go: each cue it fires")
    counted: bool = Field(True, description="go: false for a double GO (nothing fired)")
    go_at: float | None = Field(None, description="go: the GO's time (Unix), the same on "
                                "every host")
    running: list[FiringOut] = Field(default_factory=list,
                                     description="cues fired by a GO, waiting for their time")

    def text(self) -> str:
        if self.action == "go":
            if not self.counted:
                return "double GO: counted once, nothing more fired"
            return "\n".join(f"GO: cue {f.cue} {f.name!r} at {f.local}"
                             + (f" [{f.host}]" if f.host else "") for f in self.fired)
        rows = [f"{'>' if c.number == self.standby else ' '} {c.number} {c.name}: "
                f"{'; '.join(c.do)}{'' if c.then == 'stop' else f' ({c.then})'}"
                for c in self.cues]
        rows += [f"  waiting: cue {f.cue} at {f.local}" for f in self.running]
        return "\n".join(rows) or "no cues"


def _go_across(hosts: Hosts, args: Any) -> CueOutput | None:
    """One GO time for every host: each fires its rooms' part at the same moment."""
    if args.action != "go" or args.at is not None:
        return None
    at = time.time() + hosts.config.cueing.lead
    result = hosts.call("cue", args.model_copy(update={"at": at}))
    assert isinstance(result, CueOutput)
    return result


def _one_list(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """The hosts' lists are one list: each cue once; GO counted if any host counted it."""
    seen: dict[str, Any] = {}
    for cue in merged.get("cues") or []:
        seen.setdefault(cue["number"], cue)
    counted = any(answer.get("counted", True) for _, answer in answers)
    return {**merged, "cues": list(seen.values()), "counted": counted}


@operation(cli=CliForm("cue", ("action", "cue"), aliases={"go": {"action": "go"}}),
           spread=Spread(rooms=None, merge=_one_list, across=_go_across))
def cue(orch: Orchestra, args: CueArgs) -> CueOutput:
    """The cue list ([[cues]] in the config, and cues made here): numbered cues, each a
    list of tool calls. GO fires the cue on standby at one moment in every room, on every
    host; undo takes a cue back as one step."""
    hours = orch.hours
    hours.start(Firing(orch, ops.load_all))  # once (a `scorch run` started it already)
    cues = hours.cues
    zone = hours.plan.place.zone
    host = orch.config.host
    if args.action == "go":
        if hours.problem is not None:
            raise Unavailable(hours.problem)
        if args.at is not None:
            try:
                timing.resolve(args.at, None, time.time())  # not far ahead nor long past
            except InvalidRequest as err:
                err.argument = "at"
                raise
        at, fired = cues.go(args.cue, args.at)
        hours.ensure()
        return CueOutput(action="go", counted=fired is not None, standby=_standby(cues),
                         go_at=at,
                         fired=[_firing(f, zone, host) for f in fired or []])
    if args.action == "stop":
        gone = cues.stop()
        return _listing(orch, "stop", fired=[_firing(f, zone, host) for f in gone])
    if args.action == "standby":
        cues.edit(lambda cl: cl.put_on_standby(args.cue))
    elif args.action == "delete":
        cues.edit(lambda cl: cl.delete(args.cue))
    elif args.action in ("add", "edit"):
        _change(orch, args)
    return _listing(orch, args.action)


def _change(orch: Orchestra, args: CueAdd | CueEdit) -> None:
    calls = None
    if args.do is not None:
        calls = tuple(_call(item, number) for number, item in enumerate(args.do))
        Firing(orch, ops.load_all).check_calls(calls)
    cues = orch.hours.cues
    if isinstance(args, CueAdd):
        made = Cue(args.cue, args.name, calls or (), args.pre_wait, args.then, args.post_wait)
        cues.edit(lambda cl: cl.add(made, args.before))
        orch.hours.ensure()
        return
    changes = {key: value for key, value in (
        ("name", args.name), ("do", calls), ("pre_wait", args.pre_wait), ("then", args.then),
        ("post_wait", args.post_wait)) if value is not None}
    if not changes:
        raise InvalidRequest("edit: give what changes (name, do, pre_wait, then, post_wait)")
    cues.edit(lambda cl: cl.edit(args.cue, changes))


def _call(item: dict[str, Any], number: int) -> Call:
    op = item.get("op")
    if not isinstance(op, str):
        refused = InvalidRequest(f"do.{number}: each call names its tool with op, e.g. "
                                 '{"op": "scene", "action": "recall", "name": "evening"}')
        refused.argument = "do"
        raise refused
    return Call(op, {k: v for k, v in item.items() if k != "op"})


def _standby(cues: Cues) -> str | None:
    found = cues.listed()[1]
    return found.number if found is not None else None


def _listing(orch: Orchestra, action: str, fired: list[FiringOut] | None = None) -> CueOutput:
    cues = orch.hours.cues
    zone, host = orch.hours.plan.place.zone, orch.config.host
    listed, standby = cues.listed()
    return CueOutput(action=action, cues=[CueOut.of(c) for c in listed],
                     standby=standby.number if standby is not None else None,
                     fired=fired or [], running=[_firing(f, zone, host) for f in cues.running()])


def _firing(firing: CueFiring, zone: Any, host: str | None) -> FiringOut:
    local = datetime.fromtimestamp(firing.time, zone).strftime("%H:%M:%S.%f")[:-3]
    return FiringOut(cue=firing.cue.number, name=firing.cue.name, time=firing.time,
                     local=local, host=host)
