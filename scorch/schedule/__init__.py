"""The installation's hours as pure logic: time rules, a schedule in time, its clockwork, cues."""

from scorch.schedule.clockwork import Keeper, Tick
from scorch.schedule.cuelist import Cue, CueList, Firing
from scorch.schedule.plan import Call, Due, Entry, Plan, kind_of
from scorch.schedule.rules import Place, Rule, last_at, next_after, parse_rule

__all__ = ["Call", "Cue", "CueList", "Due", "Entry", "Firing", "Keeper", "Place", "Plan", "Rule",
           "Tick", "kind_of", "last_at", "next_after", "parse_rule"]
