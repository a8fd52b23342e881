"""The gain operation: read or fade each room's master gain, in its safety stage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, Strict

from scorch.api.fields import Selector
from scorch.api.operation import (
    SET,
    Args,
    Changes,
    CliForm,
    Result,
    operation,
)
from scorch.app import StageInfo
from scorch.primitives.synthdefs import GAIN_FLOOR_DB, GAIN_MAX_DB

if TYPE_CHECKING:
    from scorch.app import Orchestra

#: The longest fade (s).
MAX_FADE = 600.0


class GainArgs(Args):
    """Which rooms, and the gain to fade to; without db it reads."""

    instance: Selector = "*"
    db: Annotated[float | None, Strict(), Field(
        ge=GAIN_FLOOR_DB, le=GAIN_MAX_DB, allow_inf_nan=False,
        description=f"dB ({GAIN_FLOOR_DB:g}: silent, 0: as played); the ceiling still "
        "holds. Omitted: read")] = None
    fade: Annotated[float, Strict(), Field(
        ge=0, le=MAX_FADE, allow_inf_nan=False,
        description="Seconds to fade over, linearly in dB")] = 0.0


class GainOutput(Result):
    """Each room's safety stage and master gain."""

    rooms: dict[str, StageInfo]


@operation(access=SET, cli=CliForm("gain", ("instance", "db")), journal=Changes(given="db"))
def gain(orch: Orchestra, args: GainArgs) -> GainOutput:
    """Read or fade rooms' master gain, in their safety stage (after their code): quiet
    hours. Journaled (undo); kept through restarts and sessions."""
    names = orch.rooms.resolve(args.instance)
    if args.db is not None:
        for name in names:
            orch.rooms.set_gain(name, args.db, args.fade)
    return GainOutput(rooms={name: status.stage for name in names
                             if (status := orch.rooms.status(name, live=False)).stage})
