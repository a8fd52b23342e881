"""Recordings of live rooms: start, stop, list, and keep every file readable whatever happens.

Each recording is a :class:`~scorch.app.studio.capture.Capture` (DiskOut inside
scsynth) watched by a thread of its own, which ends it cleanly when its time is
up, when it is stopped, or when the disk is nearly full, and repairs the file
when scsynth died under it. Each file has a small JSON note beside it
(``.NAME.wav.json``) that says which room, when, and how it ended; a note still
saying "recording" when no recording runs means scorch itself died mid-way, and
the file is repaired the next time the recordings are listed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from scorch.app.studio.capture import (
    DISK_BUFFER_FRAMES,
    FORMATS,
    MAX_SECONDS,
    SAMPLE_BYTES,
    Capture,
    Slots,
    Source,
    bytes_per_second,
)
from scorch.app.tree import RESTORE_WAIT, Ready
from scorch.errors import AudioFileError, CaptureError, InvalidRequest, RecordingNotFound
from scorch.primitives.disk import write_json_atomically
from scorch.primitives.scsynth import ScsynthDoor
from scorch.state import Door, RoomView, State

log = logging.getLogger(__name__)

RECORDING, DONE, STOPPED, CUT_SHORT, UNREADABLE = (
    "recording", "done", "stopped", "cut short", "unreadable")
#: How often a watcher looks at scsynth and the disk while waiting for the end.
TICK = 0.1
#: WAV and AIFF count their bytes in 32 bits.
_HEADER_LIMIT = 2**32 - 2**20
#: Frames a recorder may end short of its time and still be on time: two control blocks.
_BLOCKS = 128
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")


@dataclass(frozen=True)
class Recording:
    """One recording as the note beside its file keeps it."""

    name: str
    path: str
    room: str | None
    format: str
    channels: int
    bus: int | None
    node: str | None
    state: str
    started_at: float | None
    ended_at: float | None = None
    seconds_asked: float | None = None
    note: str | None = None


@dataclass
class _Active:
    recording: Recording
    capture: Capture
    thread: threading.Thread | None = None
    stop_reason: str | None = None
    """Why scorch ends it early: asked to (it is DONE), or forced (it is STOPPED)."""
    forced: bool = False
    finished: threading.Event = field(default_factory=threading.Event)


def disk_reserve(channels: int) -> int:
    """Bytes a recording leaves free: DiskOut's last writes and the header fit in it."""
    return 2 * DISK_BUFFER_FRAMES * channels * 4 + 2**18


class Recorder:
    """Every recording of one installation, under ``folder``; thread-safe."""

    def __init__(self, folder: Path, views: dict[str, RoomView], doors: dict[str, Door],
                 slots: Slots, ready: Ready | None = None) -> None:
        self.folder = folder.resolve()
        self.views = views
        self.doors = doors
        self.slots = slots
        self._ready = ready
        """Waits for a booting or restoring room before a recording starts (None: never)."""
        self._lock = threading.Lock()
        self._active: dict[str, _Active] = {}

    # --- start and stop ------------------------------------------------------

    def start(self, room: str, source: Source, fmt: str, seconds: float | None,
              name: str | None) -> Recording:
        """Start recording ``source`` of ``room`` to ``folder/NAME.FMT``."""
        if self._ready is not None:
            self._ready([room], time.monotonic() + RESTORE_WAIT, "record")
        view, door = self.views[room], self.doors[room].scsynth
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise CaptureError(f"cannot create the recordings folder {self.folder}: "
                               f"{err.strerror}") from err
        rate = _sample_rate(door)
        limit = _longest(fmt, source.channels, rate)
        if seconds is not None and seconds > limit:
            raise InvalidRequest(f"a {fmt} file of {source.channels} channels holds at most "
                                 f"{limit:.0f} s; record shorter, or use flac")
        with self._lock:
            path = self._new_path(room, fmt, name)
            self._probe_writable(path)
            self._check_space(fmt, source.channels, rate, seconds)
            capture = Capture.start(room, view, door, self.slots, path, fmt, source,
                                    seconds if seconds is not None else limit)
            recording = Recording(
                name=path.stem, path=str(path), room=room, format=fmt,
                channels=source.channels, bus=None if source.node else source.bus,
                node=source.node, state=RECORDING, started_at=time.time(),
                seconds_asked=seconds)
            active = _Active(recording, capture)
            self._active[path.name] = active
            self._write_note(recording)
            active.thread = threading.Thread(target=self._watch, args=(active,), daemon=True,
                                             name=f"record-{path.name}")
            active.thread.start()
        log.info("[%s] recording to %s", room, path)
        return recording

    def stop(self, room: str | None = None, name: str | None = None,
             reason: str = "stopped by request", timeout: float = 10.0) -> list[Recording]:
        """Stop the running recordings of ``room``, or the one called ``name``; wait for them."""
        with self._lock:
            chosen = [a for a in self._active.values()
                      if (name is None or a.recording.name == name or
                          Path(a.recording.path).name == name)
                      and (room is None or a.recording.room == room)]
            running = sorted(a.recording.name for a in self._active.values())
        if not chosen:
            what = f"called {name!r}" if name else f"on {room!r}" if room else ""
            raise RecordingNotFound(f"no recording {what} is running; running: "
                                    f"{', '.join(running) or '(none)'}", name=name,
                                    known=running)
        for active in chosen:
            if active.stop_reason is None:
                active.stop_reason = reason
            active.capture.stop()
        for active in chosen:
            if not active.finished.wait(timeout):
                log.error("recording %s did not finish within %g s", active.recording.path,
                          timeout)
        return [self._note_of(Path(a.recording.path)) or a.recording for a in chosen]

    def stop_all(self) -> None:
        """Stop every recording cleanly (before the rooms stop)."""
        with self._lock:
            rooms = {a.recording.room for a in self._active.values()}
        for room in rooms:
            with contextlib.suppress(RecordingNotFound):
                self.stop(room, reason="scorch stopped")

    def running(self, room: str) -> int:
        """How many recordings run on ``room``."""
        with self._lock:
            return sum(a.recording.room == room for a in self._active.values())

    # --- the watcher ---------------------------------------------------------

    def _watch(self, active: _Active) -> None:
        """Wait for the recorder's end, the scsynth's death or a full disk (its own thread)."""
        capture = active.capture
        crashed = False
        try:
            while not capture.wait(TICK):
                if capture.scsynth_gone():
                    crashed = True
                    break
                if active.stop_reason is None:
                    low = self._disk_low(capture.source.channels)
                    if low is not None:
                        active.stop_reason, active.forced = low, True
                        log.warning("[%s] %s: %s", capture.room, capture.path.name, low)
                        capture.stop()
            capture.finish()
            self._finish(active, crashed)
        except Exception:
            log.exception("recording %s: watcher failed", capture.path)
            self._finish(active, crashed=True)

    def _finish(self, active: _Active, crashed: bool) -> None:
        recording, capture = active.recording, active.capture
        path = Path(recording.path)
        state, note = DONE, active.stop_reason
        if crashed:
            state = CUT_SHORT
            how = ("the room was stopped" if capture.view.snapshot.state in
                   (State.STOPPING, State.STOPPED) else "scsynth died")
            note = f"{how} while recording; {self._repair(path)}"
        elif active.forced:
            state = STOPPED
        elif active.stop_reason is None:
            # The recorder ended by itself at its time, or someone freed it before.
            frames = self._frames(path) or 0
            seconds = recording.seconds_asked or _longest(
                recording.format, recording.channels, capture.sample_rate)
            if frames < seconds * capture.sample_rate - _BLOCKS:
                state, note = STOPPED, ("its recorder synth was freed on scsynth (stop, "
                                        "s.freeAll or CmdPeriod) before its time")
            elif recording.seconds_asked is None:
                state, note = STOPPED, "reached the longest recording this format holds"
        final = replace(recording, state=state, note=note, ended_at=time.time())
        try:
            self._write_note(final)
        except OSError as err:
            log.error("recording %s: note not written: %s", path, err)
        with self._lock:
            self._active.pop(path.name, None)
        active.finished.set()
        log.info("[%s] recording %s: %s%s", recording.room, path.name, state,
                 f" ({note})" if note else "")

    # --- listing -------------------------------------------------------------

    def list(self) -> list[tuple[Recording, dict[str, Any] | None]]:
        """Every recording in the folder with its file's facts (None when unreadable)."""
        from scorch.audio import probe

        if not self.folder.is_dir():
            return []
        out: list[tuple[Recording, dict[str, Any] | None]] = []
        for path in sorted(self.folder.iterdir()):
            if path.suffix.lstrip(".") not in FORMATS or path.name.startswith("."):
                continue
            with self._lock:
                active = self._active.get(path.name)
            recording = active.recording if active else self._note_of(path)
            if recording is None:
                recording = Recording(name=path.stem, path=str(path.resolve()), room=None,
                                      format=path.suffix[1:], channels=0, bus=None, node=None,
                                      state=DONE, started_at=None)
            elif active is None and recording.state == RECORDING:
                recording = replace(recording, state=CUT_SHORT, note=(
                    f"scorch stopped while recording; {self._repair(path)}"))
                self._write_note(recording)
            try:
                found = probe(path)
            except (AudioFileError, OSError) as err:
                if active is not None:  # DiskOut has not written its first block (FLAC) yet
                    size = path.stat().st_size if path.exists() else 0
                    out.append((recording, {"frames": 0, "seconds": 0.0, "size": size}))
                else:
                    out.append((replace(recording, state=UNREADABLE, note=str(err)), None))
                continue
            out.append((recording, {"frames": found.frames, "seconds": found.seconds,
                                    "size": found.size, "sample_rate": found.sample_rate,
                                    "channels": found.channels}))
        out.sort(key=lambda item: item[0].started_at or 0.0)
        return out

    # --- files ---------------------------------------------------------------

    def _new_path(self, room: str, fmt: str, name: str | None) -> Path:
        if name is not None:
            if not _NAME.fullmatch(name):  # whole: $ alone takes a trailing newline
                raise InvalidRequest(f"recording name {name[:60]!r}: use letters, digits, "
                                     "'_', '-' and '.', at most 100, not starting with '.'")
            path = self.folder / f"{name}.{fmt}"
            if path.exists() or path.name in self._active:
                raise InvalidRequest(f"a recording {path.name!r} exists already ({path}); "
                                     "choose another name, or leave name out")
            return path
        stem = f"{room}-{time.strftime('%Y%m%d-%H%M%S')}"
        for count in range(1, 1000):
            path = self.folder / (f"{stem}.{fmt}" if count == 1 else f"{stem}-{count}.{fmt}")
            if not path.exists() and path.name not in self._active:
                return path
        raise CaptureError(f"too many recordings named {stem}-N in {self.folder}")

    @staticmethod
    def _probe_writable(path: Path) -> None:
        """Create and remove the file, so a read-only or full disk is said plainly."""
        try:
            with open(path, "xb"):
                pass
            path.unlink()
        except OSError as err:
            raise CaptureError(f"cannot write {path}: {err.strerror}") from err

    def _note_path(self, path: Path) -> Path:
        return path.with_name(f".{path.name}.json")

    def _write_note(self, recording: Recording) -> None:
        write_json_atomically(self._note_path(Path(recording.path)), asdict(recording))

    def _note_of(self, path: Path) -> Recording | None:
        try:
            data = json.loads(self._note_path(path).read_text(encoding="utf-8"))
            # Where the file is now, should the folder have moved since.
            return Recording(**{**data, "path": str(path.resolve())})
        except (OSError, ValueError, TypeError):
            return None

    @staticmethod
    def _repair(path: Path) -> str:
        from scorch.audio import repair

        try:
            result = repair(path)
        except (AudioFileError, OSError) as err:
            return f"the file could not be repaired: {err}"
        return (f"the file was repaired and holds {result.seconds:.2f} s (up to "
                f"{DISK_BUFFER_FRAMES // 2} frames before the end may be lost)")

    @staticmethod
    def _frames(path: Path) -> int | None:
        from scorch.audio import probe

        try:
            return probe(path).frames
        except (AudioFileError, OSError):
            return None

    # --- space ---------------------------------------------------------------

    def _check_space(self, fmt: str, channels: int, rate: float,
                     seconds: float | None) -> None:
        free = shutil.disk_usage(self.folder).free
        need = disk_reserve(channels) + (
            bytes_per_second(fmt, channels, rate) * seconds if seconds else 0)
        if free < need:
            raise CaptureError(f"not enough space in {self.folder}: {free / 2**20:.1f} MiB "
                               f"free, {need / 2**20:.1f} MiB needed")

    def _disk_low(self, channels: int) -> str | None:
        try:
            free = shutil.disk_usage(self.folder).free
        except OSError:
            return None
        if free >= disk_reserve(channels):
            return None
        return (f"stopped: the disk is nearly full ({free / 2**20:.2f} MiB left in "
                f"{self.folder})")


def _sample_rate(door: ScsynthDoor) -> float:
    """The room's nominal sample rate, as its scsynth last said (48 kHz before it did)."""
    status = door.last_status
    return status.nominal_sample_rate if status and status.nominal_sample_rate else 48000.0


def _longest(fmt: str, channels: int, rate: float) -> float:
    """The longest recording one file of ``fmt`` holds (and one recorder synth counts)."""
    if fmt == "flac":
        return MAX_SECONDS
    return min(MAX_SECONDS, _HEADER_LIMIT / (SAMPLE_BYTES[fmt] * channels * rate))
