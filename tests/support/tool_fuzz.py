"""Feed every MCP tool generated and hostile input through a real client; count what comes back.

Inputs are drawn from each tool's own inputSchema (hypothesis-jsonschema), and for
a tool with actions from each action's own schema too (its ``$defs`` entry with the
tool's arguments, ``mcp_server.schemas.action_schema``), with
timeouts capped so a run stays short, and from a list of hand-made hostile
cases (float32 edges, huge and odd strings, NUL bytes, booleans as words,
hostile SuperCollider code). Every call must end in a result or a clear error:
never an internal error, never a hang. Used by tests/integration/rooms/test_tool_edges.py (a
short run) and bench/tool_fuzz.py (a long one).
"""

from __future__ import annotations

import copy
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from mcp import Client

from mcp_server.schemas import action_schema
from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.support.mcp.hearing_cases import HEARING_HOSTILE, HEARING_NAMED

#: The room every call is aimed at: a named node to hit, MIDI on JACK (and PLAY's pattern).
ROOM = """
[midi]
backend = "jack"
[instances.room]
synthdefs = ["sine"]
[instances.room.nodes.hum]
synthdef = "sine"
params = { freq = 220, amp = 0.001 }
"""

#: A playing Pdef, so that pattern actions reach real code in sclang.
PLAY = "Pdef(\\tick, Pbind(\\dur, 0.5, \\legato, 0.1, \\amp, 0.001)).play; 1"

Call = Callable[[str, dict[str, Any]], tuple[bool, str]]
Ask = Callable[[str, dict[str, Any]], tuple[bool, str, dict[str, Any] | None]]
"""A call answered with its structured content too (an error's code and argument)."""


@dataclass
class Target:
    """A booted room, a real MCP client to it, and the tools' input schemas."""

    orchestra: Orchestra
    call: Call
    schemas: dict[str, dict[str, Any]]
    ask: Ask


@contextmanager
def fuzz_target(folder: Path, jack_server: str, library: SynthDefLibrary) -> Iterator[Target]:
    """Boot the room in ``folder`` and connect a client in a blocking portal; stop both after."""
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack_server}"\n')
    orch = Orchestra(parse_config(text + ROOM, folder / "config.toml"), library)
    try:
        if orch.start() != {"room": None}:
            raise RuntimeError(f"the room did not boot: {orch.rooms.status('room')}")
        if not orch.rooms.execute_one("room", PLAY, timeout=10).ok:
            raise RuntimeError("the room's Pdef did not play")
        with start_blocking_portal() as portal, \
                portal.wrap_async_context_manager(Client(build_server(LocalService(orch)))) as c:

            async def one(tool: str, args: dict[str, Any]
                          ) -> tuple[bool, str, dict[str, Any] | None]:
                with anyio.fail_after(HANG):
                    result = await c.call_tool(tool, args)
                text = "\n".join(getattr(b, "text", "") for b in result.content)
                return bool(result.is_error), text, result.structured_content

            def ask(tool: str, args: dict[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
                return portal.call(one, tool, args)

            def call(tool: str, args: dict[str, Any]) -> tuple[bool, str]:
                return ask(tool, args)[:2]

            tools = portal.call(c.list_tools).tools
            yield Target(orch, call, {tool.name: tool.input_schema for tool in tools}, ask)
    finally:
        orch.stop()


#: Seconds any generated wait may ask for (the schema allows up to 300).
MAX_WAIT = 1.0
#: Arguments that are lengths of time to wait for or to render, capped like timeouts.
_DURATIONS = ("seconds", "duration", "settle")
#: Counts of steps a call takes (a sweep's), capped so one call stays short.
_COUNTS = ("steps", "steps2", "refine")
MAX_STEPS = 3
#: Seconds one call may take before it counts as a hang.
HANG = 60.0


def capped(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's schema with its timeouts and durations capped at MAX_WAIT (a run must stay
    short)."""
    schema = copy.deepcopy(schema)
    for name, prop in schema.get("properties", {}).items():
        if name.startswith("timeout") or name in _DURATIONS:
            for option in [prop, *prop.get("anyOf", [])]:
                if option.get("type") == "number":
                    option["maximum"] = min(option.get("maximum", MAX_WAIT), MAX_WAIT)
        if name in _COUNTS:
            for option in [prop, *prop.get("anyOf", [])]:
                if option.get("type") == "integer":
                    option["maximum"] = min(option.get("maximum", MAX_STEPS), MAX_STEPS)
    return schema


#: Names that exist in the test room, put into generated arguments so calls reach it.
REAL = {"instance": ["room", "*"], "name": ["room", "hum", "tick"], "node": ["hum"],
        "synthdef": ["sine"], "kind": ["Pdef"], "key": ["dur"]}


def action_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Each action's own schema, for a tool with actions (its ``$defs`` entry with the
    arguments it names)."""
    if "action" not in schema.get("properties", {}):
        return []
    return [action_schema(schema, action) for action in schema.get("$defs", {})]


def generated(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments from a tool's schema (or one of its actions'): as drawn, with real names,
    or one argument spoiled."""
    drawn = st.one_of(from_schema(capped(schema)),
                      *(from_schema(capped(own)) for own in action_schemas(schema)))
    names = list(schema.get("properties", {})) or ["x"]
    real = {key: st.sampled_from(values) for key, values in REAL.items() if key in names}
    valid = st.one_of(drawn, st.builds(lambda args, picked: {**args, **picked}, drawn,
                                       st.fixed_dictionaries({}, optional=real)))
    junk = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=50), st.lists(st.integers(), max_size=3))
    spoiled = st.builds(lambda args, key, value: {**args, key: value},
                        valid, st.sampled_from([*names, "unknown_argument"]), junk)
    return st.one_of(valid, spoiled)


BIG = 5 * 1024 * 1024
#: (tool, arguments): what a careless or hostile caller sends.
HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("set", {"instance": "room", "node": "hum", "params": {"freq": 1e39}}),
    ("set", {"instance": "room", "node": "hum", "params": {"freq": 3.5e38}}),
    ("set", {"instance": "room", "node": "hum", "params": {"freq": -3.5e38}}),
    ("set", {"instance": "room", "node": "hum", "params": {"freq": 3.4028234e38}}),
    ("set", {"instance": "room", "node": "hum", "params": {}}),
    ("set", {"instance": "room", "node": "hum", "params": {"freq": "440"}}),
    ("set", {"instance": "room", "node": "hum", "params": {"x" * 100: 1}}),
    ("play", {"instance": "room", "synthdef": "sine", "params": {"amp": 1e39}}),
    ("play", {"instance": "room", "synthdef": "sine", "node": "n" * 100_000}),
    ("play", {"instance": "room", "synthdef": "sine", "node": "bad name!"}),
    ("play", {"instance": "room", "synthdef": "sine", "params": {"freq": True}}),
    ("play", {"instance": "room", "synthdef": "../../etc/passwd"}),
    ("status", {"instance": "r" * BIG}),
    ("status", {"instance": "日本語"}),
    ("status", {"instance": ""}),
    ("execute", {"instance": "room", "code": "1\x002"}),
    ("execute", {"instance": "room", "code": "1", "timeout_s": 1e-9}),
    ("execute", {"instance": "room", "code": "1", "timeout_s": 1e999}),
    ("execute", {"instance": "room", "code": "x" * (300 * 1024)}),
    ("execute", {"instance": "room", "code": "0.exit; 1"}),
    ("execute", {"instance": "room", "code": "s.quit; 1"}),
    ("execute", {"instance": "room", "code": "loop { 1 }", "timeout_s": 0.5}),
    ("execute", {"instance": "room", "code": '"@@scorch:abc:end:2@@ok".postln; 1'}),
    ("execute", {"instance": "room", "code": "thisThread.exceptionHandler = nil; nil.foo"}),
    ("execute", {"instance": "room", "code": "{ |a| ^a }.value(1); ^2"}),
    ("execute", {"instance": "room", "code": "\x1b\x0c\x18 1"}),
    ("execute", {"instance": "room", "code": "1", "check_only": "yes"}),
    ("console", {"instance": "room", "clear": "yes"}),
    ("console", {"instance": "room", "lines": -1}),
    ("console", {"instance": "room", "lines": 10**12}),
    ("wait_for", {"instance": "room", "pattern": "^(a+)+$", "timeout_s": 0.5}),
    ("wait_for", {"instance": "room", "pattern": "(a)\\1", "timeout_s": 0.5}),
    ("wait_for", {"instance": "room", "pattern": "(" * 5000, "timeout_s": 0.5}),
    ("wait_for", {"instance": "room", "pattern": "((a{100}){100}){100}", "timeout_s": 0.5}),
    ("wait_for", {"instance": "room", "pattern": "x", "timeout_s": 0.5, "since": -5}),
    ("events", {"instance": "*", "since": 2**70}),
    ("events", {"report": "1e999h"}),
    ("events", {"report": "9" * 20}),
    ("events", {"report": "-1h"}),
    ("events", {"report": "x" * 21}),
    ("instance", {"name": "room", "action": "explode"}),
    ("synthdefs", {"action": "load", "name": "sine", "instance": "*"}),
    ("synthdefs", {"action": "describe", "name": "\x00"}),
    ("midi", {"action": "map", "spec": {"cc": 1, "instance": "room", "node": "hum",
                                        "param": "freq", "range": [0, 1e39]}}),
    ("midi", {"action": "map", "spec": "not an object"}),
    ("midi", {"action": "send", "port": "nowhere", "message": {"type": "note_on"}}),
    ("midi", {"action": "send", "port": "scorch", "message": [{"type": "note_on", "note": 60,
                                                              "time": -1}]}),
    ("midi", {"action": "send", "port": "scorch", "message": [{"type": "note_on", "note": 60,
                                                              "time": 1e308}]}),
    ("midi", {"action": "send", "port": "scorch", "message": [{"type": "note_on", "note": 60,
                                                              "time": "soon"}]}),
    ("midi", {"action": "send", "port": "scorch", "message": [{"type": "note_on",
                                                              "note": 300}]}),
    ("midi", {"action": "send", "port": "scorch", "message": [[1, 2, 3]]}),
    ("midi", {"action": "send", "port": "scorch", "message": []}),
    ("midi", {"action": "send", "port": "scorch", "message": [{"type": "clock"}] * 1001}),
    ("midi", {"action": "send", "port": "scorch", "message": [{"type": "cc", "control": 1,
                                                              "value": 1, "channel": 17}]}),
    ("midi", {"action": "unmap", "route_id": "../x"}),
    ("midi", {"action": "profiles", "device": "\x00" * 50}),
    ("midi", {"action": "profiles", "device": "../../etc/passwd"}),
    ("midi", {"action": "map", "spec": {"port": "nanoKONTROL2", "control": "fader9",
                                        "instance": "room", "node": "hum", "param": "freq"}}),
    ("midi", {"action": "map", "spec": {"port": "*", "control": "Fader 1; drop",
                                        "instance": "room", "node": "hum", "param": "freq"}}),
    ("midi", {"action": "map", "spec": {"port": "nano", "controls": ["fader1"] * 500,
                                        "instance": "room", "node": "hum", "param": "freq"}}),
    ("midi", {"action": "map", "spec": {"port": "nano", "controls": ["fader1", "fader2"],
                                        "params": ["freq"], "instance": "room",
                                        "node": "hum"}}),
    ("midi", {"action": "map", "spec": {"port": "nano", "controls": "fader1",
                                        "instance": "room", "node": "hum", "param": "freq"}}),
    ("midi", {"action": "map", "spec": {"port": "nano", "control": "track_right",
                                        "page": "../x"}}),
    ("midi", {"action": "map", "spec": {"type": "cue", "port": "nano", "note": 36,
                                        "action": "standby"}}),
    ("midi", {"action": "map", "spec": {"type": "cue", "note": 36, "cc": 1, "cue": "../x"}}),
    ("midi", {"action": "map", "spec": {"type": "cue", "control": "play; drop",
                                        "action": "back"}}),
    ("release", {"instance": "room", "node": "ghost"}),
    ("buffer", {"action": "load", "instance": "room", "path": "/" * 5000}),
    ("buffer", {"action": "free", "instance": "room", "name": "ghost"}),
    ("buffer", {"action": "search", "query": "*" * 1000}),
    ("session", {"action": "load", "name": "../../config"}),
    ("session", {"action": "diff", "name": "ghost"}),
    ("session", {"action": "save"}),
    ("scene", {"action": "morph", "name": "ghost", "position": 1e999}),
    ("scene", {"action": "morph", "name": "ghost", "position": 0.5, "seconds": 1}),
    ("scene", {"action": "morph", "name": "ghost", "seconds": 0}),
    ("scene", {"action": "recall", "name": "ghost", "instance": "nowhere"}),
    ("execute", {"instance": "room", "code": 'Pdef("a\\tb\\nc".asSymbol, Pbind(\\dur, 1)); '
                 'Pdef(\'q"\\\\x\', Pbind(\\dur, 2)); Ndef(\\n, { |a| ^a }); 1'}),
    ("playing", {"instance": "room", "detail": True}),
    ("playing", {"instance": "room", "detail": "yes"}),
    ("playing", {"instance": "\x00"}),
    ("playing", {"instance": "nowhere"}),
    ("playing", {"instance": "room", "detail": 1}),
    ("pattern", {"action": "set", "instance": "room", "name": "tick", "key": "dur",
                 "value": "1), 0.25, (\"bar\""}),  # a value that breaks out: it still runs
    ("pattern", {"action": "define", "instance": "room", "kind": "Ndef", "name": "hostile",
                 "source": "{ |a| ^a }", "at": "now"}),
    ("pattern", {"action": "stop", "instance": "room", "name": "hostile", "kind": "Ndef"}),
    ("gain", {"instance": "room", "db": 1e39}),
    ("gain", {"instance": "room", "db": -1e39, "fade": -1}),
    ("gain", {"instance": "room", "db": "-6"}),
    ("gain", {"instance": "room", "db": -6, "fade": 1e999}),
    ("gain", {"instance": "room", "db": 0, "fade": 0}),
    ("gain", {"instance": "nowhere", "db": 0}),
    ("execute", {"instance": "room", "code": f's.sendMsg("/n_set", {2**28 - 3}, "ceiling", '
                 f'40); s.sendMsg("/n_free", {2**28 - 3}); 1'}),
    ("undo", {"action": "list"}),
    ("undo", {"action": "undo", "steps": 3, "dry_run": True}),
    ("undo", {"action": "checkpoint", "name": "fuzzed"}),
    ("undo", {"action": "back", "name": "fuzzed", "dry_run": True}),
]

PATTERN = {"instance": "room", "name": "tick"}
DEFINE = {"action": "define", "instance": "room", "kind": "Pdef", "name": "fresh",
          "source": "Pbind(\\dur, 1, \\amp, 0.001)"}
#: (tool, arguments, the argument its error must name): hostile values for every argument
#: of pattern, undo and the dry runs (in HOSTILE too), each a clear error naming it.
NAMED: list[tuple[str, dict[str, Any], str]] = [
    ("pattern", {**DEFINE, "kind": "Xdef"}, "kind"),
    ("pattern", {k: v for k, v in DEFINE.items() if k != "kind"}, "kind"),
    ("pattern", {**DEFINE, "name": "../x"}, "name"),
    ("pattern", {**DEFINE, "name": "a\x00b"}, "name"),
    ("pattern", {**DEFINE, "name": "tick"}, "name"),  # in use
    ("pattern", {**DEFINE, "source": "1\x002"}, "source"),
    ("pattern", {**DEFINE, "source": '1)); Error("x").throw; ((1'}, "source"),
    ("pattern", {**DEFINE, "source": "x" * (300 * 1024)}, "source"),
    ("pattern", {**DEFINE, "kind": "Pbindef", "source": "Pseq([1], inf)"}, "source"),
    ("pattern", {**DEFINE, "play": "yes"}, "play"),
    ("pattern", {**DEFINE, "at": "later"}, "at"),
    ("pattern", {"action": "source", **PATTERN, "source": "Pbind(\\dur,"}, "source"),
    ("pattern", {"action": "source", **PATTERN, "source": "1)); 0.exit; (("}, "source"),
    ("pattern", {"action": "source", "instance": "room", "name": "ghost", "source": "1"},
     "name"),
    ("pattern", {"action": "set", **PATTERN, "key": "dur', 0.exit, '", "value": "1"}, "key"),
    ("pattern", {"action": "set", **PATTERN, "key": "dur", "value": "1/nil"}, "value"),
    ("pattern", {"action": "set", **PATTERN, "key": "dur", "value": "x" * 5000}, "value"),
    ("pattern", {"action": "set", **PATTERN, "key": "dur"}, "value"),
    ("pattern", {"action": "fade", **PATTERN, "seconds": 1e39}, "seconds"),
    ("pattern", {"action": "fade", **PATTERN, "seconds": -1e39}, "seconds"),
    ("pattern", {"action": "fade", **PATTERN, "seconds": float("nan")}, "seconds"),
    ("pattern", {"action": "fade", **PATTERN, "seconds": "2"}, "seconds"),
    ("pattern", {"action": "play", **PATTERN, "at": "later"}, "at"),
    ("pattern", {"action": "stop", **PATTERN, "kind": "Xdef"}, "kind"),
    ("pattern", {"action": "mute", "instance": "room", "name": ""}, "name"),
    ("pattern", {"action": "unmute", "instance": "room", "name": 5}, "name"),
    ("pattern", {"action": "solo", "instance": "room", "name": "ghost"}, "name"),
    ("pattern", {"action": "explode", **PATTERN}, "action"),
    ("undo", {"steps": 0}, "steps"),
    ("undo", {"steps": 10**12}, "steps"),
    ("undo", {"steps": "1"}, "steps"),
    ("undo", {"action": "redo", "steps": -1}, "steps"),
    ("undo", {"dry_run": "yes"}, "dry_run"),
    ("undo", {"instance": "\x00"}, "instance"),
    ("undo", {"action": "checkpoint", "name": "../x"}, "name"),
    ("undo", {"action": "checkpoint", "name": "a\x00b"}, "name"),
    ("undo", {"action": "back", "name": "../../config"}, "name"),
    ("undo", {"action": "back", "name": "nowhere"}, "name"),
    ("stop", {"instance": "room", "dry_run": "yes"}, "dry_run"),
    ("stop", {"instance": "room", "dry_run": 1}, "dry_run"),
    ("instance", {"action": "quit", "name": "room", "dry_run": "no"}, "dry_run"),
    ("buffer", {"action": "free", "instance": "room", "name": "ghost", "dry_run": 0},
     "dry_run"),
    ("playing", {"instance": "room", "detail": "yes"}, "detail"),
    ("schedule", {"at": "25:99"}, "at"),
    ("schedule", {"at": "x" * 5000}, "at"),
    ("schedule", {"next": "-1h"}, "next"),
    ("schedule", {"next": "99999d"}, "next"),
    ("schedule", {"next": "1h", "at": "now"}, None),
    ("schedule", {"next": 5}, "next"),
    ("cue", {"action": "go", "cue": "../1"}, "cue"),
    ("cue", {"action": "go", "cue": "ghost"}, "cue"),
    ("cue", {"action": "go", "at": "soon"}, "at"),
    ("cue", {"action": "go", "at": 1e300}, "at"),
    ("cue", {"action": "go", "at": 1.0}, "at"),
    ("cue", {"action": "standby", "cue": "\x00"}, "cue"),
    ("cue", {"action": "add", "cue": "f1", "do": [{"op": "execute"}]}, "do"),
    ("cue", {"action": "add", "cue": "f1", "do": [{"op": "status"}]}, "do"),
    ("cue", {"action": "add", "cue": "f1", "do": [{"no": "op"}]}, "do"),
    ("cue", {"action": "add", "cue": "f1", "do": [{"op": "cue", "action": "go"}]}, "do"),
    ("cue", {"action": "add", "cue": "f1", "do": [{"op": "set", "instance": "room",
                                                   "node": "hum", "params": {"freq": 1e39}}]},
     "do"),
    ("cue", {"action": "add", "cue": "f1", "do": [{}] * 65}, "do"),
    ("cue", {"action": "add", "cue": "f1", "do": "not a list"}, "do"),
    ("cue", {"action": "add", "cue": "f1", "do": [], "pre_wait": -1}, "pre_wait"),
    ("cue", {"action": "add", "cue": "f1", "do": [], "then": "jump"}, "then"),
    ("cue", {"action": "edit", "cue": "f1"}, None),
    ("cue", {"action": "delete", "cue": "nowhere"}, "cue"),
]
#: (tool, arguments): a path argument that leads outside the folders the installation allows
#: (the test room has no [samples] folder), each refused as PATH_REFUSED naming `path`.
PATHS: list[tuple[str, dict[str, Any]]] = [
    ("buffer", {"action": "load", "instance": "room", "path": "/etc/passwd"}),
    ("buffer", {"action": "load", "instance": "room", "path": "/dev/zero"}),
    ("buffer", {"action": "load", "instance": "room", "path": "/proc/self/status"}),
    ("buffer", {"action": "load", "instance": "room", "path": "../../etc/hostname"}),
    ("buffer", {"action": "load", "instance": "room", "path": "kick.wav\n"}),
    ("listen", {"path": "/etc/hostname"}),
    ("listen", {"path": "../../../../../../../etc/hostname"}),
    ("listen", {"path": "take\n"}),
    ("notes", {"action": "transcribe", "path": "/etc/hostname"}),
    ("notes", {"action": "harmony", "path": "/etc/passwd"}),
    ("notes", {"action": "harmony", "path": "../../config.toml"}),
    ("reference", {"action": "capture", "name": "x", "path": "/etc/passwd"}),
    ("reference", {"action": "capture", "name": "x", "path": "/dev/zero"}),
    ("notes", {"action": "play", "instance": "room", "path": "../../../../x.mid"}),
    ("notes", {"action": "export", "last_seconds": 5.0, "path": "/tmp/../etc/scorch.mid"}),
    ("notes", {"action": "export", "last_seconds": 5.0, "path": "../../x.mid"}),
    ("partner", {"action": "continue", "save": True, "path": "/root/x.mid"}),
    ("partner", {"action": "infill", "last_seconds": 5.0, "path": "../../../x.mid"}),
]
NAMED += [(tool, args, "path") for tool, args in PATHS]
NAMED += [("buffer", {"action": "load", "instance": "room", "path": "a\x00b.wav"}, "path"),
          ("buffer", {"action": "load", "instance": "room", "path": "/" * 5000}, "path")]
NAMED += HEARING_NAMED
HOSTILE += HEARING_HOSTILE
HOSTILE += [(tool, args) for tool, args, _ in NAMED]
HOSTILE += [
    ("cue", {"action": "add", "cue": "fz", "name": "hostile", "then": "follow",
             "do": [{"op": "set", "instance": "room", "node": "hum",
                     "params": {"amp": 0.001}}]}),
    ("cue", {"action": "go", "cue": "fz"}),
    ("cue", {"action": "go", "cue": "fz"}),  # a double GO
    ("cue", {"action": "stop"}),
    ("cue", {"action": "delete", "cue": "fz"}),
    ("schedule", {"next": "24h"}),
    ("schedule", {"at": "18:00 tomorrow"}),
]


@dataclass
class Tally:
    """What the calls came back with."""

    calls: int = 0
    results: int = 0
    clear_errors: int = 0
    internal: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    slowest: float = 0.0
    by_tool: Counter[str] = field(default_factory=Counter)

    def add(self, tool: str, args: dict[str, Any], outcome: tuple[bool, str] | None,
            took: float) -> None:
        """Count one call: (is_error, text), or None when it did not come back in time."""
        self.calls += 1
        self.by_tool[tool] += 1
        self.slowest = max(self.slowest, took)
        if outcome is None:
            self.hangs.append(f"{tool} {_short(args)}")
            return
        is_error, text = outcome
        if not is_error:
            self.results += 1
        elif "internal error" in text.lower() or "Traceback" in text:
            self.internal.append(f"{tool} {_short(args)}: {text[:300]}")
        else:
            self.clear_errors += 1


def _short(args: dict[str, Any]) -> str:
    text = repr(args)
    return text if len(text) < 200 else text[:200] + "..."


def run_call(call: Callable[[str, dict[str, Any]], tuple[bool, str]], tool: str,
             args: dict[str, Any], tally: Tally) -> None:
    """Make one call and count it."""
    started = time.monotonic()
    try:
        outcome: tuple[bool, str] | None = call(tool, args)
    except TimeoutError:
        outcome = None
    tally.add(tool, args, outcome, time.monotonic() - started)


def is_finite_json(value: Any) -> bool:
    """True if ``value`` is JSON without NaN or infinities (what a client may send)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(is_finite_json(v) for v in value.values())
    if isinstance(value, list):
        return all(is_finite_json(v) for v in value)
    return True
