"""The Conductor actor: owns the installation's tempo and keeps the rooms, Link and clocks on it.

- The timelines (the installation's, and each group's own) live in a
  :class:`~scorch.state.tempo.TempoView` that any thread reads: the MIDI clock
  threads, the tempo operation. Only this actor replaces them.
- Rooms: every room's sclang follows its scope's grid (``ScorchTempo.sc``). A room
  whose sclang is new (a boot, a restart: a new session token) is told the
  grid on the next tick; without Link, every change is sent to every room of
  the scope.
- Link (``[tempo] link``): each room's sclang is an Ableton Link peer through a
  LinkClock, so rooms and other Link applications share tempo and phase by
  themselves. This actor reads the session from one room every tick (tempo,
  beat, peers) and moves the installation's timeline to it; a tempo set here
  goes to Link through that room. No Link code runs in scorch's own process.
- MIDI clock in: the router tells :meth:`Conductor.follow_clock` what the
  external clock says; the installation's tempo follows it.

Code to rooms is sent without waiting (``submit``), so a busy sclang never holds
this actor up; only the Link read waits, for one room, at most :data:`LINK_ASK`.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.ticker import Ticker
from midi import ClockReading
from scorch.config import Config
from scorch.errors import InvalidRequest, ScorchError
from scorch.primitives.sclang import ExecuteResult, SclangDoor, protocol
from scorch.state import (
    INSTALLATION,
    SOUNDING,
    Door,
    RoomView,
    TempoView,
    Timeline,
    check_bpm,
    follow_external,
)

log = logging.getLogger(__name__)

#: Seconds between two looks at the rooms (new sclang sessions) and at Link, while Link
#: is on or a room's sclang is coming up; otherwise the rooms' READY and RESTORED tick it
#: (the supervisor's ``room_changed``) and it looks by itself every IDLE_TICK only.
TICK = 0.25
IDLE_TICK = 5.0
#: sclang states of a room whose session may soon take the grid.
_COMING = ("starting", "restarting", "ready")
#: Seconds the Link read waits for a room's answer.
LINK_ASK = 0.5
#: Differences below these are measurement noise, not a change to follow or send:
#: tempo in bpm, phase in seconds.
BPM_NOISE = 0.005
PHASE_NOISE = 0.003


class Conductor(pykka.ThreadingActor):
    """The tempo of the installation and of groups with their own; Link; MIDI clock in."""

    def __init__(self, config: Config, views: dict[str, RoomView], doors: dict[str, Door],
                 tempo: TempoView, clock_in: str | None = None) -> None:
        super().__init__()
        self._config = config
        self._views = views
        self._doors = doors
        self.tempo = tempo
        self._link = config.tempo.link
        self._clock_in = clock_in
        """The MIDI input whose clock drives the installation's tempo, if any."""
        self._told: dict[str, str] = {}
        """Room -> the sclang (and class library) that was told the grid (its door's identity)."""
        self._peers: int | None = None
        """Link peers the last read saw (the room's own count)."""
        self._linked_rooms = 0
        self._external: ClockReading | None = None
        self._ticker: Ticker | None = None

    def on_start(self) -> None:
        """Start looking at the rooms (and Link) every :data:`TICK` seconds (actor thread)."""
        self._ticker = Ticker(TICK if self._link else IDLE_TICK, self.actor_ref.proxy().tick,
                              "conductor-tick").start()

    def on_stop(self) -> None:
        """Stop the ticker (actor thread)."""
        if self._ticker is not None:
            self._ticker.stop()

    # -- reading and setting (asked by the facade) -----------------------------------------

    def state(self, scope: str = INSTALLATION) -> dict[str, Any]:
        """The tempo, the beat and bar phase now, the transport, Link and clock-in."""
        line = self._timeline(scope)
        now = time.monotonic()
        beat = line.beat_at(now)
        out: dict[str, Any] = {
            "scope": scope or "installation",
            "bpm": round(line.bpm, 6),
            "beat": round(beat, 6),
            "bar": int(beat // line.beats_per_bar) + 1,
            "bar_phase": round(line.bar_phase(now), 6),
            "beats_per_bar": line.beats_per_bar,
            "playing": line.playing,
            "song_position": round(line.song_position(now), 6),
            "rooms": self._rooms(scope),
            "source": self._source(scope),
        }
        if scope == INSTALLATION and self._link:
            out["link"] = {"peers": self._external_peers(), "rooms_on_link": self._linked_rooms}
        if scope == INSTALLATION and self._clock_in is not None:
            reading = self._external
            out["clock_in"] = {"port": self._clock_in,
                               "bpm": None if reading is None else reading.bpm,
                               "playing": False if reading is None else reading.playing}
        return out

    def set(self, scope: str = INSTALLATION, bpm: float | None = None, beat: float | None = None,
            transport: str | None = None) -> dict[str, Any]:
        """Change the tempo, move the beat, or start, stop or continue the transport."""
        line = self._timeline(scope)
        if (bpm is not None or beat is not None) and scope == INSTALLATION and \
                self._clock_in is not None:
            raise InvalidRequest(f"the tempo follows the MIDI clock coming in on "
                                 f"{self._clock_in!r} ([midi] clock_in): set it there")
        now = time.monotonic()
        if bpm is not None:
            try:
                line = line.with_tempo(check_bpm(bpm), now)
            except ValueError as err:
                raise InvalidRequest(str(err)) from None
        if beat is not None:
            line = line.with_beat(beat, now)
        if transport == "stop":
            line = line.stopped(now)
        elif transport in ("start", "continue"):
            line = line.stopped(now).started(now, 0.0 if transport == "start" else None)
        self.tempo.put(scope, line)
        if scope == INSTALLATION and self._link:
            self._to_link(bpm, beat)
            # The room applies the change when its message arrives, not at ``now``: the
            # grid takes the beat from Link's own answer, not from scorch's guess of it.
            self._read_link()
        elif bpm is not None or beat is not None:
            self._tell_rooms(scope)
        return self.state(scope)

    def follow_clock(self, reading: ClockReading) -> None:
        """What the MIDI clock coming in says (the router's tell, on each beat and change)."""
        self._external = reading
        if reading.bpm is None:
            return
        old = self.tempo.get(INSTALLATION)
        bpm = check_bpm(min(max(reading.bpm, 20.0), 999.0))
        line = follow_external(old, bpm, reading.at, reading.playing, reading.position)
        self.tempo.put(INSTALLATION, line)
        if abs(line.bpm - old.bpm) > BPM_NOISE or line.start != old.start:
            if self._link:
                self._to_link(line.bpm, None)
            else:
                self._tell_rooms(INSTALLATION)

    def reconfigure(self, config: Config) -> None:
        """A reloaded config: rooms came, went or changed group ([tempo] itself cannot change
        under a running installation). Rooms whose tempo scope changed are told again."""
        old, self._config = self._config, config
        midi = config.midi
        self._clock_in = midi.clock_in if midi.enabled else None  # [midi] reloads live
        if self._clock_in is None:
            self._external = None
        for name in list(self._told):
            if name not in config.instances or old.tempo_scope(name) != config.tempo_scope(name):
                del self._told[name]
        self.tick()

    # -- every tick (the ticker tells) -----------------------------------------------------

    def tick(self) -> None:
        """Tell new sclang sessions the grid; read Link."""
        try:
            for name in self._views:
                session = self._session(name)
                if session is not None and self._told.get(name) != _told(session):
                    self._tell_room(name, session)
            if self._link:
                self._read_link()
        except Exception:
            log.exception("tempo tick failed")  # told, not asked: the next tick tries again
        self._pace()

    def _pace(self) -> None:
        """Tick often only while there is something to look for: Link, or a room to tell."""
        interval = TICK if self._link or self._waiting() else IDLE_TICK
        ticker = self._ticker
        if ticker is not None and ticker.interval != interval:
            ticker.interval = interval
            if interval < IDLE_TICK:
                ticker.hurry()  # not after the rest of a long wait

    def _waiting(self) -> bool:
        """True while a sounding room's sclang is coming up and has not taken the grid."""
        for name, view in self._views.items():
            snap = view.snapshot
            if snap.state not in SOUNDING or snap.sclang_state not in _COMING:
                continue
            session = self._session(name)
            if session is None or self._told.get(name) != _told(session):
                return True
        return False

    # -- rooms -----------------------------------------------------------------------------

    def _timeline(self, scope: str) -> Timeline:
        try:
            return self.tempo.get(scope)
        except KeyError:
            own = ", ".join(s for s in self.tempo.scopes() if s) or "none"
            raise InvalidRequest(
                f"{scope!r} has no tempo of its own (groups with one: {own}); its rooms follow "
                "the installation's. Add [tempo.groups." + scope + "] to give it one") from None

    def _rooms(self, scope: str) -> list[str]:
        return [n for n in self._views if self._config.tempo_scope(n) == scope]

    def _source(self, scope: str) -> str:
        if scope != INSTALLATION:
            return "group"
        if self._clock_in is not None:
            return "midi clock in"
        return "link" if self._link else "scorch"

    def _session(self, name: str) -> SclangDoor | None:
        snap = self._views[name].snapshot
        door = self._doors.get(name)
        if door is None or snap.state not in SOUNDING or snap.sclang_state != "ready":
            return None
        # recompiling: its clock starts again at beat 0 once the library is back
        return door.sclang if door.sclang.installed else None

    def _tell_rooms(self, scope: str) -> None:
        for name in self._rooms(scope):
            session = self._session(name)
            if session is not None:
                self._tell_room(name, session)

    def _tell_room(self, name: str, session: SclangDoor) -> None:
        """Send the room its scope's grid as of now (or, with Link, join it)."""
        scope = self._config.tempo_scope(name)
        line = self.tempo.get(scope)
        link = "true" if self._link and scope == INSTALLATION else "false"
        # the beat of the Unix time it was read at: sclang adds the time the code took to come
        code = (f"ScorchTempo.follow({line.bpm!r}, {line.beat_at(time.monotonic())!r}, "
                f"{line.beats_per_bar}, {link}, {time.time()!r})")
        if self._send(name, session, code):
            self._told[name] = _told(session)

    def _send(self, name: str, session: SclangDoor, code: str) -> bool:
        try:
            _, future = session.submit(code, timeout=5.0, raw=True)
        except ScorchError as err:
            log.warning("tempo to %s: %s", name, err)
            return False
        future.add_done_callback(lambda f: _logged(name, code, f))
        return True

    # -- Link ------------------------------------------------------------------------------

    def _link_room(self) -> tuple[str, SclangDoor] | None:
        for name in self._rooms(INSTALLATION):
            session = self._session(name)
            if session is not None and self._told.get(name) == _told(session):
                return name, session
        return None

    def _to_link(self, bpm: float | None, beat: float | None) -> None:
        room = self._link_room()
        if room is None:
            return  # no room plays yet: the tempo reaches Link when the first one joins
        name, session = room
        if bpm is not None:
            self._send(name, session, f"ScorchTempo.setTempo({bpm!r})")
        if beat is not None:
            self._send(name, session, f"ScorchTempo.setBeat({beat!r})")

    def _read_link(self) -> None:
        """Read the session's tempo, beat and peers from one room; follow it."""
        room = self._link_room()
        if room is None:
            return
        name, session = room
        before = time.monotonic()
        try:
            record = session.call(
                lambda reply: protocol.scorch_call(f'ScorchTempo.report("{reply}")'),
                ("tempo",), LINK_ASK)
        except ScorchError:
            return
        after = time.monotonic()
        if record is None:
            return
        try:
            bpm_text, beat_text, peers, _bpb, linked = record.payload.decode().split()
            bpm, beat = float(bpm_text), float(beat_text)
        except ValueError:
            log.warning("Link: %s answered %r", name, record.payload[:80])
            return
        if linked != "1":
            return
        self._peers = int(peers)
        self._linked_rooms = sum(1 for n in self._rooms(INSTALLATION)
                                 if self._session(n) is not None and n in self._told)
        at = (before + after) / 2  # the answer's beat is from about half way
        line = self.tempo.get(INSTALLATION)
        drift = abs(line.beat_at(at) - beat) * 60.0 / bpm
        # A slow answer (a loaded machine) places its beat only to within half its round
        # trip: a drift inside that is no news, and following it would add the error.
        if abs(line.bpm - bpm) > BPM_NOISE or drift > max(PHASE_NOISE, (after - before) / 2):
            moved = replace(line, bpm=min(max(bpm, 20.0), 999.0), beat=beat, at=at)
            if line.playing:  # the song position runs on through the re-anchoring
                moved = replace(moved, start=line.start + (beat - line.beat_at(at)))
            self.tempo.put(INSTALLATION, moved)

    def _external_peers(self) -> int | None:
        """Link peers that are not scorch's own rooms (None before the first read)."""
        if self._peers is None:
            return None
        return max(0, self._peers - max(0, self._linked_rooms - 1))


def _told(session: SclangDoor) -> str:
    """What a room's grid was told to: its sclang and the class library it compiled."""
    return session.identity


def _logged(name: str, code: str, future: Future[ExecuteResult]) -> None:
    try:
        result = future.result()
    except Exception as err:
        log.warning("tempo to %s (%s): %s", name, code, err)
        return
    if not result.ok:
        log.warning("tempo to %s (%s): %s", name, code,
                    result.error.describe() if result.error else "failed")


#: The typed proxy the supervisor and the facade hold.
class ConductorProxy(ActorMemberMixin, pykka.ActorProxy[Conductor]):
    """The conductor's typed proxy (``Conductor.start(...).proxy()`` is cast to it)."""

    state = proxy_method(Conductor.state)
    set = proxy_method(Conductor.set)
    follow_clock = proxy_method(Conductor.follow_clock)
    reconfigure = proxy_method(Conductor.reconfigure)
    tick = proxy_method(Conductor.tick)
