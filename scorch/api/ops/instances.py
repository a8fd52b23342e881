"""Operations on the instances themselves: list, status, boot/quit/restart, events."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from scorch.api.fields import Selector
from scorch.api.models import AudioStatus, InstanceState, InstanceStatus, plain
from scorch.api.operation import DESTROY, READ, Args, Result, operation
from scorch.errors import ScorchError
from scorch.hosts.link import HostInfo

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


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


@operation(access=READ, tool=False, patience=5.0)
def ping(orch: Orchestra, args: NoArgs) -> Ping:
    """Say which installation answers: its config file, instances and start time."""
    return Ping(config=str(orch.config.source) if orch.config.source else None,
                instances=orch.names(), started_at=orch.started_at, hosted_by=orch.hosted_by,
                host=orch.config.host, config_digest=orch.config.digest, time=time.time())


class InstanceRow(InstanceState):
    """One instance at a glance."""

    cpu: float | None = Field(description="scsynth average CPU, percent")
    peak_cpu: float | None
    synths: int | None = Field(description="synths running on scsynth")
    restarts: int = Field(description="restarts within the restart window")
    nodes: list[str] = Field(description="named persistent nodes")


class InstanceList(Result):
    """Every instance of the installation."""

    hosted_by: str = Field(description="scorch mcp: this server runs the rooms and stops them "
                           "when Claude closes; scorch run: they run on their own; "
                           "coordinator: each host's scorch run does")
    instances: list[InstanceRow]
    hosts: list[HostInfo] = Field(default_factory=list, description="several hosts: each "
                                  "host and its state (CONNECTED, UNREACHABLE...)")

    def text(self) -> str:
        from scorch.api.status_text import render, render_hosts

        table = render([row.model_dump() for row in self.instances])
        if not self.hosts:
            return table
        return table + "\n\n" + render_hosts([host.model_dump() for host in self.hosts])


@operation(access=READ, command="list")
def list_instances(orch: Orchestra, args: NoArgs) -> InstanceList:
    """List every SuperCollider instance: name, group, state, port, CPU, synths, uptime
    and restarts. Call this first to learn the names; only READY instances run code."""
    rows = []
    for status in orch.instances():
        server = status.get("server") or {}
        rows.append(InstanceRow(
            name=status["name"], group=status["group"], state=status["state"],
            since=status["since"], port=status["port"], cpu=server.get("avg_cpu"),
            peak_cpu=server.get("peak_cpu"), synths=server.get("synths"),
            uptime=status["uptime"], restarts=status["restarts_in_window"],
            restart_budget_left=status["restart_budget_left"], reason=status["reason"],
            nodes=list(status["nodes"]), host=status["host"]))
    return InstanceList(hosted_by=orch.hosted_by, instances=rows)


class StatusOutput(Result):
    """Full status of each instance named, and the audio driver they run on."""

    instances: list[InstanceStatus]
    audio: AudioStatus | None = Field(
        None, description="the audio driver in use and why (None before the start)")
    hosts: list[HostInfo] = Field(default_factory=list, description="several hosts: each "
                                  "host and its state (CONNECTED, UNREACHABLE...)")

    def text(self) -> str:
        from scorch.api.status_text import describe, render_hosts

        blocks = [describe(status.model_dump()) for status in self.instances]
        if self.audio is not None:  # names the JACK server the rooms are clients of
            blocks.append(f"Audio: {self.audio.summary}")
        if self.hosts:
            blocks.append(render_hosts([host.model_dump() for host in self.hosts]))
        return "\n\n".join(blocks)


def _statuses(orch: Orchestra, names: list[str]) -> StatusOutput:
    return StatusOutput(instances=[
        InstanceStatus.from_status(orch.status(name), orch.nodes(name)) for name in names],
        audio=AudioStatus.of(orch.audio) if orch.audio is not None else None)


class StatusArgs(Args):
    """Instances by name, group or ``*`` (all, by default)."""

    instance: Selector = "*"


@operation(access=READ, command="status", positional=("instance",))
def status(orch: Orchestra, args: StatusArgs) -> StatusOutput:
    """Full status of instances: state and since when, scsynth's live CPU and counts,
    process ids, restart budget, last crash, and named nodes with their values; and the
    audio driver (a sound card, a joined JACK server, or headless without sound out)."""
    return _statuses(orch, orch.resolve(args.instance))


class InstanceAction(Args):
    """Instances and what to do with them."""

    name: Annotated[Selector, Field(
        description='An instance name, a group name, or "*" for every instance')]
    action: Annotated[Literal["boot", "quit", "restart"], Field(
        description="boot a STOPPED or FAILED instance, quit it, or restart it")]


class ActionOutput(StatusOutput):
    """The status of each instance acted on, and why any did not come up."""

    failed: dict[str, str] = Field(default_factory=dict,
                                   description="instances that did not boot, and why")

    def failure(self) -> str | None:
        if not self.failed:
            return None
        return "\n".join(f"{name}: {why}" for name, why in self.failed.items())


@operation(name="instance", access=DESTROY, command="instance",
           positional=("action", "name"), patience=200.0,
           aliases={verb: {"action": verb} for verb in ("boot", "quit", "restart")})
def instance_action(orch: Orchestra, args: InstanceAction) -> ActionOutput:
    """Boot, quit or restart instances (by name, group or "*"; several at once in
    parallel). Restoring after a restart is automatic: loaded SynthDefs and named nodes
    come back with their last values."""
    names = orch.resolve(args.name)
    act = {"boot": orch.boot, "quit": orch.quit, "restart": orch.restart}[args.action]
    failed: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(names)),
                            thread_name_prefix="instance-action") as pool:
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


@operation(access=READ, command="events", positional=("instance",))
def events(orch: Orchestra, args: EventsArgs) -> EventsOutput:
    """Lifecycle events: boots, crashes, hangs, restarts and restores, oldest first.
    Read these when an instance is RESTARTING or FAILED."""
    return EventsOutput(events=[
        EventOut(seq=e.seq, time=e.time, instance=e.instance, kind=str(e.kind),
                 message=e.message, details=plain(e.details))
        for e in orch.events(args.instance, args.since)])


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


@operation(access=DESTROY, command="reload", patience=320.0, tool=False)
def reload(orch: Orchestra, args: NoArgs) -> ReloadOutput:
    """Re-read the config file and apply what changed: rooms added or removed, a room
    restarted if its port or channels changed, config nodes added, set, replaced or
    released, MIDI routes. Rooms whose config did not change are not touched. A config
    with an error changes nothing, and the error names its line."""
    changes, failed = orch.reload()
    return ReloadOutput(changes=changes.summary(), failed=failed)
