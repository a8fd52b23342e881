"""The installation's hours: its schedule and its cue list, fired by one thread at their times."""

from scorch.app.hours.cues import Cues
from scorch.app.hours.fired import Fired, Firer, Outcome, Source
from scorch.app.hours.keeping import Hours

__all__ = ["Cues", "Fired", "Firer", "Hours", "Outcome", "Source"]
