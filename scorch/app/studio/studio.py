"""Record, listen and render for one installation: where the files go and who owns them.

Folders under the state directory: ``recordings/`` (the recordings, kept),
``listening/`` (what ``listen`` captured and drew, the newest few kept),
``renders/`` (the render cache) and ``references/`` (reference sounds' figures).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scorch.app.studio.capture import Capture, Slots, Source
from scorch.app.studio.hearing import MAX_FILE_SECONDS, hear, prune, settle, warm_up
from scorch.app.studio.recorder import Recorder
from scorch.app.studio.references import References
from scorch.app.studio.renderer import Renderer
from scorch.app.tree import RESTORE_WAIT, Ready
from scorch.errors import AudioFileError, RoomNotReady
from scorch.primitives.synthdefs import SynthDefLibrary
from scorch.state import Door, RoomView

if TYPE_CHECKING:
    from scorch.audio import SoundReport
    from scorch.audio.music import Grid
    from scorch.state.timing import TempoGrid

#: Seconds after READY before hearing's libraries load: the first answers go out first.
WARM_AFTER = 2.0
#: How many listens ``listening/`` keeps.
KEEP_LISTENS = 20
#: A listen is given up when its capture has not ended after this many times its
#: length, plus this many seconds: only a scsynth that stopped computing gets there
#: (a headless driver on a machine busy with other work can run at a third of its speed).
_SLOWEST, _GRACE = 3.0, 10.0
#: Patterns sound this long after their beat: sclang's ``s.latency``, which scorch leaves
#: at its default. A room's rhythm is heard against the grid shifted by it.
PATTERN_LATENCY = 0.2
#: A room's audio clock counts as off the wall clock beyond this share.
CLOCK_OFF = 0.005


@dataclass(frozen=True)
class Heard:
    """What a listen heard: the numbers, the picture, the audio file and what it was."""

    report: SoundReport
    picture: Path | None
    """None when the listen was not drawn (a sweep's steps)."""
    audio: Path
    label: str
    remark: str | None = None


class Studio:
    """The recorder, the capture slots, the listening folder and the render cache."""

    def __init__(self, state_dir: Path, views: dict[str, RoomView], doors: dict[str, Door],
                 library: SynthDefLibrary, sample_rate: int, ready: Ready | None = None) -> None:
        self.slots = Slots()
        self._doors = doors
        self._ready = ready
        """Waits for a booting or restoring room before a capture starts (None: never)."""
        self.recorder = Recorder(state_dir / "recordings", views, doors, self.slots, ready)
        self.listening = (state_dir / "listening").resolve()
        self.renderer = Renderer(state_dir / "renders", library, sample_rate)
        self.references = References(state_dir / "references")

    def warm_up(self) -> None:
        """Load what hearing needs in the background (once the rooms are READY), so the
        first listen answers as fast as the later ones."""
        warm_up(WARM_AFTER)

    def listen(self, room: str, view: RoomView, source: Source, seconds: float,
               tempo: TempoGrid | None = None, whose: str = "the installation's",
               draw: bool = True) -> Heard:
        """Capture ``seconds`` of ``source`` in ``room`` now, then measure and draw it
        (its onsets against ``tempo``, ``whose`` beat grid the room plays on; no picture
        unless ``draw``)."""
        return self.listen_together([(room, view, source)], seconds, tempo, whose, draw)[0]

    def listen_together(self, sources: Sequence[tuple[str, RoomView, Source]],
                        seconds: float, tempo: TempoGrid | None = None,
                        whose: str = "the installation's", draw: bool = True) -> list[Heard]:
        """Capture every (room, view, source) at once for ``seconds``, then measure (and
        draw) each, as :meth:`listen` does one."""
        warm_up()
        if self._ready is not None:
            self._ready(sorted({room for room, _, _ in sources}),
                        time.monotonic() + RESTORE_WAIT, "listen")
        self.listening.mkdir(parents=True, exist_ok=True)
        captures: list[Capture] = []
        try:
            for room, view, source in sources:
                stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 10**9:09d}"
                captures.append(Capture.start(room, view, self._doors[room].scsynth,
                                              self.slots, self.listening / f"{room}-{stamp}.wav",
                                              "wav", source, seconds))
            _wait(captures, seconds)
        finally:
            for capture in captures:
                capture.finish()
        heard = []
        for capture in captures:
            source = capture.source
            buses = (f"bus {source.bus}" if source.channels == 1 else
                     f"buses {source.bus}-{source.bus + source.channels - 1}")
            what = (f"node {source.node} alone" if source.node else
                    f"main outputs ({buses})" if source.bus == 0 else buses)
            label = f"{capture.room}, {what}, {seconds:g} s"
            picture = capture.path.with_suffix(".png")
            report = hear(capture.path, picture if draw else None, label,
                          _heard_on(tempo, capture, seconds, whose))
            heard.append(Heard(report, picture if draw else None, capture.path, label))
        prune(self.listening, KEEP_LISTENS)
        return heard

    def listen_file(self, path: Path, tempo: TempoGrid | None = None) -> Heard:
        """Measure and draw a sound file (its first two minutes at most), its onsets
        against the tempo of ``tempo`` (its phase is the file's own)."""
        warm_up()
        if not path.is_file():
            raise AudioFileError(f"{path}: no such file")
        self.listening.mkdir(parents=True, exist_ok=True)
        picture = self.listening / f"file-{time.strftime('%Y%m%d-%H%M%S')}-{path.stem}.png"
        report = hear(path, picture, path.name, _heard_on(tempo, None, 0.0, "the installation's"))
        prune(self.listening, KEEP_LISTENS)
        remark = None
        from scorch.audio import probe

        try:
            total = probe(path).seconds
        except (AudioFileError, OSError):
            total = report.seconds
        if total > report.seconds + 0.01:
            remark = f"heard the first {MAX_FILE_SECONDS:g} s of {total:.1f} s"
        return Heard(report, picture, path.resolve(), path.name, remark)

    def close(self) -> None:
        """Stop every recording cleanly (the rooms stop next) and the libraries' warm-up."""
        self.recorder.stop_all()
        settle()


def _wait(captures: list[Capture], seconds: float) -> None:
    """Wait until every capture has ended; give up on a scsynth gone or far too slow."""
    started = time.monotonic()
    for capture in captures:
        while not capture.wait(0.05):
            if capture.scsynth_gone():
                raise RoomNotReady(f"room {capture.room!r}: scsynth stopped while "
                                       "listening; nothing to hear (see events)")
            if time.monotonic() - started > _SLOWEST * seconds + _GRACE:
                capture.stop()
                raise RoomNotReady(f"room {capture.room!r}: the capture did not end "
                                       f"within {_SLOWEST * seconds + _GRACE:g} s")


def _heard_on(tempo: TempoGrid | None, capture: Capture | None, seconds: float,
              whose: str) -> Grid | None:
    """The grid a capture of ``seconds`` (None: a file, whose beats are its own) is heard
    against: ``tempo``'s beats, a pattern latency later, on the capture's own clock.

    The room's audio clock may not keep the wall clock's time (a headless driver on a
    busy machine runs a few percent slow, and patterns are timed by the wall clock): the
    capture's wall-clock length over its length in samples says by how much."""
    from scorch.audio.music import Grid

    if tempo is None:
        return None
    if capture is None or capture.started_at is None:
        return Grid(tempo.bpm, None, f"{whose} tempo")
    clock = 1.0
    if capture.ended_at is not None and seconds > 0:
        measured = (capture.ended_at - capture.started_at) / seconds
        # The start is known to half a round trip and the end is the recorder's /n_end
        # coming in (a few ms, both): over seconds, only a clock off by more is one.
        clock = measured if abs(measured - 1) > CLOCK_OFF else 1.0
    beat = 60.0 / tempo.bpm
    at = (tempo.beat_zero + PATTERN_LATENCY - capture.started_at) % beat
    return Grid(tempo.bpm, at, f"{whose} grid", clock)
