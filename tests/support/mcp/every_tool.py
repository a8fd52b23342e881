"""Valid arguments for every MCP tool on the two-room config (``harness.two_rooms``).

The tests that call every tool take them from here, so a tool that ``tools/list``
names and this table lacks fails them: a new tool is covered as soon as it exists.
"""

from __future__ import annotations

from typing import Any

#: What execute posts and wait_for waits for.
MARKER = "first-calls-marker"
#: Valid arguments for every tool (``buffer``'s path is the caller's own WAV file). Calls
#: that change a room keep out of each other's way when made at once (stop empties beta
#: only; set and release touch different nodes of alpha, hum and drone, if it has them).
CALLS: dict[str, dict[str, Any]] = {
    "list_instances": {},
    "status": {"instance": "*"},
    "events": {"instance": "*"},
    "instance": {"action": "boot", "name": "beta"},
    "execute": {"instance": "alpha", "code": f'"{MARKER}".postln; 1 + 1', "timeout_s": 60},
    "wait_for": {"instance": "alpha", "pattern": MARKER, "since": 0, "timeout_s": 60},
    "console": {"instance": "alpha", "lines": 20},
    "stop": {"instance": "beta"},
    "gain": {"instance": "alpha"},
    "synthdefs": {"action": "list"},
    "play": {"instance": "beta", "synthdef": "sine", "params": {"freq": 330, "amp": 0.001}},
    "set": {"instance": "alpha", "node": "hum", "params": {"freq": 440}},
    "release": {"instance": "alpha", "node": "drone"},
    "buffer": {"action": "load", "instance": "beta", "path": "<a wav file>"},
    "scene": {"action": "save", "name": "first", "instance": "alpha"},
    "session": {"action": "save", "name": "first"},
    "snippet": {"action": "run", "name": "synthdef-controls", "instance": "alpha",
                "timeout_s": 60},
    "midi": {"action": "routes"},
    "notes": {"action": "sounding"},
    "partner": {"action": "answering"},
    "playing": {"instance": "alpha"},
    "tempo": {},
    "docs": {"name": "SinOsc", "timeout_s": 120},
    "history": {},
    "listen": {"instance": "alpha", "node": "hum", "seconds": 0.5},
    "record": {"action": "start", "instance": "alpha", "seconds": 1},
    "render": {"synthdef": "sine", "duration": 0.5},
    "live": {},
    "fader": {"instance": "alpha", "node": "hum", "param": "amp", "value": 0.001},
    "doctor": {},
    "pattern": {"action": "unmute", "instance": "alpha", "at": "now"},
    "undo": {"action": "list"},
    "schedule": {"next": "24h"},
    "cue": {"action": "list"},
}
