"""What the facade answers about rooms: built once from a room's view.

The API returns these as they are (``scorch.api.models`` re-exports them), and
``scorch.api.status_text`` renders them for the terminal.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

from pydantic import BaseModel, Field

from scorch.primitives.scsynth import ServerStatus
from scorch.primitives.synthdefs import StageReading
from scorch.state import NodeState, Snapshot, StageState, State


class ServerFields(BaseModel):
    """scsynth's own ``/status.reply``."""

    ugens: int
    synths: int = Field(description="the room's synths (scorch's safety stage not counted)")
    groups: int
    synthdefs: int
    avg_cpu: float = Field(description="average CPU, percent")
    peak_cpu: float
    nominal_sample_rate: float
    actual_sample_rate: float

    @classmethod
    def of(cls, status: ServerStatus, own: int = 0) -> ServerFields:
        """The API form of a ``/status.reply``; ``synths`` without scorch's ``own`` (the
        safety stage), which no code of the room started and no stop frees."""
        return cls.model_validate(vars(status) | {"synths": max(0, status.synths - own)})


class StageInfo(BaseModel):
    """The room's safety stage: its settings, its master gain, what it last measured."""

    enabled: bool = Field(description="false: a config line switched the stage off, and "
                          "code reaches the loudspeakers unguarded")
    ceiling_dbfs: float = Field(description="no output goes above this (true peak)")
    max_lufs: float | None = Field(description="short-term loudness limit (none: no limit)")
    gain_db: float = Field(description="the master gain (dB), or where it fades to")
    fade_s: float = Field(description="the fade its last change took (s)")
    latency_samples: int = Field(description="what the stage delays the sound by")
    reduction_db: float | None = Field(description="the limiter's deepest gain reduction "
                                       "in its last report (dB; none before one)")
    peak_in_dbfs: float | None = Field(description="the loudest sample code sent it then")
    non_finite: bool | None = Field(description="a NaN or infinity came in then (silenced)")

    @classmethod
    def of(cls, stage: StageState, reading: StageReading | None) -> StageInfo:
        """The API form of a stage and its last reading."""
        return cls(enabled=stage.enabled, ceiling_dbfs=stage.ceiling_dbfs,
                   max_lufs=stage.max_lufs, gain_db=stage.gain_db, fade_s=stage.fade_s,
                   latency_samples=stage.latency,
                   reduction_db=round(reading.reduction_db, 2) if reading else None,
                   peak_in_dbfs=round(20 * math.log10(max(reading.peak_in, 1e-9)), 2)
                   if reading else None,
                   non_finite=reading.non_finite if reading else None)


class NodeInfo(BaseModel):
    """A named persistent node and its last values."""

    synthdef: str
    node_id: int
    params: dict[str, float]

    @classmethod
    def of(cls, node: NodeState) -> NodeInfo:
        """The API form of a named node."""
        return cls(synthdef=node.synthdef, node_id=node.node_id, params=dict(node.params))


#: The states in which a room's reason is the phase of its boot or restore.
BOOTING = (State.BOOTING, State.RESTARTING)


class RoomState(BaseModel):
    """A room's name, where it is in its life, and why."""

    name: str
    group: str | None
    state: str = Field(description="STOPPED, BOOTING, READY, RESTARTING, FAILED or STOPPING")
    since: float = Field(description="Unix time the state began")
    reason: str | None = Field(description="why it is not READY, when it is not")
    port: int | None = Field(description="scsynth UDP port")
    uptime: float | None = Field(description="seconds since the room became READY")
    restart_budget_left: int
    host: str | None = Field(None, description="the host that runs it (several hosts); null: "
                             "this machine")
    restarts_by: dict[str, int] = Field(default_factory=dict, description="restarts of "
                                        "scsynth and of sclang since scorch started the room")
    sound: str | None = Field(None, description="what the watch hears: ok, silent (expected "
                              "to sound), limiting, howl or nan; null: no stage reports")


class RoomStatus(RoomState):
    """Everything known about one room."""

    lang_port: int | None
    pids: dict[str, int | None] = Field(description="process ids of scsynth and sclang")
    sclang: str = Field(description="sclang's own state: ready, starting, restarting, down")
    restarts_in_window: int
    last_crash: str | None
    nodes: dict[str, NodeInfo] = Field(description="named persistent nodes with their values")
    server: ServerFields | None = Field(description="scsynth's live /status, when it answers")
    stage: StageInfo | None = Field(None, description="the safety stage and master gain")

    @classmethod
    def of(cls, snap: Snapshot, nodes: Mapping[str, NodeState], server: ServerStatus | None,
           host: str | None, stage: StageInfo | None = None,
           sound: str | None = None) -> RoomStatus:
        """A room's status from its snapshot, named nodes and last ``/status.reply``."""
        return cls(
            name=snap.name, group=snap.group, host=host, state=str(snap.state),
            since=snap.since, port=snap.port, lang_port=snap.lang_port,
            pids={"scsynth": snap.scsynth_pid, "sclang": snap.sclang_pid},
            sclang=snap.sclang_state,
            uptime=(time.time() - snap.booted_at)
            if snap.booted_at and snap.state == State.READY else None,
            restarts_in_window=snap.restarts_in_window,
            restart_budget_left=snap.restart_budget_left,
            restarts_by={"scsynth": snap.scsynth_restarts, "sclang": snap.sclang_restarts},
            last_crash=snap.last_crash or None,
            reason=snap.phase() if snap.state in BOOTING else snap.reason or None,
            nodes={name: NodeInfo.of(node) for name, node in nodes.items()},
            server=ServerFields.of(server, own=1 if stage is not None and stage.enabled else 0)
            if server is not None else None, stage=stage, sound=sound)


class RoomRow(RoomState):
    """One room at a glance."""

    cpu: float | None = Field(description="scsynth average CPU, percent")
    peak_cpu: float | None
    synths: int | None = Field(description="synths running on scsynth")
    restarts: int = Field(description="restarts within the restart window")
    nodes: list[str] = Field(description="named persistent nodes")

    @classmethod
    def of(cls, status: RoomStatus) -> RoomRow:
        """The row of a room's full status."""
        server = status.server
        return cls(
            name=status.name, group=status.group, state=status.state, since=status.since,
            port=status.port, cpu=server.avg_cpu if server else None,
            peak_cpu=server.peak_cpu if server else None,
            synths=server.synths if server else None, uptime=status.uptime,
            restarts=status.restarts_in_window, restarts_by=status.restarts_by,
            restart_budget_left=status.restart_budget_left, reason=status.reason,
            nodes=list(status.nodes), host=status.host, sound=status.sound)


class BufferInfo(BaseModel):
    """A loaded buffer, as scsynth's ``/b_info`` describes it."""

    instance: str
    name: str
    bufnum: int = Field(description="use it as the sampler's bufnum param")
    frames: int
    channels: int
    sample_rate: float
    seconds: float
    path: str


class SampleInfo(BaseModel):
    """A sound file found in a sample folder."""

    path: str
    relative: str = Field(description="the path relative to its sample folder")
    folder: str
    megabytes: float
