"""The ``[watch]`` table (every room) and ``[instances.NAME.watch]`` (one room, over it).

The watch reads what each room's safety stage measures (``scorch/app/soundwatch/``)
and says when the sound goes wrong: a room expected to sound that is silent for
``silence_s``, a stage limiting for more than ``limit_s``, a NaN or infinity caught,
a howl (one tone rising for seconds; ``howl = false`` to watch for none), a DC offset,
and the JACK server's xruns over ``xruns_per_min`` (0, the default: not watched).
What it then does, per kind: ``alert`` (the event only), ``restart`` (the room),
``lower_gain`` (by ``lower_db``, through the journaled ``gain`` operation) or
``recall:SCENE`` (a saved scene, in that room).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from scorch.values import StrictModel

#: What an ``on_*`` key may say, apart from ``recall:SCENE``.
ACTIONS = ("alert", "restart", "lower_gain")
RECALL = "recall:"


def _action(value: str) -> str:
    if value in ACTIONS or (value.startswith(RECALL) and value[len(RECALL):].strip()):
        return value
    raise ValueError(f"an action is one of {', '.join(ACTIONS)} or recall:SCENE, "
                     f"not {value[:40]!r}")


Action = Annotated[str, Field(max_length=80), AfterValidator(_action)]
Seconds = Annotated[float, Field(gt=0, le=86400.0)]
Dbfs = Annotated[float, Field(ge=-120.0, le=0.0)]
Lower = Annotated[float, Field(gt=0, le=60.0)]


class WatchConfig(StrictModel):
    """``[watch]``: how every room's sound is watched, unless its own table says otherwise."""

    expect_sound: bool = Field(False, description="the room should always sound: silence "
                               "for silence_s is a fault (SOUND_SILENT)")
    silence_s: Seconds = Field(10.0, description="seconds of silence before SOUND_SILENT")
    silence_dbfs: Dbfs = Field(-60.0, description="peaks below this are silence (dBFS)")
    limit_s: Seconds = Field(5.0, description="seconds the safety stage may limit without "
                             "a pause before SOUND_LIMITING")
    howl: bool = Field(True, description="a tone that keeps rising is a fault (SOUND_HOWL)")
    xruns_per_min: Annotated[int, Field(ge=0, le=100_000)] = Field(
        0, description="more xruns of the room's JACK server in the last minute is a fault "
        "(SOUND_XRUNS); 0: not watched")
    lower_db: Lower = Field(6.0, description="dB the lower_gain action takes off the gain")
    on_silent: Action = Field("alert", description="alert, restart, lower_gain or "
                              "recall:SCENE")
    on_limiting: Action = "alert"
    on_nan: Action = "alert"
    on_howl: Action = "alert"
    on_dc: Action = "alert"
    on_xruns: Action = "alert"


class RoomWatch(StrictModel):
    """``[instances.NAME.watch]``: what differs in this room from ``[watch]``."""

    expect_sound: bool | None = None
    silence_s: Seconds | None = None
    silence_dbfs: Dbfs | None = None
    limit_s: Seconds | None = None
    howl: bool | None = None
    xruns_per_min: Annotated[int, Field(ge=0, le=100_000)] | None = None
    lower_db: Lower | None = None
    on_silent: Action | None = None
    on_limiting: Action | None = None
    on_nan: Action | None = None
    on_howl: Action | None = None
    on_dc: Action | None = None
    on_xruns: Action | None = None

    def over(self, installation: WatchConfig) -> WatchConfig:
        """The room's settings: its own keys over the installation's."""
        own = self.model_dump(exclude_none=True)
        return installation.model_copy(update=own) if own else installation
