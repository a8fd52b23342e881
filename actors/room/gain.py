"""The master gain in a room's safety stage, from the Room actor (``proxy.stage``)."""

from __future__ import annotations

from actors.room.processes import Processes
from actors.room.staging import stage_for
from scorch.primitives.scsynth import commands, placement
from scorch.primitives.synthdefs import stage as stage_def
from scorch.state import Bus, DesiredState, GainChanged, RoomView, StageState


class StageControl:
    """The master gain in a room's stage, from the Room actor (``proxy.stage``; actor
    thread). The desired state keeps the gain, so every new stage starts at it (the first
    at a resumed session's)."""

    def __init__(self, name: str, desired: DesiredState, processes: Processes,
                 view: RoomView, bus: Bus) -> None:
        self.name = name
        self._bus = bus
        self._desired = desired
        self._processes = processes
        self._view = view
        seed = processes.settings.seed  # --resume: the session's gain from the first boot
        if seed is not None and seed.gain_db is not None:
            desired.gain_db = seed.gain_db

    def set_gain(self, db: float, fade: float) -> StageState:
        """Fade the master gain to ``db`` over ``fade`` seconds (at once when 0)."""
        db = min(max(db, stage_def.GAIN_FLOOR_DB), stage_def.GAIN_MAX_DB)
        self._desired.gain_db = db
        processes = self._processes
        stage = stage_for(processes.settings.safety, processes.outputs, db, self._view, fade)
        osc = processes.osc
        if processes.stage is not None and stage is not None:
            processes.stage = stage  # what its keeper starts again, should it have to
            if osc is not None:
                osc.send(commands.n_set(placement.STAGE_NODE, {"fade": fade, "gain": db}))
        self._bus.publish(GainChanged(self.name, db, fade))
        return self._view.stage
