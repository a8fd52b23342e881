"""The ``[safety]`` table (every room) and ``[instances.NAME.safety]`` (one room, over it).

Every room has a safety stage unless a config line switches it off
(``enabled = false``), which ``scorch doctor`` and the page point out: NaN and DC
out, every output held under ``ceiling_dbfs``, and with ``max_lufs`` its short-term
loudness held under that too (``scorch/primitives/synthdefs/stage.py``).
"""

from __future__ import annotations

from pydantic import Field

from scorch.values import StrictModel

#: The lowest ceiling and loudness limit a room may have (quieter is a master gain's job).
LOWEST_CEILING, LOWEST_LUFS = -40.0, -60.0


class SafetyConfig(StrictModel):
    """``[safety]``: the stage every room has, unless its own table says otherwise."""

    enabled: bool = Field(True, description="the safety stage runs (switching it off lets "
                          "code send NaN, DC and any level to the loudspeakers)")
    ceiling_dbfs: float = Field(-1.0, ge=LOWEST_CEILING, le=0.0,
                                description="no output sample, and no true peak between "
                                "samples, goes above this (dBFS)")
    max_lufs: float | None = Field(None, ge=LOWEST_LUFS, le=0.0,
                                   description="short-term loudness (LUFS, 3 s) the room "
                                   "is held under; none: no loudness limit")


class RoomSafety(StrictModel):
    """``[instances.NAME.safety]``: what differs in this room from ``[safety]``."""

    enabled: bool | None = None
    ceiling_dbfs: float | None = Field(None, ge=LOWEST_CEILING, le=0.0)
    max_lufs: float | None = Field(None, ge=LOWEST_LUFS, le=0.0,
                                   description="0 lifts a loudness limit [safety] sets")

    def over(self, installation: SafetyConfig) -> SafetyConfig:
        """The room's settings: its own keys over the installation's."""
        lufs = installation.max_lufs if self.max_lufs is None else self.max_lufs
        return SafetyConfig(
            enabled=installation.enabled if self.enabled is None else self.enabled,
            ceiling_dbfs=(installation.ceiling_dbfs if self.ceiling_dbfs is None
                          else self.ceiling_dbfs),
            max_lufs=None if lufs == 0.0 else lufs)
