"""One capture on a live scsynth: DiskOut writes a bus, or one node alone, to a sound file.

Everything happens inside scsynth: ``/b_alloc`` and ``/b_write`` (left open)
give DiskOut a file, a ``scorch_record_N`` synth at the tail of the readers group
writes to it, and ``/b_close`` finishes the header. Python never touches the
audio. The synth frees itself after exactly ``seconds`` of control blocks, so a
capture lasts what was asked to within one block (1.3 ms), whatever the clocks.

A node is heard alone by moving its ``out`` to a private bus: the recorder and a
``scorch_pass_N`` synth that passes the sound on to where it went both start
right after the node, in one bundle with the move; the move back and the end of
the pass go in one bundle too, so the room never misses a block or hears one twice.
Captures of one node at once share its tap: the first moves the node, the others
only add their recorders, and the last to end moves it back (two moves would read
the first's private bus as the node's own and leave the node playing to it).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scorch.errors import (
    CaptureError,
    InvalidRequest,
    NodeNotFound,
    OscFailure,
    OscTimeout,
    RoomNotReady,
)
from scorch.primitives import IMMEDIATELY, OscArg, OscMessage, encode_bundle
from scorch.primitives.scsynth import (
    READER_NODE_BASE,
    READERS_GROUP,
    AddAction,
    Cmd,
    Expected,
    Reply,
    ScsynthDoor,
    commands,
)
from scorch.primitives.synthdefs import pass_name, pass_synthdef, record_name, record_synthdef
from scorch.primitives.system import pid_alive
from scorch.state import SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_COUNT, RoomView, State

log = logging.getLogger(__name__)

#: DiskOut's buffer: it writes half of it at a time (16384 frames, 0.34 s at 48 kHz),
#: so a scsynth killed mid-recording loses at most that much.
DISK_BUFFER_FRAMES = 32768
#: scsynth's audio buses (its ``-a``, not set by scorch: the default).
AUDIO_BUSES = 1024
#: The capture buffers: scorch's quarter of scsynth's 1024 (which sclang, client 0 of 4,
#: leaves alone) above the samples' (``SAMPLE_BUFFER_BASE`` ... + ``SAMPLE_BUFFER_COUNT``).
BUFFERS = tuple(range(1023, SAMPLE_BUFFER_BASE + SAMPLE_BUFFER_COUNT - 1, -1))
#: Private buses a node's output is moved to while it is heard alone (up to 32
#: channels each), in the top quarter of the audio buses, left to client 3 too.
TAP_BUSES = (992, 960, 928, 896)
#: Capture synths' ids: above the ids of MIDI voices (2**29), named nodes (2**30) and
#: unnamed synths (2**30 + 2**29, 2**28 of them), below 2**31.
CAPTURE_NODE_BASE = READER_NODE_BASE
_CAPTURE_NODE_SPAN = 2**27
#: What each format is written as: libsndfile's header and sample format names.
FORMATS = {"wav": ("wav", "float"), "aiff": ("aiff", "float"), "flac": ("flac", "int24")}
#: Bytes per sample on disk, to size recordings before they start (FLAC: at most).
SAMPLE_BYTES = {"wav": 4, "aiff": 4, "flac": 3}
#: The longest capture one recorder synth takes (its counter is a 32-bit count of blocks).
MAX_SECONDS = 24 * 3600.0
_ASK = 5.0


@dataclass
class Tap:
    """A named node moved to a private bus while captures hear it alone."""

    bus: int
    pass_id: int
    """The synth passing the node's sound on to where it went."""
    users: int = 1
    out: float | None = None
    """The bus the node played to before it moved (None: not moved)."""
    moving: threading.Lock = field(default_factory=threading.Lock)
    """Held while a capture moves the node or adds its recorder after it."""


#: A tap's key: the room, its scsynth's generation, the node's id.
TapKey = tuple[str, int, int]


class Slots:
    """Buffers, node ids and taps in use, per room; any thread may take and give."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffers: dict[str, set[int]] = {}
        self._taps: dict[TapKey, Tap] = {}
        self._ids = itertools.count()

    def take(self, room: str, tap: TapKey | None = None) -> tuple[int, int, Tap | None]:
        """A free buffer, a fresh node id, and (to hear a node alone) the node's tap: the
        one other captures of it share, or a new one on a free private bus."""
        with self._lock:
            used = self._buffers.setdefault(room, set())
            buf = next((b for b in BUFFERS if b not in used), None)
            if buf is None:
                raise CaptureError(f"room {room!r} already runs {len(BUFFERS)} captures; "
                                   "stop one first")
            node_id = CAPTURE_NODE_BASE + next(self._ids) % _CAPTURE_NODE_SPAN
            shared = None if tap is None else self._taps.get(tap)
            if shared is not None:
                shared.users += 1
            elif tap is not None:
                taken = {t.bus for key, t in self._taps.items() if key[0] == room}
                bus = next((b for b in TAP_BUSES if b not in taken), None)
                if bus is None:
                    raise CaptureError(f"room {room!r} already hears {len(TAP_BUSES)} "
                                       "nodes alone; wait for one to finish")
                shared = self._taps[tap] = Tap(bus, node_id + _CAPTURE_NODE_SPAN)
            used.add(buf)
            return buf, node_id, shared

    def give(self, room: str, buf: int, tap: TapKey | None = None,
             put_back: Callable[[Tap], None] | None = None) -> None:
        """Give back what :meth:`take` gave; the tap's last user calls ``put_back`` with
        it (before another capture can take the node: it must find the node back)."""
        with self._lock:
            self._buffers.get(room, set()).discard(buf)
            shared = None if tap is None else self._taps.get(tap)
            if tap is None or shared is None:
                return
            shared.users -= 1
            if shared.users == 0:
                del self._taps[tap]
                if put_back is not None and shared.out is not None:
                    put_back(shared)


@dataclass(frozen=True)
class Source:
    """What to capture: ``channels`` channels of ``bus``, or of named node ``node`` alone."""

    channels: int = 2
    bus: int = 0
    node: str | None = None
    node_id: int | None = None

    def check(self) -> None:
        """Refuse buses scsynth does not have."""
        if self.node_id is None and not 0 <= self.bus <= AUDIO_BUSES - self.channels:
            raise InvalidRequest(
                f"bus {self.bus} with {self.channels} channels is beyond scsynth's "
                f"{AUDIO_BUSES} audio buses (0 to {AUDIO_BUSES - 1}); the main outputs "
                "start at bus 0")


class Capture:
    """A recorder synth writing to an open file on one scsynth, until it ends."""

    def __init__(self, room: str, view: RoomView, osc: ScsynthDoor, pid: int | None,
                 slots: Slots, path: Path, source: Source, buf: int, node_id: int,
                 tap: Tap | None, sample_rate: float) -> None:
        self.room = room
        self.view = view
        self.osc = osc
        """The room's scsynth door: what this capture asks of its scsynth."""
        self.generation = osc.generation
        """The scsynth it writes through (a restart opens the door on another)."""
        self.pid = pid
        self.slots = slots
        self.path = path
        self.source = source
        self.buf = buf
        self.node_id = node_id
        self.tap = tap
        """The node's tap (hearing a node alone), shared with other captures of it."""
        self.sample_rate = sample_rate
        """scsynth's nominal sample rate."""
        self.started_at: float | None = None
        """Unix time of its first frame: the middle of the start's round trip to scsynth."""
        self.ended_at: float | None = None
        """Unix time its end was heard (:meth:`wait`)."""
        self._ended: Expected | None = None
        self._finished = False

    @classmethod
    def start(cls, room: str, view: RoomView, osc: ScsynthDoor, slots: Slots, path: Path,
              fmt: str, source: Source, seconds: float) -> Capture:
        """Open ``path`` in scsynth and start recording ``source`` for ``seconds``."""
        source.check()
        if not osc.is_open or view.snapshot.state != State.READY:
            raise RoomNotReady(f"room {room!r} is {view.snapshot.state}: only a READY "
                                   "room can be heard or recorded")
        try:
            rate = (osc.last_status or osc.status(timeout=1.0)).nominal_sample_rate
        except OscTimeout as err:
            raise RoomNotReady(f"room {room!r}: scsynth does not answer") from err
        buf, node_id, shared = slots.take(room, _tap_key(room, osc.generation, source))
        capture = cls(room, view, osc, view.snapshot.scsynth_pid, slots, path, source, buf,
                      node_id, shared, rate)
        try:
            capture._open(fmt)
            capture._start(seconds)
        except BaseException:
            capture.finish()
            raise
        return capture

    def _done(self, packet: bytes, command: str, timeout: float = _ASK) -> OscMessage:
        return self.osc.exchange(packet, command, Reply.DONE, timeout,
                                 match=lambda m: m.args[:2] == (command, self.buf))

    def _open(self, fmt: str) -> None:
        header, sample = FORMATS[fmt]
        channels = self.source.channels
        self.osc.send(commands.d_recv(record_synthdef(channels)))
        if self.tap is not None:
            self.osc.send(commands.d_recv(pass_synthdef(channels)))
        try:
            self._done(commands.b_alloc(self.buf, DISK_BUFFER_FRAMES, channels), Cmd.B_ALLOC)
            self._done(commands.b_write(self.buf, str(self.path), header, sample,
                                        frames=0, leave_open=True), Cmd.B_WRITE)
        except OscFailure as err:
            raise CaptureError(f"room {self.room!r}: scsynth cannot write "
                               f"{self.path}: {err}") from err
        except OscTimeout as err:
            raise RoomNotReady(f"room {self.room!r}: scsynth did not open "
                                   f"{self.path}: {err}") from err

    def _start(self, seconds: float) -> None:
        if self.tap is None:
            self._begin(commands.s_new(record_name(self.source.channels), self.node_id,
                                       AddAction.TAIL, READERS_GROUP,
                                       ["bus", self.source.bus, *self._record(seconds)]))
            return
        tap, target = self.tap, self.source.node_id
        assert target is not None
        record = commands.s_new(record_name(self.source.channels), self.node_id,
                                AddAction.AFTER, target, ["bus", tap.bus, *self._record(seconds)])
        with tap.moving:
            if tap.out is not None:  # another capture of the node moved it already
                self._begin(record)
                return
            # Sent, the move may have happened even if no answer says so: the tap's last
            # capture moves the node back whatever this one hears.
            tap.out = self._read_out(target)
            self._begin(encode_bundle(IMMEDIATELY, [
                commands.s_new(pass_name(self.source.channels), tap.pass_id, AddAction.AFTER,
                               target, ["bus", tap.bus, "out", tap.out]),
                record, commands.n_set(target, {"out": tap.bus})]))

    def _record(self, seconds: float) -> list[OscArg]:
        return ["buf", self.buf, "seconds", float(seconds)]

    def _begin(self, packet: bytes) -> None:
        """Send the packet that starts the recorder; note when it began."""
        self._ended = self.osc.expect(Reply.N_END, lambda m: m.args[:1] == (self.node_id,))
        try:
            sent = time.time()
            self.osc.exchange(packet, Cmd.S_NEW, Reply.N_GO, _ASK,
                              match=lambda m: m.args[:1] == (self.node_id,))
            # It began in the block that ran the command: after the send, before the
            # answer came back; the middle is within half that round trip.
            self.started_at = (sent + time.time()) / 2
        except (OscFailure, OscTimeout) as err:
            raise CaptureError(f"room {self.room!r}: the recorder did not start: "
                               f"{err}") from err

    def _read_out(self, node_id: int) -> float:
        """The bus the node plays to now (its ``out`` control)."""
        try:
            values = self.osc.s_get(node_id, "out", timeout=_ASK)
        except OscFailure as err:
            raise NodeNotFound(f"room {self.room!r}: node {self.source.node!r} "
                               f"(id {node_id}) is not running on scsynth: {err}") from err
        except OscTimeout as err:
            raise RoomNotReady(f"room {self.room!r}: scsynth did not answer") from err
        if "out" not in values:
            raise InvalidRequest(f"node {self.source.node!r} has no `out` control, so it "
                                 "cannot be heard alone; listen to the bus it plays to")
        return values["out"]

    def wait(self, timeout: float) -> bool:
        """True once the recorder synth ended (by itself, by :meth:`stop`, or freed by others)."""
        ended = self._ended is not None and self._ended.wait(timeout) is not None
        if ended and self.ended_at is None:
            self.ended_at = time.time()
        return ended

    def stop(self) -> None:
        """Free the recorder synth now (its end then comes as for any other end)."""
        self.osc.send(commands.n_free(self.node_id))

    def scsynth_gone(self) -> bool:
        """True when the scsynth this capture writes through is no longer running."""
        return (self.osc.generation != self.generation
                or self.view.snapshot.scsynth_pid != self.pid or not pid_alive(self.pid))

    def finish(self) -> None:
        """Close the file, give the buffer back and (the node's last capture) put a tapped
        node back; once only."""
        if self._finished:
            return
        self._finished = True
        if self._ended is not None:
            self._ended.cancel()
        gone = False
        try:
            gone = self.scsynth_gone()
            if gone:
                return  # nothing of it is left in scsynth; the file is repaired by the caller
            with contextlib.suppress(OscFailure, OscTimeout):
                self._done(commands.b_close(self.buf), Cmd.B_CLOSE)
            try:
                self._done(commands.b_free(self.buf), Cmd.B_FREE)
            except (OscFailure, OscTimeout) as err:
                log.warning("room %r: buffer %d not freed: %s", self.room, self.buf, err)
        finally:
            self.slots.give(self.room, self.buf, _tap_key(self.room, self.generation, self.source),
                            None if gone else self._put_back)

    def _put_back(self, tap: Tap) -> None:
        """Move the node back to where it played and end the pass, in one bundle."""
        assert self.source.node_id is not None and tap.out is not None
        self.osc.send(encode_bundle(IMMEDIATELY, [
            commands.n_set(self.source.node_id, {"out": tap.out}),
            commands.n_free(tap.pass_id)]))


def _tap_key(room: str, generation: int, source: Source) -> TapKey | None:
    """The tap a capture of ``source`` shares (None: a bus, no node to move)."""
    return None if source.node_id is None else (room, generation, source.node_id)


def bytes_per_second(fmt: str, channels: int, sample_rate: float) -> float:
    """How fast a capture in ``fmt`` fills the disk (FLAC: at most)."""
    return SAMPLE_BYTES[fmt] * channels * sample_rate
