"""Result models more than one operation returns (the facade's own, from ``scorch.app.models``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from scorch.app import (
    BufferInfo,
    NodeInfo,
    RoomRow,
    RoomState,
    RoomStatus,
    SampleInfo,
    ServerFields,
)
from scorch.primitives.system import AudioChoice

__all__ = [
    "AudioStatus",
    "BufferInfo",
    "NodeInfo",
    "RoomRow",
    "RoomState",
    "RoomStatus",
    "SampleInfo",
    "ServerFields",
    "plain",
]


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


def plain(value: Any) -> Any:
    """JSON values all the way down: tuples become lists, other objects their text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)
