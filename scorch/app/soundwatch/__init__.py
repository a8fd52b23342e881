"""The watch on each room's sound: faults as typed events, and the actions the config names."""

from scorch.app.soundwatch.actions import action_call
from scorch.app.soundwatch.watch import SoundWatch

__all__ = ["SoundWatch", "action_call"]
