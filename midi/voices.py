"""Allocate synth voices for held keys: node ids, limits with stealing, sustain.

A voice remembers where it was started (address and node id), so its release
always reaches the room and node that got the note-on, whatever happened to
the routes in between. Node ids come from ``2**29`` upward and wrap within
``2**26`` ids: above every sclang login's range (below ``2**28`` with 4 logins)
and below the orchestra's persistent nodes (from ``2**30``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

FIRST_NODE_ID = 2**29
NODE_ID_SPAN = 2**26
#: Routers that may play one room (one per host) each take a 16th of the span.
ROUTER_SLOTS = 16


def voice_ids(slot: int | None) -> tuple[int, int]:
    """The first voice id and the span of router ``slot`` (None: the whole span)."""
    if slot is None:
        return FIRST_NODE_ID, NODE_ID_SPAN
    span = NODE_ID_SPAN // ROUTER_SLOTS
    return FIRST_NODE_ID + (slot % ROUTER_SLOTS) * span, span

#: (port name, channel 0..15): the scope of the sustain pedal and the bend wheel.
ChannelKey = tuple[str, int]


@dataclass(slots=True, eq=False)
class Voice:
    """One synth started by a key."""

    node_id: int
    address: tuple[str, int]
    """scsynth's UDP address at the note-on."""
    room: str
    route_id: str
    channel: ChannelKey
    note: int
    """The MIDI key that started it."""
    pitch: float
    """The key plus the route's transpose, in semitones (before bend)."""
    bend_range: float
    sustainable: bool
    """The route lets the sustain pedal hold this voice."""
    held: bool = True
    """The key is still down."""
    zone: ChannelKey | None = None
    """MPE: the zone's master channel, whose pedal and bend reach this voice too."""
    zone_bend_range: float = 0.0
    """MPE: semitones of the master channel's bend (``bend_range`` is the note's own)."""
    deadline: float | None = None
    """``max_hold``: when the voice is released even if its key is still down."""


@dataclass
class Voices:
    """Every sounding voice, indexed by key and by route, oldest first."""

    first: int = FIRST_NODE_ID
    """The first node id of this router's voices."""
    span: int = NODE_ID_SPAN
    """How many ids it wraps within (routers of several hosts playing one room do not meet)."""
    _next: int = 0
    _by_key: dict[tuple[str, int, int], list[Voice]] = field(default_factory=dict)
    _by_group: dict[tuple[str, str], list[Voice]] = field(default_factory=dict)
    _pedal: set[ChannelKey] = field(default_factory=set)

    def new_id(self) -> int:
        """Return the next voice node id, wrapping within the voices' span."""
        node_id = self.first + self._next
        self._next = (self._next + 1) % self.span
        return node_id

    def note_on(self, voice: Voice, limit: int) -> list[Voice]:
        """Add ``voice``; return the voices to release: a retriggered key's, the stolen."""
        key = (*voice.channel, voice.note)
        released = [
            v for v in self._by_key.get(key, ()) if v.route_id == voice.route_id
            and v.room == voice.room
        ]
        for old in released:
            self._remove(old)
        group = self._by_group.setdefault((voice.route_id, voice.room), [])
        while len(group) >= limit:
            oldest = group[0]
            self._remove(oldest)
            released.append(oldest)
        group.append(voice)
        self._by_key.setdefault(key, []).append(voice)
        return released

    def note_off(self, channel: ChannelKey, note: int) -> list[Voice]:
        """Let go of a key; return its voices to release now (the pedal keeps the rest)."""
        released = []
        for voice in list(self._by_key.get((*channel, note), ())):
            if not voice.held:
                continue
            voice.held = False
            if not self._sustained(voice):
                self._remove(voice)
                released.append(voice)
        return released

    def pedal(self, channel: ChannelKey, down: bool) -> list[Voice]:
        """Press or lift the sustain pedal; return the voices to release on lifting."""
        if down:
            self._pedal.add(channel)
            return []
        self._pedal.discard(channel)
        released = [v for v in self.sounding(channel) + self.in_zone(channel)
                    if not v.held and not self._sustained(v)]
        for voice in released:
            self._remove(voice)
        return released

    def sounding(self, channel: ChannelKey) -> list[Voice]:
        """Return the voices started from ``channel``, held or sustained."""
        return [v for v in self if v.channel == channel]

    def in_zone(self, master: ChannelKey) -> list[Voice]:
        """Return the MPE voices of the zone whose master channel is ``master``."""
        return [v for v in self if v.zone == master]

    def release(self, voice: Voice) -> bool:
        """Forget ``voice`` (``max_hold``); False if it was already released."""
        group = self._by_group.get((voice.route_id, voice.room), ())
        if voice not in group:
            return False
        self._remove(voice)
        return True

    def drop_port(self, port: str) -> list[Voice]:
        """Forget every voice and pedal of an input that went away; return the voices."""
        voices = [v for v in self if v.channel[0] == port]
        for voice in voices:
            self._remove(voice)
        self._pedal = {channel for channel in self._pedal if channel[0] != port}
        return voices

    def clear(self) -> list[Voice]:
        """Forget every voice and pedal; return the voices to release (panic)."""
        voices = list(self)
        self._by_key.clear()
        self._by_group.clear()
        self._pedal.clear()
        return voices

    def __iter__(self) -> Iterator[Voice]:
        for group in list(self._by_group.values()):
            yield from group

    def __len__(self) -> int:
        return sum(len(group) for group in self._by_group.values())

    def _sustained(self, voice: Voice) -> bool:
        return voice.sustainable and (
            voice.channel in self._pedal or (voice.zone is not None and voice.zone in self._pedal))

    def _remove(self, voice: Voice) -> None:
        key = (*voice.channel, voice.note)
        same_key = self._by_key.get(key, [])
        if voice in same_key:
            same_key.remove(voice)
            if not same_key:
                del self._by_key[key]
        group = self._by_group.get((voice.route_id, voice.room), [])
        if voice in group:
            group.remove(voice)
            if not group:
                del self._by_group[(voice.route_id, voice.room)]
