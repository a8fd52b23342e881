"""Notes: what each MIDI input is sounding and has played, as text, data and .mid files.

The router's input thread feeds a ring per input (:mod:`scorch.notes.capture`);
this component reads them from the caller's thread (a ring is read whole note by
note, never locked) and puts them on the installation's beat grid.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

from scorch.app.tree import ASK, RESTORE_WAIT, Tree
from scorch.errors import InvalidRequest, MidiUnavailable, NotFound, TempoUnavailable
from scorch.notes import PLACES, Capture, Note, is_input, smf
from scorch.state import INSTALLATION, Timeline

#: The state directory's folder for exported .mid files.
MIDI_DIR = "midi"
#: The state directory's folder for the notes the rooms' patterns played.
PATTERNS_DIR = "notes-patterns"


@dataclass(frozen=True)
class Span:
    """A range of time on the monotonic clock the notes are captured on."""

    start: float
    end: float


@dataclass(frozen=True)
class Exported:
    """A .mid written: where, what it holds, and the moment its 0 stands for."""

    path: Path
    notes: list[Note]
    start: float
    """The monotonic time of the file's 0 (a bar line on the grid)."""


class Notes:
    """Read the inputs' and the patterns' captured notes (any thread)."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree
        size = tree.config.midi.capture_notes
        self.patterns: Capture | None = (
            Capture.load(self._patterns_folder(), size) if size else None)
        """The notes the rooms' patterns play, a ring per pattern (``hall/Pdef acc``),
        written by each room's sclang reader thread; None: ``capture_notes = 0``."""

    def _patterns_folder(self) -> Path:
        return self._tree.config.state_path() / PATTERNS_DIR

    def save(self) -> None:
        """Keep the patterns' notes in the state folder for the next run."""
        if self.patterns is not None:
            self.patterns.save(self._patterns_folder())

    def _capture(self) -> Capture:
        capture = self._tree.midi().capture().get(timeout=ASK)
        if capture is None:
            raise MidiUnavailable("notes are not captured: [midi] capture_notes = 0 in the "
                                  "config; set it to the notes to keep per input (2048)")
        return capture

    def capture(self) -> Capture:
        """The router's capture: a ring per input (MidiUnavailable when notes are not kept)."""
        return self._capture()

    def line(self) -> Timeline:
        """The installation's beat grid now (monotonic clock), waited for while scorch starts."""
        self._tree.await_ready((), time.monotonic() + RESTORE_WAIT, "the tempo")
        view = self._tree.tempo
        if view is None:
            raise TempoUnavailable(
                f"the tempo is not running: {self._tree.start_error or 'scorch is not started'}")
        return view.get(INSTALLATION)

    @staticmethod
    def wall_offset() -> float:
        """Add to a monotonic time to get a Unix time."""
        return time.time() - time.monotonic()

    def sources(self, pattern: str | None = None) -> list[str]:
        """The sources whose names contain ``pattern`` (None: every input).

        Besides the inputs, what the router sent is kept as ``room:NAME`` and
        ``out:PORT`` (:data:`scorch.notes.capture.ROOM`): named, it is read like an
        input; unnamed, it is left out (it would repeat what the inputs played).
        A pattern that matches none is refused with the names there are.
        """
        # list() of a dict is one step the input thread cannot interleave with
        known = sorted(list(self._capture().rings))
        if pattern is None:
            return [s for s in known if is_input(s)]
        chosen = [s for s in known if pattern in s]
        if not chosen:
            raise NotFound(f"no MIDI input matching {pattern!r} has played; inputs that have: "
                           f"{', '.join(known) or 'none yet'}", name=pattern, known=known)
        return chosen

    def _all(self) -> list[tuple[Capture, bool]]:
        """The captures there are, each with whether it holds patterns' notes: the inputs'
        (when MIDI runs and keeps them) and the patterns'."""
        found: list[tuple[Capture, bool]] = []
        refused: MidiUnavailable | None = None
        try:
            found.append((self._capture(), False))
        except MidiUnavailable as err:
            refused = err
        if self.patterns is not None:
            found.append((self.patterns, True))
        if not found:
            assert refused is not None
            raise refused
        return found

    def all_sources(self, pattern: str | None = None) -> list[tuple[Capture, bool, str]]:
        """Every input and pattern (``hall/Pdef acc``) that played, whose name contains
        ``pattern``; one that matches none is refused with the names there are.

        None: every input and pattern, without what the router played in rooms and sent
        to outputs (``room:``, ``out:``: named, they are read too), which repeats the
        inputs' notes.
        """
        known = sorted(((capture, held, source) for capture, held in self._all()
                        for source in list(capture.rings)), key=lambda x: x[2])
        if pattern is None:
            return [x for x in known if is_input(x[2])]
        chosen = [x for x in known if pattern in x[2]]
        if not chosen:
            names = [x[2] for x in known]
            raise NotFound(f"no MIDI input or pattern matching {pattern!r} has played; those "
                           f"that have: {', '.join(names) or 'none yet'}", name=pattern,
                           known=names)
        return chosen

    def sounding(self, pattern: str | None = None) -> dict[str, list[Note]]:
        """The keys down now by input, and the notes sounding now by pattern, each with its
        duration so far."""
        now = time.monotonic()
        return {source: capture.rings[source].held(now) if held
                else capture.rings[source].sounding(now)
                for capture, held, source in self.all_sources(pattern)}

    def span(self, bars: float | None = None, seconds: float | None = None,
             since: float | None = None, until: float | None = None) -> Span:
        """A range: the last ``bars`` (from the bar line at or before), the last ``seconds``,
        or ``since`` to ``until`` (Unix times; until defaults to now)."""
        now = time.monotonic()
        given = sum(x is not None for x in (bars, seconds, since))
        if given != 1 or (until is not None and since is None):
            raise InvalidRequest("say one range: last_bars, last_seconds, or since (with "
                                 "until, or up to now)")
        if bars is not None:
            line = self.line()
            back = line.beat_at(now) - bars * line.beats_per_bar
            bar_line = math.floor(back / line.beats_per_bar + 1e-9) * line.beats_per_bar
            # a note placed on the bar line (to a thousandth of a beat) is in the range
            return Span(line.time_at(bar_line - 0.5 * 10.0 ** -PLACES), now)
        if seconds is not None:
            return Span(now - seconds, now)
        assert since is not None
        offset = self.wall_offset()
        end = now if until is None else until - offset
        if end <= since - offset:
            raise InvalidRequest(f"until ({until}) is not after since ({since})")
        return Span(since - offset, end)

    def played(self, span: Span, pattern: str | None = None) -> list[Note]:
        """The notes starting in ``span`` from the inputs and patterns matching ``pattern``
        (an input's once released; a pattern's as soon as it plays)."""
        return sorted(n for capture, _, source in self.all_sources(pattern)
                      for n in capture.rings[source].between(span.start, span.end))

    def export(self, span: Span, pattern: str | None = None, path: Path | None = None) -> Exported:
        """Write the notes played in ``span`` to a .mid on the grid's tempo and meter.

        ``path``: where (the caller checked it is allowed: ``config.allowed.folders``);
        default: a new file in the state directory's ``midi/`` folder named after the time.
        """
        notes = self.played(span, pattern)
        if not notes:
            raise InvalidRequest("no notes were played in that range: nothing to export")
        path = self.midi_path(path or self.new_midi_path("notes"))
        try:
            start = smf.write(notes, path, self.line())
        except OSError as err:
            raise InvalidRequest(f"cannot write {path}: {err.strerror or err}") from err
        return Exported(path, notes, start)

    def midi_folder(self) -> Path:
        """The state directory's ``midi/``: where .mid files go, and relative paths are taken."""
        return self._tree.config.state_path() / MIDI_DIR

    def midi_path(self, path: Path) -> Path:
        """``path`` as a .mid file's place: absolute, or under the state directory's ``midi/``."""
        if not path.is_absolute():
            path = self.midi_folder() / path
        if path.suffix.lower() not in (".mid", ".midi"):
            raise InvalidRequest(f"{path} is not a .mid file's name")
        return path

    def new_midi_path(self, stem: str) -> Path:
        """A .mid in ``midi/`` named after ``stem`` and the time now, that is not there yet."""
        base = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        for count in range(1, 1000):
            path = self.midi_folder() / (f"{base}.mid" if count == 1 else f"{base}-{count}.mid")
            if not path.exists():
                return path
        raise InvalidRequest(f"too many files named {base}-N.mid in {self.midi_folder()}")

    def read_file(self, path: Path, grid: float | None = None) -> smf.FileNotes:
        """The notes of the .mid at ``path`` (see :meth:`midi_path`), snapped to ``grid`` beats."""
        path = self.midi_path(path)
        try:
            return smf.read(path, grid=grid)
        except FileNotFoundError:
            raise InvalidRequest(f"no .mid file at {path}") from None
        except smf.UNREADABLE as err:
            raise InvalidRequest(f"{path} is not a readable Standard MIDI File: {err}") from None
