"""What changed between the running config and a re-read one, and what applying it means. Pure.

``scorch reload`` (and SIGHUP) apply only the difference: rooms added or
removed; a room whose process settings changed (port, inputs, outputs, JACK
connections) restarted with its desired state kept; nodes from the config
added, their params set, replaced when their SynthDef changed, or released;
SynthDefs added; the MIDI router re-read; the watchdog re-timed; [samples]
taken. A room whose config did not change is not touched. What cannot change
under a running installation ([audio], state_dir, any other table) refuses
the whole reload, so a reload is applied entirely or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scorch.config.installation import Config
from scorch.config.tables import NodeConfig, RoomConfig
from scorch.errors import InvalidRequest

#: Settings of a room that its scsynth was started with: changing one restarts it.
PROCESS_KEYS = ("port", "inputs", "outputs", "connect")
#: Tables reload applies itself; a change anywhere else needs a new ``scorch run``.
LIVE_KEYS = frozenset({"instances", "midi", "watchdog", "samples", "source", "digest", "hosts",
                       "host", "remote", "whole_state", "location", "schedule", "cues",
                       "cueing", "safety"})
#: The installation's hours: a change puts the rooms in the new schedule's state for now.
HOURS_KEYS = ("location", "schedule", "cues", "cueing")


@dataclass(frozen=True)
class NodeChanges:
    """How a room's config nodes changed."""

    added: dict[str, NodeConfig] = field(default_factory=dict)
    changed: dict[str, NodeConfig] = field(default_factory=dict)
    """Same SynthDef, other params: set them."""
    replaced: dict[str, NodeConfig] = field(default_factory=dict)
    """Another SynthDef: release the node and play the new one under the same name."""
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.replaced or self.removed)


@dataclass(frozen=True)
class RoomChanges:
    """How one room's config changed."""

    config: RoomConfig
    """The room's new config."""
    restart_for: tuple[str, ...] = ()
    """The process settings that changed (the room restarts for them)."""
    synthdefs_added: tuple[str, ...] = ()
    nodes: NodeChanges = NodeChanges()
    group: bool = False
    startup: bool = False
    """The startup file changed: it runs from the room's next boot."""

    def __bool__(self) -> bool:
        return bool(self.restart_for or self.synthdefs_added or self.nodes or self.group
                    or self.startup)


@dataclass(frozen=True)
class ConfigChanges:
    """Everything a reload applies, in the order it applies it."""

    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    rooms: dict[str, RoomChanges] = field(default_factory=dict)
    midi: bool = False
    watchdog: bool = False
    samples: bool = False
    """[samples] is read at each load and search: nothing to do but say so."""
    hours: bool = False
    """[location], [[schedule]], [[cues]] or [cueing] changed."""

    def __bool__(self) -> bool:
        return bool(self.removed or self.added or self.rooms or self.midi or self.watchdog
                    or self.samples or self.hours)

    def summary(self) -> list[str]:
        """One line per change, for the operator."""
        lines = [f"room {name}: removed (stopped)" for name in self.removed]
        lines += [f"room {name}: added (booting)" for name in self.added]
        for name, room in self.rooms.items():
            if room.restart_for:
                lines.append(f"room {name}: restarted for {', '.join(room.restart_for)}")
            if room.group:
                lines.append(f"room {name}: group is now {room.config.group or 'none'}")
            if room.synthdefs_added:
                lines.append(f"room {name}: SynthDefs added: {', '.join(room.synthdefs_added)}")
            if room.startup:
                lines.append(f"room {name}: startup file changed (runs from its next boot)")
            nodes = room.nodes
            lines += [f"room {name}: node {n} added" for n in nodes.added]
            lines += [f"room {name}: node {n} params set" for n in nodes.changed]
            lines += [f"room {name}: node {n} replaced (new SynthDef)" for n in nodes.replaced]
            lines += [f"room {name}: node {n} released" for n in nodes.removed]
        if self.midi:
            lines.append("MIDI: routes and ports re-read")
        if self.watchdog:
            lines.append("watchdog: new timing now; new restart policy from each room's next "
                         "boot")
        if self.samples:
            lines.append("samples: folders and size limit apply from the next load")
        if self.hours:
            lines.append("schedule and cues: re-read (a new schedule puts the rooms in its "
                         "state for now)")
        return lines or ["nothing changed"]


def config_changes(old: Config, new: Config) -> ConfigChanges:
    """The difference from ``old`` to ``new``; InvalidRequest when it cannot be applied live."""
    fixed = [key for key in sorted(type(new).model_fields)
             if key not in LIVE_KEYS and getattr(old, key) != getattr(new, key)]
    if fixed:
        tables = ", ".join(f"[{key}]" if key != "state_dir" else key for key in fixed)
        raise InvalidRequest(f"{tables} changed, which a running installation cannot take: "
                             "restart `scorch run` to apply it (nothing was changed)")
    rooms = {}
    listen = old.listen_address() != new.listen_address()
    for name in old.instances.keys() & new.instances.keys():
        was, now = old.instances[name], new.instances[name]
        room = room_changes(was, now, listen,
                            was.safety.over(old.safety) != now.safety.over(new.safety))
        if room:
            rooms[name] = room
    return ConfigChanges(
        removed=tuple(n for n in old.instances if n not in new.instances),
        added=tuple(n for n in new.instances if n not in old.instances),
        rooms={name: rooms[name] for name in new.instances if name in rooms},
        # Routes to other hosts' rooms follow their addresses and groups.
        midi=(old.midi != new.midi or old.instances.keys() != new.instances.keys()
              or old.remote != new.remote or old.hosts != new.hosts),
        watchdog=old.watchdog != new.watchdog,
        samples=old.samples != new.samples,
        hours=any(getattr(old, key) != getattr(new, key) for key in HOURS_KEYS),
    )


def room_changes(old: RoomConfig, new: RoomConfig, listen: bool = False,
                 safety: bool = False) -> RoomChanges:
    """How one room's config changed (falsy when it did not).

    ``listen``: its host's ``listen`` address changed; ``safety``: its safety stage's
    settings did (``[safety]`` or its own table): either restarts its scsynth.
    """
    if old.synthdefs == "all":
        added: tuple[str, ...] = ()  # it has every one already
    elif new.synthdefs == "all":
        added = ("all",)
    else:
        added = tuple(name for name in new.synthdefs if name not in old.synthdefs)
    return RoomChanges(
        config=new,
        restart_for=tuple(k for k in PROCESS_KEYS if getattr(old, k) != getattr(new, k))
        + (("safety",) if safety else ()) + (("listen",) if listen else ()),
        synthdefs_added=added,
        nodes=node_changes(old.nodes, new.nodes),
        group=old.group != new.group,
        startup=old.startup != new.startup,
    )


def node_changes(old: dict[str, NodeConfig], new: dict[str, NodeConfig]) -> NodeChanges:
    """How a room's config nodes changed."""
    kept = [name for name in new if name in old and new[name] != old[name]]
    return NodeChanges(
        added={name: node for name, node in new.items() if name not in old},
        changed={n: new[n] for n in kept if new[n].synthdef == old[n].synthdef},
        replaced={n: new[n] for n in kept if new[n].synthdef != old[n].synthdef},
        removed=tuple(name for name in old if name not in new),
    )
