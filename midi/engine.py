"""Turn raw MIDI bytes from one port into actions on rooms: the router's pure core.

No threads, sockets or clocks here: :meth:`Engine.handle` takes a port name and a
message and returns what to send. The router calls it from the MIDI callback under
one lock (several ports may call at once) and sends the actions itself.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

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
    cue_presses,
)
from midi.assembly import NRPN_CCS, Cc14, Nrpn
from midi.batch import message_error
from midi.controllers import Echoes
from midi.curves import midicps
from midi.relative import step
from midi.routes import EMPTY, ControlTarget, KeyTarget, Table
from midi.takeover import Takeover, button
from midi.voices import ChannelKey, Voice, Voices, voice_ids

log = logging.getLogger(__name__)

SUSTAIN_CC = 64
TIMBRE_CC = 74
#: MPE Configuration Message: RPN 6 on a zone's master channel sets its number of channels.
MCM_RPN = 6
#: Master channel (0-based) of each MPE zone; members count from the next one inwards.
ZONE_MASTER = {"lower": 0, "upper": 15}
#: ``max_hold`` deadlines of released voices are dropped once they outnumber the
#: sounding voices twice over, plus this many (a rebuild then costs little per note).
COMPACT_AFTER = 256

#: Builds a NamedTuple from a tuple of all its fields in C: a third of the cost of calling
#: the class, whose generated ``__new__`` is Python code (this is what ``_make`` does inside).
_new_tuple: Callable[[type, tuple[object, ...]], Any] = tuple.__new__


class TargetSnapshot(NamedTuple):
    """Where the rooms are right now, as the router last asked the targets."""

    endpoints: Mapping[str, Address]
    """Rooms that are READY, with their scsynth address."""
    nodes: Mapping[tuple[str, str], int]
    """(room, node name) -> node id, for running rooms."""


class Engine:
    """The router's state: tables, takeover, assemblers, voices, pedal and bend."""

    def __init__(self, voice_slot: int | None = None, voice_offset: int = 0) -> None:
        """``voice_offset``: where in its id span the first voice starts (a router started
        again gives its voices ids the last one's, still releasing, are unlikely to hold)."""
        self.tables: Mapping[str, Table] = {}
        """Port name -> table; replaced whole, never mutated."""
        self.snapshot = TargetSnapshot({}, {})
        first, span = voice_ids(voice_slot)
        self.voices = Voices(first=first, span=span, _next=voice_offset % span)
        self.values: dict[tuple[str, str, str], float] = {}
        """(room, node, param) -> last value the router set or was told of."""
        self.learn: Callable[[dict[str, object]], None] | None = None
        """Called with the first control or note that moves, then cleared."""
        self.errors = 0
        self.notes = [0, 0]
        """Note-ons and note-offs handled (to check that none is lost)."""
        self.clock: Callable[[], float] = time.monotonic
        """Seconds, for ``max_hold`` deadlines (tests set their own)."""
        self.played: Callable[[Voice, int], None] | None = None
        """Told each voice started (with its key's velocity) and ended (0), as it is decided:
        the notes the router plays in the rooms (the notes capture)."""
        self._takeover: dict[tuple[str, str], Takeover] = {}
        self._cc14: dict[ChannelKey, Cc14] = {}
        self._nrpn: dict[ChannelKey, Nrpn] = {}
        self._bend: dict[ChannelKey, float] = {}
        self._pressure: dict[ChannelKey, float] = {}
        """MPE: each member channel's last pressure, 0..1 (a note starts with it)."""
        self._timbre: dict[ChannelKey, float] = {}
        """MPE: each member channel's last CC 74, 0..1."""
        self._zones: dict[tuple[str, str], int] = {}
        """MPE: (port, zone) -> member channels, when an MCM changed it from 15."""
        self._deadlines: list[tuple[float, int, Voice]] = []
        """``max_hold``: a heap of (deadline, order, voice); released voices are skipped."""
        self._order = itertools.count()
        self.touched: dict[tuple[str, str, str], None] = {}
        """Params a control moved, picked up or not: the feedback thread takes it whole."""
        self.echoes = Echoes()
        """The feedback sent lately: a message that comes back as input is dropped."""
        self.echoed = 0

    def handle(self, port: str, data: list[int]) -> list[Action]:
        """Return the actions one MIDI message from ``port`` causes."""
        # Fast check for the common case, a well-formed 3-byte channel message.
        if not (len(data) == 3 and 0x80 <= data[0] < 0xF0 and data[1] < 0x80 > data[2]):
            error = message_error(data)
            if error is not None:
                self.errors += 1
                if self.errors <= 10 or self.errors % 1000 == 0:  # a flood must not flood logs
                    log.warning("MIDI from %s dropped (%d so far): %s", port, self.errors, error)
                return []
        status = data[0]
        if status >= 0xF0:
            return []
        kind = status & 0xF0
        channel = status & 0x0F
        table = self.tables.get(port, EMPTY)
        if table.feedback and self.echoes and len(data) == 3 and \
                self.echoes.back((port, status, data[1]), data[2], self.clock):
            self.echoed += 1
            return []
        if kind == 0xB0:  # first: controls are most of the traffic
            return self._cc(table, port, channel, data[1], data[2])
        if kind == 0x90 and data[2] > 0:
            self.notes[0] += 1
            if self.learn is not None:
                self._learned(port, channel, "note", data[1], data[2])
            if table.notes or table.pages or table.cues:
                pressed = self._pressed(table, port, ("note", channel, data[1]), data[2])
                if table.keys:
                    pressed += self._note_on(table, (port, channel), data[1], data[2])
                return pressed
            return self._note_on(table, (port, channel), data[1], data[2])
        if kind == 0x80 or kind == 0x90:
            self.notes[1] += 1
            released = self._release(self.voices.note_off((port, channel), data[1]))
            if table.notes:
                self._controls(table.controls.get(("note", channel, data[1])), 0.0, 0,
                               released)
            return released
        if kind == 0xE0:
            value = data[1] | (data[2] << 7)
            if self.learn is not None:
                self._learned(port, channel, "pitchbend", 0, value)
            return self._bend_wheel(table, (port, channel), value)
        if kind == 0xD0:
            if self.learn is not None:
                self._learned(port, channel, "aftertouch", 0, data[1])
            actions = self._controls(table.controls.get(("at", channel, 0)), data[1] / 127.0)
            if table.keys and _mpe(table):
                self._per_note(self._pressure, "pressure", (port, channel), data[1], actions)
            return actions
        if kind == 0xC0:
            return [SceneCue("recall", r.scene, r.instance, r.seconds)
                    for r in table.scenes.get(("pc", channel, data[1]), ())] + cue_presses(
                        table.cues.get(("pc", channel, data[1]), ()))
        return []

    def _pressed(self, table: Table, port: str, key: tuple[str, int, int],
                 velocity: int) -> list[Action]:
        """A note-on from a button or pad: its control routes, its page, its cue button."""
        actions = self._controls(table.controls.get(key), velocity / 127.0, 127)
        page = table.pages.get(key)
        if page is not None:
            actions.append(PageCue(port, page))
        return actions + cue_presses(table.cues.get(key, ())) if table.cues else actions

    def observe(self, room: str, node: str, param: str, value: float) -> None:
        """Note a parameter value set elsewhere, so takeover does not jump from a stale one."""
        self.values[(room, node, param)] = value

    def control_position(self, takeover_key: tuple[str, str]) -> float | None:
        """Where a control waiting to pick its param up last was (None: it does not wait)."""
        takeover = self._takeover.get(takeover_key)
        return None if takeover is None or takeover.mode == "immediate" else takeover.control

    def forget(self, room: str, node: str | None) -> None:
        """Forget the values of a node that is gone (None: every node of ``room``)."""
        for key in [k for k in self.values if k[0] == room and node in (None, k[1])]:
            del self.values[key]

    def panic(self) -> list[Action]:
        """Release every voice and lift every pedal."""
        self._deadlines.clear()
        return self._release(self.voices.clear())

    def drop_port(self, port: str) -> list[Action]:
        """Release every voice an input started and forget its state: the input went away."""
        for states in (self._cc14, self._nrpn, self._bend, self._pressure, self._timbre):
            for key in [k for k in states if k[0] == port]:
                del states[key]
        for zone in [k for k in self._zones if k[0] == port]:
            del self._zones[zone]
        return self._release(self.voices.drop_port(port))

    def expire(self, now: float) -> list[Action]:
        """Release the voices held past their route's ``max_hold``."""
        deadlines = self._deadlines
        released = []
        while deadlines and deadlines[0][0] <= now:
            voice = heapq.heappop(deadlines)[2]
            if self.voices.release(voice):
                released.append(voice)
        return self._release(released)

    def next_deadline(self) -> float | None:
        """When the next held voice reaches its ``max_hold`` (None: no voice has one)."""
        return self._deadlines[0][0] if self._deadlines else None

    # -- controls -----------------------------------------------------------

    def _cc(self, table: Table, port: str, channel: int, cc: int, value: int) -> list[Action]:
        actions: list[Action] = []
        if cc == SUSTAIN_CC:
            actions += self._release(self.voices.pedal((port, channel), value >= 64))
        elif cc == TIMBRE_CC and table.keys and _mpe(table):
            self._per_note(self._timbre, "timbre", (port, channel), value, actions)
        targets = table.controls.get(("cc", channel, cc))
        if targets:
            self._controls(targets, value / 127.0, value, actions)
        if table.scenes:
            for route in table.scenes.get(("cc", channel, cc), ()):
                actions.append(SceneCue("morph", route.scene, route.instance, value / 127.0))
        if table.pages and value >= 64:
            page = table.pages.get(("cc", channel, cc))
            if page is not None:
                actions.append(PageCue(port, page))
        if table.cues and value >= 64:
            actions += cue_presses(table.cues.get(("cc", channel, cc), ()))
        if cc < 64 and table.cc14:
            assembler = self._cc14.get((port, channel))
            if assembler is None:
                assembler = self._cc14[(port, channel)] = Cc14()
            assembled = assembler.feed(cc, value)
            if assembled is not None:
                targets = table.controls.get(("cc14", channel, assembled[0]))
                if targets:
                    self._controls(targets, assembled[1] / 16383.0, 0, actions)
        if cc in NRPN_CCS and (table.nrpn or self.learn is not None or _mpe(table)):
            nrpn = self._nrpn.get((port, channel))
            if nrpn is None:
                nrpn = self._nrpn[(port, channel)] = Nrpn()
            entry = nrpn.feed(cc, value)
            if entry is not None and entry.rpn and entry.number == MCM_RPN and not entry.fine:
                self._configure_zone(port, channel, entry.value >> 7)
            if entry is not None and not entry.rpn:
                if self.learn is not None:
                    self._learned(port, channel, "nrpn", entry.number, entry.value)
                for target in table.controls.get(("nrpn", channel, entry.number), ()):
                    if target.route.hires:
                        self._controls((target,), entry.value / 16383.0, 0, actions)
                    elif not entry.fine:
                        self._controls((target,), (entry.value >> 7) / 127.0, 0, actions)
            return actions
        if self.learn is not None and cc != SUSTAIN_CC:
            self._learned(port, channel, "cc", cc, value)
        return actions

    def _controls(
        self,
        targets: tuple[ControlTarget, ...] | None,
        position: float,
        raw: int = 0,
        actions: list[Action] | None = None,
    ) -> list[Action]:
        """Append to ``actions`` (a new list if None) what moving ``targets`` does; return it."""
        if actions is None:
            actions = []
        if not targets:
            return actions
        endpoints, nodes = self.snapshot
        values, takeovers, touched = self.values, self._takeover, self.touched
        for target in targets:
            route = target.route
            curve = target.curve
            for room, key, takeover_key, node_key in target.slots:
                touched[key] = None
                if route.button is not None:
                    current = values.get(key)
                    pressed = button(route.button, raw >= 64, position,
                                     None if current is None else curve.unmap(current))
                    if pressed is None:
                        continue
                    moved = pressed
                elif route.relative is not None:
                    current = values.get(key)
                    moved = step(
                        0.0 if current is None else curve.unmap(current),
                        route.relative,
                        raw,
                        route.step,
                    )
                else:
                    takeover = takeovers.get(takeover_key)
                    if takeover is None or takeover.mode != route.takeover:
                        # New, or the route was replaced under the same id with another mode.
                        takeover = takeovers[takeover_key] = Takeover(route.takeover)
                    if takeover.mode == "immediate":
                        # move() would ignore where the parameter is: skip placing it.
                        moved = position
                    else:
                        current = values.get(key)
                        here = None if current is None else curve.unmap(current)
                        taken = takeover.move(position, here)
                        if taken is None:
                            continue
                        moved = taken
                value = curve.map(moved)
                values[key] = value
                actions.append(
                    _new_tuple(  # SetParam(...) without its Python-level __new__
                        SetParam,
                        (
                            room,
                            route.node,
                            route.param,
                            value,
                            endpoints.get(room),
                            nodes.get(node_key),
                        ),
                    )
                )
        return actions

    # -- keys ---------------------------------------------------------------

    def _note_on(self, table: Table, channel: ChannelKey, note: int, velocity: int) -> list[Action]:
        actions: list[Action] = []
        for target in table.keys:
            route = target.route
            if not (route.notes[0] <= note <= route.notes[1]):
                continue
            zone: ChannelKey | None = None
            if route.mpe is not None:
                zone = self._zone_master(channel, route.mpe)
                if zone is None:
                    continue
                if zone == channel:
                    zone = None  # a note on the master channel is an ordinary voice
            elif channel[1] not in target.channels:
                continue
            amp = target.velocity.map(velocity / 127.0)
            pitch = note + route.transpose
            for room in target.rooms:
                address = self.snapshot.endpoints.get(room)
                if address is None:
                    log.info("note %d for %s dropped: room not running", note, room)
                    continue
                voice = self._voice(target, room, address, channel, note, pitch, zone)
                actions += self._release(self.voices.note_on(voice, route.voices))
                args: list[str | float] = ["freq", self._freq(voice), "amp", amp, "gate", 1.0]
                if zone is not None:
                    args += ["pressure", self._pressure.get(channel, 0.0),
                             "timbre", self._timbre.get(channel, 0.5)]
                for name, value in route.params.items():
                    args += [name, value]
                actions.append(StartVoice(address, voice.node_id, route.synthdef, tuple(args)))
                if self.played is not None:
                    self.played(voice, velocity)
        return actions

    def _voice(self, target: KeyTarget, room: str, address: Address, channel: ChannelKey,
               note: int, pitch: float, zone: ChannelKey | None) -> Voice:
        route = target.route
        voice = Voice(
            self.voices.new_id(), address, room, target.route_id, channel, note, pitch,
            route.bend_range if zone is None else route.mpe_bend_range, route.sustain,
            zone=zone, zone_bend_range=route.bend_range if zone is not None else 0.0,
        )
        if route.max_hold is not None:
            voice.deadline = self.clock() + route.max_hold
            deadlines = self._deadlines
            if len(deadlines) > COMPACT_AFTER and \
                    len(deadlines) > 2 * len(self.voices) + COMPACT_AFTER:
                # Voices released by their key stay in the heap until their deadline:
                # with a long max_hold, every note played would be kept for that long.
                live = {id(v) for v in self.voices}
                deadlines[:] = [d for d in deadlines if id(d[2]) in live]
                heapq.heapify(deadlines)
            heapq.heappush(deadlines, (voice.deadline, next(self._order), voice))
        return voice

    def _freq(self, voice: Voice) -> float:
        """The voice's frequency with its channel's bend (and its MPE zone's)."""
        pitch = voice.pitch + self._bend.get(voice.channel, 0.0) * voice.bend_range
        if voice.zone is not None:
            pitch += self._bend.get(voice.zone, 0.0) * voice.zone_bend_range
        return midicps(pitch)

    def _zone_master(self, channel: ChannelKey, zone: str) -> ChannelKey | None:
        """The master channel of ``zone`` if ``channel`` belongs to it (as master or member)."""
        port, number = channel
        master = ZONE_MASTER[zone]
        members = self._zones.get((port, zone), 15)
        if members == 0:
            return None
        distance = number - master if zone == "lower" else master - number
        return (port, master) if 0 <= distance <= members else None

    def _configure_zone(self, port: str, channel: int, members: int) -> None:
        """An MPE Configuration Message on a master channel: that zone's size (0: off)."""
        for zone, master in ZONE_MASTER.items():
            if channel == master:
                self._zones[(port, zone)] = min(members, 15)
                log.info("MPE %s zone on %s: %d member channels", zone, port, min(members, 15))

    def _per_note(self, states: dict[ChannelKey, float], param: str, channel: ChannelKey,
                  value: int, actions: list[Action]) -> None:
        """MPE pressure or timbre on a member channel: to the voices of that channel only."""
        level = value / 127.0
        states[channel] = level
        for voice in self.voices.sounding(channel):
            if voice.zone is not None:
                actions.append(VoiceParam(voice.address, voice.node_id, param, level))

    def _bend_wheel(self, table: Table, channel: ChannelKey, value: int) -> list[Action]:
        # The centre 8192 is exactly 0 and 0.5; each half scales to its own end.
        bend = (value - 8192) / (8192.0 if value <= 8192 else 8191.0)
        self._bend[channel] = bend
        voices = self.voices.sounding(channel)
        if table.keys and _mpe(table):
            voices += self.voices.in_zone(channel)  # a master channel bends its whole zone
        actions: list[Action] = [BendVoice(v.address, v.node_id, self._freq(v)) for v in voices]
        actions += self._controls(table.controls.get(("pb", channel[1], 0)), (bend + 1.0) / 2.0)
        return actions

    def _release(self, voices: list[Voice]) -> list[Action]:
        played = self.played
        if played is not None:
            for voice in voices:
                played(voice, 0)
        return [ReleaseVoice(v.address, v.node_id) for v in voices]

    def _learned(self, port: str, channel: int, kind: str, number: int, value: int) -> None:
        hook, self.learn = self.learn, None
        if hook is not None:
            hook(
                {"port": port, "channel": channel + 1, "kind": kind, "number": number,
                 "value": value}
            )


def _mpe(table: Table) -> bool:
    """True when some key route of ``table`` is an MPE zone."""
    return any(target.route.mpe is not None for target in table.keys)
