"""Operations on the rooms themselves: list, status, boot/quit/restart, events."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fanout import (
    label,
    unknown_rows,
    unknown_statuses,
    unknown_statuses_failed,
)
from scorch.api.fields import Selector
from scorch.api.models import AudioStatus, RoomRow, RoomStatus, plain
from scorch.api.operation import (
    DESTROY,
    READ,
    SET,
    SILENCE,
    Action,
    Answer,
    Args,
    CliForm,
    Host,
    Hosts,
    Patience,
    Result,
    Spread,
    Tool,
    operation,
)
from scorch.app.history import render
from scorch.errors import NotRunning, ScorchError
from scorch.hosts import HostInfo
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app import Orchestra


class NoArgs(Args):
    """No arguments."""


class Ping(Result):
    """Who answers."""

    config: str | None = Field(description="the config file of the installation")
    instances: list[str]
    started_at: float | None
    hosted_by: str = Field(description="scorch run or scorch mcp")
    host: str | None = Field(None, description="the host whose rooms these are (--host)")
    config_digest: str | None = Field(None, description="a digest of the config file's text")
    time: float | None = Field(None, description="this host's clock (Unix time) as it answered")


def _ping_across(hosts: Hosts, args: NoArgs) -> Ping:
    """The coordinator answers for itself: its config, its hosts' rooms, the first start."""
    answers = hosts.answers("ping", args)
    if not answers:
        raise NotRunning(f"no host of {hosts.config.source or 'the config'} answers: "
                         + "; ".join(f"{label(h['name'])} {h['state']} ({h['reason']})"
                                     for h in hosts.hosts()))
    return Ping(config=str(hosts.config.source) if hosts.config.source else None,
                instances=[n for n, i in hosts.config.instances.items() if i.host in hosts.parts],
                started_at=min((a.get("started_at") or time.time() for a in answers.values()),
                               default=None),
                hosted_by="coordinator", host=None, config_digest=hosts.config.digest,
                time=time.time())


@operation(access=READ, spread=Spread(across=_ping_across), patience=Patience(seconds=5.0),
           tool=Tool(listed=False))
def ping(orch: Orchestra, args: NoArgs) -> Ping:
    """Say which installation answers: its config file, rooms and start time."""
    return Ping(config=str(orch.config.source) if orch.config.source else None,
                instances=orch.rooms.names(), started_at=orch.started_at, hosted_by=orch.hosted_by,
                host=orch.config.host, config_digest=orch.config.digest, time=time.time())


class RoomList(Result):
    """Every room of the installation."""

    hosted_by: str = Field(description="scorch mcp: this server runs the rooms and stops them "
                           "when Claude closes; scorch run: they run on their own; "
                           "coordinator: each host's scorch run does")
    instances: list[RoomRow]
    hosts: list[HostInfo] = Field(default_factory=list, description="several hosts: each "
                                  "host and its state (CONNECTED, UNREACHABLE...)")

    def text(self) -> str:
        from scorch.api.status_text import render, render_hosts

        table = render(self.instances)
        if not self.hosts:
            return table
        return table + "\n\n" + render_hosts(self.hosts)


@operation(access=READ, cli=CliForm("list"), spread=Spread(unanswered=unknown_rows, roll_call=True))
def list_instances(orch: Orchestra, args: NoArgs) -> RoomList:
    """List every room: name, group, state, port, CPU, synths, uptime
    and restarts; only READY ones run code."""
    rows = [RoomRow.of(status) for status in orch.rooms.statuses()]
    return RoomList(hosted_by=orch.hosted_by, instances=rows)


class StatusOutput(Result):
    """Full status of each room named, and the audio driver they run on."""

    instances: list[RoomStatus]
    audio: AudioStatus | None = Field(
        None, description="the audio driver in use and why (None before the start)")
    hosts: list[HostInfo] = Field(default_factory=list, description="several hosts: each "
                                  "host and its state (CONNECTED, UNREACHABLE...)")

    def text(self) -> str:
        from scorch.api.status_text import describe, render_hosts

        blocks = [describe(status) for status in self.instances]
        if self.audio is not None:  # names the JACK server the rooms are clients of
            blocks.append(f"Audio: {self.audio.summary}")
        if self.hosts:
            blocks.append(render_hosts(self.hosts))
        return "\n\n".join(blocks)


def _statuses(orch: Orchestra, names: list[str]) -> StatusOutput:
    return StatusOutput(instances=[
        orch.rooms.status(name) for name in names],
        audio=AudioStatus.of(orch.audio) if orch.audio is not None else None)


class StatusArgs(Args):
    """Rooms by name, group or ``*`` (all, by default)."""

    instance: Selector = "*"


@operation(access=READ, cli=CliForm("status", ("instance",)),
           spread=Spread(unanswered=unknown_statuses), tool=Tool(panel="show"))
def status(orch: Orchestra, args: StatusArgs) -> StatusOutput:
    """Full status of rooms: state and since when, scsynth's live CPU and counts,
    process ids, restart budget, last crash, named nodes with their values, and the audio
    driver."""
    return _statuses(orch, orch.rooms.resolve(args.instance))


class _OnRooms(Action):
    """Rooms and what to do with them."""

    name: Annotated[Selector, Field(
        description='A room name, a group name, or "*" for every room')]


class Boot(_OnRooms):
    """Boot STOPPED or FAILED rooms and wait until they are READY."""

    access = SET
    action: Literal["boot"]


class Quit(_OnRooms):
    """Quit rooms: their sound stops, their processes end."""

    access = SILENCE
    action: Literal["quit"]
    dry_run: Annotated[bool, Field(strict=True, description=(
        "Say what it would stop, quit nothing"))] = False


class Restart(_OnRooms):
    """Restart rooms; their SynthDefs and named nodes come back with their values."""

    access = DESTROY
    action: Literal["restart"]


RoomAction = Annotated[Boot | Quit | Restart, Field(discriminator="action")]


class ActionOutput(StatusOutput):
    """The status of each room acted on, and why any did not come up."""

    failed: dict[str, str] = Field(default_factory=dict,
                                   description="rooms that did not boot, and why")
    would_stop: dict[str, list[str]] | None = Field(
        None, description="quit with dry_run: each room's named nodes and playing patterns "
        "it would stop (nothing was quit)")

    def failure(self) -> str | None:
        if not self.failed:
            return None
        return "\n".join(f"{name}: {why}" for name, why in self.failed.items())


@operation(name="instance",
           cli=CliForm("instance", ("action", "name"),
                       aliases={verb: {"action": verb} for verb in ("boot", "quit", "restart")}),
           spread=Spread(rooms="name", unanswered=unknown_statuses_failed),
           patience=Patience(seconds=200.0))
def room_action(orch: Orchestra, args: RoomAction) -> ActionOutput:
    """Boot, quit or restart rooms (several at once, in parallel)."""
    rooms = orch.rooms
    names = rooms.resolve(args.name)
    if getattr(args, "dry_run", False):
        statuses = _statuses(orch, names)
        return ActionOutput(instances=statuses.instances, would_stop=rooms.sounding(args.name))
    act = {"boot": rooms.boot, "quit": rooms.quit, "restart": rooms.restart}[args.action]
    failed: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(names)),
                            thread_name_prefix="room-action") as pool:
        for name, future in [(name, pool.submit(act, name)) for name in names]:
            try:
                future.result()
            except ScorchError as err:
                failed[name] = str(err)
    statuses = _statuses(orch, names)
    return ActionOutput(instances=statuses.instances, failed=failed)


class EventsArgs(Args):
    """Which events."""

    instance: Selector = "*"
    since: Annotated[int, Field(ge=0, strict=True,
                                description="Only events after this seq")] = 0
    full: Annotated[Flag, Field(description="All events after since (default: the latest "
                                "that fit)")] = False
    report: Annotated[str | None, Field(max_length=20, description="A span (24h, 30m): "
                                        "each room's report instead")] = None


class EventOut(BaseModel):
    """A lifecycle event."""

    seq: int
    time: float
    instance: str
    kind: str
    message: str
    details: dict[str, Any]


class EventsOutput(Result):
    """Lifecycle events, oldest first."""

    events: list[EventOut]
    more: int = Field(0, description="earlier events left out (the size budget): full=true, "
                      "or a later since, returns them")
    report: str = ""

    def text(self) -> str:
        return self.report or self._lines()

    def _lines(self) -> str:
        lines = [f"#{e.seq} {time.strftime('%H:%M:%S', time.localtime(e.time))} {e.instance} "
                 f"{e.kind}: {e.message}" for e in self.events]
        if self.more:
            lines.insert(0, f"[{budget.more(self.more, 'earlier events', 'events(full=true)')}]")
        return "\n".join(lines) or "no events"


def _oldest_first(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Every host's events, oldest first."""
    return {**merged, "events": sorted(merged.get("events") or [], key=lambda e: e["time"])}


@operation(access=READ, cli=CliForm("events", ("instance",)), spread=Spread(merge=_oldest_first))
def events(orch: Orchestra, args: EventsArgs) -> EventsOutput:
    """Lifecycle events, oldest first: read them when a room is RESTARTING or FAILED."""
    if args.report is not None:
        orch.recorder.flush()
        return EventsOutput(events=[], report=render(orch.config.state_path(), args.report,
                                                     "text", what="report"))
    found = [EventOut(seq=e.seq, time=e.time, instance=e.room, kind=str(e.kind),
                      message=e.message, details=plain(e.details))
             for e in orch.rooms.events(args.instance, args.since)]
    kept = found if args.full else budget.newest(
        found, lambda e: len(e.message) + len(str(e.details)))
    return EventsOutput(events=kept, more=len(found) - len(kept))


class ReloadOutput(Result):
    """What a reload changed."""

    changes: list[str] = Field(description="one line per change applied")
    failed: dict[str, str] = Field(default_factory=dict,
                                   description="rooms a change failed for, and why")

    def text(self) -> str:
        return "\n".join(self.changes)

    def failure(self) -> str | None:
        if not self.failed:
            return None
        return "\n".join(f"{name}: {why}" for name, why in self.failed.items())


def _changes_by_host(merged: Answer, answers: Sequence[tuple[Host, Answer]],
                     args: Any) -> Answer:
    """Every host's changes, each saying its host."""
    changes = [f"{label(host)}: {line}" for host, answer in answers
               for line in answer.get("changes") or []]
    return {**merged, "changes": changes}


@operation(access=DESTROY, cli=CliForm("reload"), spread=Spread(merge=_changes_by_host),
           patience=Patience(seconds=320.0), tool=Tool(listed=False))
def reload(orch: Orchestra, args: NoArgs) -> ReloadOutput:
    """Re-read the config file and apply what changed: rooms added or removed, a room
    restarted if its port or channels changed, config nodes added, set, replaced or
    released, MIDI routes. Rooms whose config did not change are not touched. A config
    with an error changes nothing, and the error names its line."""
    changes, failed = orch.reload()
    return ReloadOutput(changes=changes.summary(), failed=failed)


class DoctorCheck(BaseModel):
    """One check of the machine."""

    name: str
    ok: bool
    detail: str = Field(description="what was found")
    fix: str = Field(description="the exact command that fixes it on this system; empty if ok")


class DoctorOutput(Result):
    """What this machine lacks to run scorch, and how to fix each."""

    ok: bool = Field(description="every check passed")
    checks: list[DoctorCheck]

    def text(self) -> str:
        """The report, one line a check and its fix under it."""
        from scorch.machine import Check, report

        return report([Check(c.name, c.ok, c.detail, c.fix) for c in self.checks])


@operation(access=READ, unstarted=True)
def doctor(orch: Orchestra, args: NoArgs) -> DoctorOutput:
    """Check the machine the rooms run on (SuperCollider, JACK, realtime limits, MIDI, the
    clock): each problem with the command that fixes it here. Call it when a room will not
    boot or plays with dropouts."""
    from scorch.machine import run_checks

    checks = run_checks(orch.config, running=True)
    return DoctorOutput(ok=all(c.ok for c in checks), checks=[
        DoctorCheck(name=c.name, ok=c.ok, detail=c.detail, fix=c.fix) for c in checks])
