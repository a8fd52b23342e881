"""The hostile cases of the tools that hear like an engineer (issue 43): references,
sweeps, masking, notes' harmony; ``tool_fuzz`` runs them with the rest."""

from __future__ import annotations

from typing import Any

#: A short sweep of the fuzz room's node: two steps, no refining.
SWEEP = {"instance": "room", "node": "hum", "param": "freq", "seconds": 0.3, "settle": 0.0,
         "steps": 2, "refine": 0}
#: (tool, arguments, the argument a refusal must name).
HEARING_NAMED: list[tuple[str, dict[str, Any], str]] = [
    ("sweep", {**SWEEP, "param": "nope"}, "param"),
    ("sweep", {**SWEEP, "low": 100.0, "high": 100.0}, "high"),
    ("sweep", {**SWEEP, "low": 1e39}, "low"),
    ("sweep", {**SWEEP, "steps": 32, "param2": "amp", "steps2": 32}, "steps2"),
    # searching: 32 steps and 16 to refine, of 7 s each, is more than 300 s of listening
    ("sweep", {**SWEEP, "steps": 32, "refine": 16, "seconds": 5.0, "settle": 2.0,
               "value": 1000.0}, "steps"),
    ("sweep", {**SWEEP, "low2": 1.0}, "param2"),
    ("sweep", {**SWEEP, "figure": "band"}, "band"),
    ("sweep", {**SWEEP, "figure": "balance"}, "reference"),
    ("sweep", {**SWEEP, "figure": "loudness", "reference": "ghost"}, "reference"),
    ("sweep", {**SWEEP, "value": 1.0, "reference": "ghost"}, "value"),
    ("sweep", {**SWEEP, "figure": "nonsense"}, "figure"),
    ("sweep", {**SWEEP, "leave": "closest", "leave_at": 3.0}, "leave_at"),
    ("sweep", {**SWEEP, "node": "ghost"}, "node"),
    ("listen", {"instance": "room", "reference": "ghost", "seconds": 0.2}, "reference"),
    ("listen", {"instance": "room", "node": "hum", "versus": "hum", "seconds": 0.2}, "versus"),
    ("listen", {"instance": "room", "versus": "room", "seconds": 0.2}, "versus"),
    ("reference", {"action": "capture", "name": "../x", "path": "/etc/passwd"}, "name"),
    ("reference", {"action": "capture", "name": "x"}, "path"),
    ("reference", {"action": "capture", "name": "x", "path": "a.wav", "node": "hum"}, "node"),
    ("reference", {"action": "forget", "name": "ghost"}, "name"),
    ("reference", {"action": "forget", "name": "a\x00b"}, "name"),
    ("notes", {"action": "harmony"}, "last_bars"),
    ("notes", {"action": "harmony", "path": "x.mid", "last_bars": 4.0}, "path"),
    ("notes", {"action": "harmony", "last_bars": -1.0}, "last_bars"),
]
#: (tool, arguments): each ends in a result or a clear error.
HEARING_HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("sweep", {**SWEEP, "low": float("nan")}),  # JSON carries NaN as null: the default low
    ("listen", {"instance": "room", "versus": "ghost", "seconds": 0.2}),
    ("reference", {"action": "capture", "name": "x" * 100, "instance": "room"}),
    ("notes", {"action": "harmony", "last_seconds": 1e300}),
    ("sweep", {**SWEEP, "figure": "band", "band": "\x00"}),
    ("render", {"synthdef": "sine", "duration": 0.5, "reference": "../x"}),
]
