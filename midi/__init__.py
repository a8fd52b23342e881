"""MIDI as pure logic: routes, curves, takeover, voices, clock; its I/O apart in midi/io/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from midi.actions import (
        Action,
        Address,
        BendVoice,
        PageCue,
        ReleaseVoice,
        SceneCue,
        SetParam,
        StartVoice,
        VoiceParam,
    )
    from midi.batch import Message, recover
    from midi.clock import (
        CLOCK_MESSAGES,
        CONTINUE,
        PPQN,
        START,
        STOP,
        TICK,
        ClockFollower,
        ClockReading,
        song_position,
    )
    from midi.coalesce import Coalescer
    from midi.curves import Curve
    from midi.engine import Engine, TargetSnapshot, midicps
    from midi.routes import (
        KIND,
        Route,
        RouteEntry,
        Table,
        compile_table,
        control_of,
        page_key,
        pages_of,
        port_matches,
        resolve_all,
    )
    from midi.schema import ClockOutConfig, ControlRoute, CueRoute, KeyRoute, MidiConfig, PageRoute
    from midi.store import FILENAME, load_routes, save_routes
    from midi.takeover import TOLERANCE
    from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN, Voice

__all__ = [
    "CLOCK_MESSAGES",
    "CONTINUE",
    "FILENAME",
    "FIRST_NODE_ID",
    "KIND",
    "NODE_ID_SPAN",
    "PPQN",
    "START",
    "STOP",
    "TICK",
    "TOLERANCE",
    "Action",
    "Address",
    "BendVoice",
    "ClockFollower",
    "ClockOutConfig",
    "ClockReading",
    "Coalescer",
    "ControlRoute",
    "CueRoute",
    "Curve",
    "Engine",
    "KeyRoute",
    "Message",
    "MidiConfig",
    "PageCue",
    "PageRoute",
    "ReleaseVoice",
    "Route",
    "RouteEntry",
    "SceneCue",
    "SetParam",
    "StartVoice",
    "Table",
    "TargetSnapshot",
    "Voice",
    "VoiceParam",
    "compile_table",
    "control_of",
    "load_routes",
    "midicps",
    "page_key",
    "pages_of",
    "port_matches",
    "recover",
    "resolve_all",
    "save_routes",
    "song_position",
]
__getattr__ = lazy_face(__name__, __file__)
