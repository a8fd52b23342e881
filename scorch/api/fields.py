"""Argument types the operations share, each with the description Claude reads."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, Strict, model_validator

from scorch import values
from scorch.api.operation import Args
from scorch.errors import InvalidRequest
from scorch.primitives.input import compile_pattern
from scorch.values import Seconds

#: Code and patterns beyond these sizes are refused (a whole .scd file is far smaller).
MAX_CODE = 256 * 1024
MAX_PATTERN = 1000
MAX_PARAMS = 64


def _code(value: str) -> str:
    values.no_nul(value)  # sclang would cut the code short there
    if not value.strip():
        raise ValueError("code is empty: give SuperCollider code to run")
    return value


def _pattern(value: str) -> str:
    try:
        compile_pattern(value)
    except InvalidRequest as err:
        raise ValueError(f"not a usable regular expression: {err}") from None
    return value


Selector = Annotated[values.Selector, Field(
    description='A room, a group of rooms, or "*" for all')]

RoomName = Annotated[values.RoomName, Field(description="One room's name")]

NodeName = Annotated[values.NodeName, Field(description="A named node (from play)")]

SynthDefName = Annotated[values.SynthDefName, Field(
    description="A library SynthDef name (see synthdefs)")]

RouteId = Annotated[values.RouteId, Field(description="A MIDI route's id")]

Params = Annotated[dict[values.ParamName, values.Float32], Field(
    max_length=MAX_PARAMS,
    description='Control values by param name, e.g. {"freq": 220, "amp": 0.2} (synthdefs '
    "gives each SynthDef's)")]

Code = Annotated[str, Strict(), Field(
    max_length=MAX_CODE,
    description="SuperCollider code, as in the IDE; wrap several statements in ( ... ). "
    "`s` is this room's server."), AfterValidator(_code)]

Pattern = Annotated[str, Strict(), Field(
    min_length=1, max_length=MAX_PATTERN, description="A regular expression"),
    AfterValidator(_pattern)]

ExecuteTimeout = Annotated[Seconds, Field(
    ge=0.5, le=300, description="Seconds to wait; code still running then is stopped and "
    "sclang restarted (synths play on)")]

WaitTimeout = Annotated[Seconds, Field(le=120, description="Seconds to wait")]

At = Annotated[Annotated[float, Strict(), Field(allow_inf_nan=False)]
               | Literal["next_beat", "next_bar"] | None, Field(
    description="A Unix time (s), or next_beat / next_bar of the tempo (default: now)")]

Delay = Annotated[Annotated[float, Strict(), Field(ge=0, le=3600, allow_inf_nan=False)]
                  | None, Field(description="Seconds from now (instead of at)")]



class TimedArgs(Args):
    """Arguments of a request that may happen later: ``at`` or ``delay``."""

    at: At = None
    delay: Delay = None

    @model_validator(mode="after")
    def _one_time(self) -> TimedArgs:
        if self.at is not None and self.delay is not None:
            raise ValueError("give at or delay, not both")
        return self


class SelectorArgs(Args):
    """Rooms by name, group or ``*``."""

    instance: Selector
