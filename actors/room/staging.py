"""A room's safety stage from the Room actor's side: which one, kept last, its gain.

The stage itself is :mod:`scorch.primitives.synthdefs.stage`; where it sits and what
puts it back is :mod:`scorch.primitives.scsynth.placement`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from scorch.config import SafetyConfig
from scorch.primitives import OscMessage
from scorch.primitives.scsynth import OscClient, placement
from scorch.primitives.synthdefs import stage as stage_def
from scorch.state import RoomView, StageState


@functools.cache
def stage_synthdef(channels: int, lufs: bool) -> bytes:
    """The stage's SynthDef, built once per shape."""
    return stage_def.stage_synthdef(channels, lufs)


def stage_for(safety: SafetyConfig, outputs: int, gain_db: float, view: RoomView,
              fade: float = 0.0) -> placement.Stage | None:
    """The stage ``safety`` asks for over ``outputs`` at ``gain_db``; shown on ``view``."""
    on = safety.enabled and outputs > 0
    view.stage = StageState(on, safety.ceiling_dbfs, safety.max_lufs, gain_db, fade,
                            stage_def.LATENCY if on else 0)
    if not on:
        return None
    lufs = safety.max_lufs is not None
    controls = [("ceiling", safety.ceiling_dbfs), ("gain", gain_db)]
    if safety.max_lufs is not None:
        controls.append(("lufs", safety.max_lufs))
    return placement.Stage(stage_def.stage_name(outputs, lufs), stage_synthdef(outputs, lufs),
                        tuple(controls))


def keep_layout(osc: OscClient, view: RoomView,
                current: Callable[[], placement.Stage | None]) -> None:
    """Put back what anyone but scorch disturbs in the layout as soon as scsynth tells it, and
    hand the stage's readings to the view (both in the OSC receive thread)."""
    readings = view.stage_readings

    def notice(msg: OscMessage) -> None:
        for packet in placement.repairs(msg, current()):
            osc.send(packet)

    osc.on_notice = notice
    osc.listeners[stage_def.STAGE_REPLY] = lambda msg: readings.add(stage_def.reading(msg))

