"""The recordings folder as list reads it: notes, files without one, and a recorder that died."""

from __future__ import annotations

import json
from pathlib import Path

import soundfile

from scorch.app.studio.capture import Slots
from scorch.app.studio.recorder import Recorder
from scorch.audio.recording_file import probe
from tests.support.recording_files import (
    as_a_killed_writer_leaves_it,
    stereo_ramp,
)

RATE = 48000


def note(path: Path, **fields: object) -> None:
    """Write the note a recorder keeps beside ``path``."""
    record = {"name": path.stem, "path": str(path), "room": "lobby", "format": "wav",
              "channels": 2, "bus": 0, "node": None, "state": "recording",
              "started_at": 1000.0, "ended_at": None, "seconds_asked": None, "note": None}
    (path.parent / f".{path.name}.json").write_text(json.dumps({**record, **fields}))


def test_a_file_scorch_was_writing_when_it_died_is_repaired_and_listed_cut_short(
        tmp_path: Path) -> None:
    path = tmp_path / "lobby-night.wav"
    soundfile.write(path, stereo_ramp(), RATE, subtype="FLOAT")
    as_a_killed_writer_leaves_it(path)
    note(path)
    assert probe(path).needs_repair

    [(recording, facts)] = Recorder(tmp_path, {}, {}, Slots()).list()
    assert recording.state == "cut short" and recording.room == "lobby"
    assert recording.note is not None and "scorch stopped while recording" in recording.note
    assert facts is not None and facts["frames"] == len(stereo_ramp())
    assert not probe(path).needs_repair
    # The note now says so too: listing again repairs nothing and says the same.
    assert json.loads((tmp_path / ".lobby-night.wav.json").read_text())["state"] == "cut short"
    assert Recorder(tmp_path, {}, {}, Slots()).list()[0][0].state == "cut short"


def test_files_without_a_note_are_listed_and_what_is_not_audio_says_why(tmp_path: Path) -> None:
    soundfile.write(tmp_path / "dropped-in.flac", stereo_ramp(), RATE, subtype="PCM_24")
    (tmp_path / "broken.wav").write_bytes(b"RIFF....not a wave file")
    (tmp_path / "readme.txt").write_text("not listed: not a recording format")
    rows = {r.name: (r, facts) for r, facts in Recorder(tmp_path, {}, {}, Slots()).list()}
    assert set(rows) == {"dropped-in", "broken"}
    dropped, facts = rows["dropped-in"]
    assert (dropped.room, dropped.state, dropped.format) == (None, "done", "flac")
    assert facts is not None and facts["seconds"] == len(stereo_ramp()) / RATE
    broken, facts = rows["broken"]
    assert broken.state == "unreadable" and facts is None
    assert broken.note is not None and "RIFF/WAVE" in broken.note


def test_a_missing_folder_lists_nothing(tmp_path: Path) -> None:
    assert Recorder(tmp_path / "never-made", {}, {}, Slots()).list() == []


def test_a_flac_that_is_starting_is_listed_recording_not_unreadable(tmp_path: Path) -> None:
    from dataclasses import replace
    from typing import Any, cast

    from scorch.app.studio.recorder import _Active

    path = tmp_path / "lobby-start.flac"
    path.write_bytes(b"")  # DiskOut has not written its first block yet
    note(path, format="flac")
    recorder = Recorder(tmp_path, {}, {}, Slots())
    [(listed, _)] = recorder.list()
    assert listed.state == "unreadable"  # nobody writes it: it is what it looks like
    started = replace(listed, state="recording", note=None)
    recorder._active[path.name] = _Active(started, cast(Any, None))
    [(recording, facts)] = recorder.list()
    assert recording.state == "recording" and recording.note is None
    assert facts == {"frames": 0, "seconds": 0.0, "size": 0}
