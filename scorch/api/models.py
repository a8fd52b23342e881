"""Result models more than one operation returns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from scorch.primitives.system.audio_driver import AudioChoice


class ServerFields(BaseModel):
    """scsynth's own ``/status.reply``."""

    ugens: int
    synths: int
    groups: int
    synthdefs: int
    avg_cpu: float = Field(description="average CPU, percent")
    peak_cpu: float
    nominal_sample_rate: float
    actual_sample_rate: float


class AudioStatus(BaseModel):
    """The audio driver the installation runs with (``auto`` resolved at start), and why."""

    asked: str = Field(description="the config's driver: auto, jack, alsa or dummy")
    driver: str = Field(description="what runs: jack (joined a running JACK server), alsa "
                        "(scorch's jackd on a sound card) or dummy (headless, no sound out)")
    server: str = Field(description="the JACK server every room is a client of")
    device: str | None = Field(description="the sound card, for alsa")
    summary: str

    @classmethod
    def of(cls, choice: AudioChoice) -> AudioStatus:
        """The API form of the driver choice."""
        return cls(asked=choice.asked, driver=choice.driver, server=choice.server,
                   device=choice.device, summary=choice.describe())


class NodeInfo(BaseModel):
    """A named persistent node and its last values."""

    synthdef: str
    node_id: int
    params: dict[str, float]


class InstanceState(BaseModel):
    """An instance's name, where it is in its life, and why."""

    name: str
    group: str | None
    state: str = Field(description="STOPPED, BOOTING, READY, RESTARTING, FAILED or STOPPING")
    since: float = Field(description="Unix time the state began")
    reason: str | None = Field(description="why it is not READY, when it is not")
    port: int | None = Field(description="scsynth UDP port")
    uptime: float | None = Field(description="seconds since the instance became READY")
    restart_budget_left: int
    host: str | None = Field(None, description="the host that runs it (several hosts); null: "
                             "this machine")


class InstanceStatus(InstanceState):
    """Everything known about one instance."""

    lang_port: int | None
    pids: dict[str, int | None] = Field(description="process ids of scsynth and sclang")
    sclang: str = Field(description="sclang's own state: ready, starting, restarting, down")
    restarts_in_window: int
    last_crash: str | None
    nodes: dict[str, NodeInfo] = Field(description="named persistent nodes with their values")
    server: ServerFields | None = Field(description="scsynth's live /status, when it answers")

    @classmethod
    def from_status(cls, status: dict[str, Any], nodes: dict[str, Any]) -> InstanceStatus:
        """Build from the facade's status dict and the instance's nodes."""
        return cls.model_validate({**status, "nodes": nodes})


def plain(value: Any) -> Any:
    """JSON values all the way down: tuples become lists, other objects their text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)
