"""Record, listen and render for one installation: where the files go and who owns them.

Folders under the state directory: ``recordings/`` (the recordings, kept),
``listening/`` (what ``listen`` captured and drew, the newest few kept) and
``renders/`` (the render cache).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scorch.app.studio.capture import Capture, Slots, Source
from scorch.app.studio.hearing import MAX_FILE_SECONDS, hear, prune, settle, warm_up
from scorch.app.studio.recorder import Recorder
from scorch.app.studio.renderer import Renderer
from scorch.app.tree import RESTORE_WAIT, Ready
from scorch.errors import AudioFileError, InstanceNotReady
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.door import Door
from scorch.state.view import InstanceView

if TYPE_CHECKING:
    from scorch.audio.report import SoundReport

#: Seconds after READY before hearing's libraries load: the first answers go out first.
WARM_AFTER = 2.0
#: How many listens ``listening/`` keeps.
KEEP_LISTENS = 20
#: A listen is given up when its capture has not ended after this many times its
#: length, plus this many seconds: only a scsynth that stopped computing gets there
#: (a headless driver on a machine busy with other work can run at a third of its speed).
_SLOWEST, _GRACE = 3.0, 10.0


@dataclass(frozen=True)
class Heard:
    """What a listen heard: the numbers, the picture, the audio file and what it was."""

    report: SoundReport
    picture: Path
    audio: Path
    label: str
    remark: str | None = None


class Studio:
    """The recorder, the capture slots, the listening folder and the render cache."""

    def __init__(self, state_dir: Path, views: dict[str, InstanceView], doors: dict[str, Door],
                 library: SynthDefLibrary, sample_rate: int, ready: Ready | None = None) -> None:
        self.slots = Slots()
        self._doors = doors
        self._ready = ready
        """Waits for a booting or restoring room before a capture starts (None: never)."""
        self.recorder = Recorder(state_dir / "recordings", views, doors, self.slots, ready)
        self.listening = (state_dir / "listening").resolve()
        self.renderer = Renderer(state_dir / "renders", library, sample_rate)

    def warm_up(self) -> None:
        """Load what hearing needs in the background (once the rooms are READY), so the
        first listen answers as fast as the later ones."""
        warm_up(WARM_AFTER)

    def listen(self, room: str, view: InstanceView, source: Source, seconds: float) -> Heard:
        """Capture ``seconds`` of ``source`` in ``room`` now, then measure and draw it."""
        warm_up()
        if self._ready is not None:
            self._ready([room], time.monotonic() + RESTORE_WAIT, "listen")
        self.listening.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 10**9:09d}"
        audio = self.listening / f"{room}-{stamp}.wav"
        capture = Capture.start(room, view, self._doors[room].scsynth, self.slots, audio, "wav",
                                source, seconds)
        started = time.monotonic()
        try:
            while not capture.wait(0.05):
                if capture.scsynth_gone():
                    raise InstanceNotReady(f"instance {room!r}: scsynth stopped while "
                                           "listening; nothing to hear (see events)")
                if time.monotonic() - started > _SLOWEST * seconds + _GRACE:
                    capture.stop()
                    raise InstanceNotReady(f"instance {room!r}: the capture did not end "
                                           f"within {_SLOWEST * seconds + _GRACE:g} s")
        finally:
            capture.finish()
        buses = (f"bus {source.bus}" if source.channels == 1 else
                 f"buses {source.bus}-{source.bus + source.channels - 1}")
        what = (f"node {source.node} alone" if source.node else
                f"main outputs ({buses})" if source.bus == 0 else buses)
        label = f"{room}, {what}, {seconds:g} s"
        report = hear(audio, audio.with_suffix(".png"), label)
        prune(self.listening, KEEP_LISTENS)
        return Heard(report, audio.with_suffix(".png"), audio, label)

    def listen_file(self, path: Path) -> Heard:
        """Measure and draw a sound file (its first two minutes at most)."""
        warm_up()
        if not path.is_file():
            raise AudioFileError(f"{path}: no such file")
        self.listening.mkdir(parents=True, exist_ok=True)
        picture = self.listening / f"file-{time.strftime('%Y%m%d-%H%M%S')}-{path.stem}.png"
        report = hear(path, picture, path.name)
        prune(self.listening, KEEP_LISTENS)
        remark = None
        from scorch.audio.recording_file import probe

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
