"""What the rooms should be and are, as pure data: desired state, the change bus, events."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.state.bus import Bus, Published, Reader, Subscription, as_json
    from scorch.state.calls import CallCounts
    from scorch.state.changes import (
        BufferFreed,
        BufferLoaded,
        GainChanged,
        NodeEnded,
        NodeMoved,
        NodeStarted,
        ParamsChanged,
        PatternChanged,
        PatternGone,
        RouteChanged,
        decode,
        encode,
    )
    from scorch.state.code_runs import CodeRun, origins
    from scorch.state.desired import (
        PERSISTENT_NODE_BASE,
        SAMPLE_BUFFER_BASE,
        SAMPLE_BUFFER_COUNT,
        UNNAMED_NODE_BASE,
        BufferState,
        DesiredState,
        NodeState,
    )
    from scorch.state.door import Door, doors_of
    from scorch.state.events import SOUNDING, Event, Kind, State
    from scorch.state.health import HealthPolicy, Pings
    from scorch.state.journal import Entry, Journal, entry_json, redone_line, undone_line
    from scorch.state.meters import Levels, StageState, db
    from scorch.state.playing import METER_OWNER, Stopped, owner, synth_count
    from scorch.state.restart_policy import Backoff, RestartIntensity
    from scorch.state.scenes import Scene, Values, missing, morph, restrict
    from scorch.state.session import (
        SESSION_VERSION,
        BufferSpec,
        NodeSpec,
        PatternSpec,
        RoomSpec,
        Session,
        diff,
        placement_problems,
    )
    from scorch.state.tempo import (
        INSTALLATION,
        MAX_BPM,
        MIN_BPM,
        TempoView,
        Timeline,
        check_bpm,
        follow_external,
    )
    from scorch.state.view import STARTING, RoomView, Snapshot

__all__ = [
    "INSTALLATION",
    "MAX_BPM",
    "METER_OWNER",
    "MIN_BPM",
    "PERSISTENT_NODE_BASE",
    "SAMPLE_BUFFER_BASE",
    "SAMPLE_BUFFER_COUNT",
    "SESSION_VERSION",
    "SOUNDING",
    "STARTING",
    "UNNAMED_NODE_BASE",
    "Backoff",
    "BufferFreed",
    "BufferLoaded",
    "BufferSpec",
    "BufferState",
    "Bus",
    "CallCounts",
    "CodeRun",
    "DesiredState",
    "Door",
    "Entry",
    "Event",
    "GainChanged",
    "HealthPolicy",
    "Journal",
    "Kind",
    "Levels",
    "NodeEnded",
    "NodeMoved",
    "NodeSpec",
    "NodeStarted",
    "NodeState",
    "ParamsChanged",
    "PatternChanged",
    "PatternGone",
    "PatternSpec",
    "Pings",
    "Published",
    "Reader",
    "RestartIntensity",
    "RoomSpec",
    "RoomView",
    "RouteChanged",
    "Scene",
    "Session",
    "Snapshot",
    "StageState",
    "State",
    "Stopped",
    "Subscription",
    "TempoView",
    "Timeline",
    "Values",
    "as_json",
    "check_bpm",
    "db",
    "decode",
    "diff",
    "doors_of",
    "encode",
    "entry_json",
    "follow_external",
    "missing",
    "morph",
    "origins",
    "owner",
    "placement_problems",
    "redone_line",
    "restrict",
    "synth_count",
    "undone_line",
]
__getattr__ = lazy_face(__name__, __file__)
