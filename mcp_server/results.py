"""The structured results of the tools: their fields are what Claude reads and relies on."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class InstanceRow(BaseModel):
    """One instance at a glance."""

    name: str
    group: str | None
    state: str = Field(description="STOPPED, BOOTING, READY, RESTARTING, FAILED or STOPPING")
    since: float = Field(description="Unix time the state began")
    port: int | None = Field(description="scsynth UDP port")
    cpu: float | None = Field(description="scsynth average CPU, percent")
    peak_cpu: float | None
    synths: int | None = Field(description="synths running on scsynth")
    uptime: float | None = Field(description="seconds since the instance became READY")
    restarts: int = Field(description="restarts within the restart window")
    restart_budget_left: int
    reason: str | None = Field(description="why it is not READY, when it is not")
    nodes: list[str] = Field(description="named persistent nodes")


class InstanceList(BaseModel):
    """Every instance of the installation."""

    mode: str = Field(description="hosted: this server runs the orchestra; attached: a running "
                      "`scorch run` does")
    instances: list[InstanceRow]


class ErrorInfo(BaseModel):
    """A SuperCollider error, located in the submitted code."""

    kind: str = Field(description="parse, runtime, timeout, unavailable or interrupted")
    message: str
    line: int | None = Field(description="1-based line in the submitted code")
    char: int | None
    context: str = Field(description="the source lines around the error with a caret")
    receiver: str | None
    call_stack: list[str]
    text: str = Field(description="the whole error rendered for a person")


class ExecuteOutcome(BaseModel):
    """What one instance did with the code."""

    instance: str
    ok: bool
    value: str | None = Field(description="the value of the last expression, as sclang prints it")
    posted: list[str] = Field(description="lines the code posted")
    warnings: list[str]
    elapsed_ms: float
    error: ErrorInfo | None


class ExecuteOutput(BaseModel):
    """One outcome per instance the selector named."""

    results: list[ExecuteOutcome]


class StopOutput(BaseModel):
    """Instances silenced, with the named nodes each forgot."""

    stopped: dict[str, list[str]]


class StatusOutput(BaseModel):
    """Full status of each instance named (state, pids, scsynth /status, named nodes)."""

    instances: list[dict[str, Any]]


class Line(BaseModel):
    """One console line."""

    seq: int = Field(description="position in the console; pass to wait_for's since")
    time: float
    source: str = Field(description="sclang, scsynth or jackd")
    text: str


class ConsoleOutput(BaseModel):
    """Console lines, oldest first."""

    instance: str
    lines: list[Line]


class WaitOutput(BaseModel):
    """Whether a matching line came in time."""

    matched: bool
    line: Line | None


class Param(BaseModel):
    """A SynthDef control with its useful range."""

    name: str
    default: float
    min: float
    max: float
    warp: str
    step: float
    units: str
    description: str


class SynthDefOut(BaseModel):
    """A library SynthDef."""

    name: str
    description: str
    category: str
    sustained: bool = Field(description="holds until released (has a gate)")
    pitched: bool = Field(description="has a freq control")
    params: list[Param]


class SynthDefsOutput(BaseModel):
    """The answer of the synthdefs tool."""

    action: str
    synthdefs: list[SynthDefOut] = Field(default_factory=list)
    loaded_on: list[str] = Field(default_factory=list, description="instances it was loaded on")


class PlayOutput(BaseModel):
    """A synth that started."""

    instance: str
    synthdef: str
    node: str | None = Field(description="the persistent node's name, when named")
    node_id: int | None = None
    params: dict[str, float]
    warnings: list[str] = Field(description="values outside the param's spec range")


class SetOutput(BaseModel):
    """A named node's values after the change."""

    instance: str
    node: str
    params: dict[str, float]
    warnings: list[str]


class ReleaseOutput(BaseModel):
    """A released named node."""

    instance: str
    node: str
    released: bool


class EventOut(BaseModel):
    """A lifecycle event."""

    seq: int
    time: float
    instance: str
    kind: str
    message: str
    details: dict[str, Any]


class EventsOutput(BaseModel):
    """Lifecycle events, oldest first."""

    events: list[EventOut]


class MidiOutput(BaseModel):
    """The answer of a MIDI action."""

    action: str
    result: Any
