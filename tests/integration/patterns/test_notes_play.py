"""A .mid played in a real room: its notes reach scsynth at their pitches and on the grid.

The file is written with mido itself (not scorch's writer); scsynth's own ``/n_go``
notifications and ``/s_get`` say which notes started, when and at what pitch.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import mido
import pytest

from scorch.api.local import LocalService
from scorch.api.ops.audio import HeardOutput
from scorch.api.ops.music.notes import NotesOutput
from scorch.api.ops.music.playing import PlayingOutput
from scorch.app.orchestra import Orchestra
from scorch.errors import AudioFileError, InvalidRequest, ScorchError, UnknownSynthDef
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import module_orchestra, scsynth_param
from tests.support.scsynth_listener import Listener

pytestmark = pytest.mark.integration

BPM = 240.0
BEAT = 60.0 / BPM
ROOM = """
[instances.lobby]
synthdefs = ["pluck"]
"""
#: (beat, beats long, note, velocity): a note, a chord on the next beat, a note half a beat on.
TUNE = [(0.0, 1.0, 60, 100), (1.0, 1.0, 64, 90), (1.0, 1.0, 67, 90), (2.5, 0.5, 72, 127)]


#: A melody two beats a note, for the ear (`listen`): C4 E4 G4 C5.
MELODY = [(2.0 * i, 1.0, n, 110) for i, n in enumerate((60, 64, 67, 72))]


def write_mid(path: Path, tune: list[tuple[float, float, int, int]] = TUNE) -> None:
    """``tune`` at 120 bpm in 4/4, written by mido (ticks of 480 a beat)."""
    events = sorted([(round(b * 480), 1, n, v) for b, _, n, v in tune]
                    + [(round((b + d) * 480), 0, n, 0) for b, d, n, _ in tune])
    track = mido.MidiTrack([mido.MetaMessage("set_tempo", tempo=500_000),
                            mido.MetaMessage("time_signature", numerator=4, denominator=4)])
    now = 0
    for tick, on, note, velocity in events:
        track.append(mido.Message("note_on" if on else "note_off", note=note,
                                  velocity=velocity, time=tick - now))
        now = tick
    midi = mido.MidiFile(ticks_per_beat=480)
    midi.tracks.append(track)
    midi.save(str(path))


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[tuple[Orchestra, Listener, Path]]:
    folder = tmp_path_factory.mktemp("notes-play")
    # the .mid files are the test's own, in a folder the installation allows
    allow = f'[files]\nallow = ["{folder}"]\n'
    with module_orchestra(folder, "notes-play", f"[tempo]\nbpm = {BPM}\n{allow}" + ROOM,
                          library) as orch:
        port = orch.rooms.status("lobby").port
        assert port is not None
        listener = Listener(port)
        write_mid(folder / "tune.mid")
        write_mid(folder / "melody.mid", MELODY)
        yield orch, listener, folder
        listener.close()


def test_a_mid_plays_its_notes_at_their_pitches_from_the_next_bar(
        room: tuple[Orchestra, Listener, Path]) -> None:
    orch, listener, folder = room
    service = LocalService(orch)
    since = time.time()
    out = service.call("notes", {"action": "play", "instance": "lobby",
                                 "path": str(folder / "tune.mid"), "synthdef": "pluck"})
    assert isinstance(out, NotesOutput) and out.pattern == "tune" and out.count == 4
    assert "Pdef(\\tune)" in out.text() and "1 bars" in out.text()
    port = orch.rooms.status("lobby").port
    assert port is not None
    deadline = time.monotonic() + 4 * 4 * BEAT + 3.0
    while len(listener.synth_starts(since)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    starts = sorted(listener.synth_starts(since), key=lambda h: h.at)
    assert len(starts) == 4, starts
    # Each synth's freq, asked of scsynth while the string still rings (decay 2 s).
    freqs = sorted(round(scsynth_param(port, int(h.message.args[0]), "freq"), 2)
                   for h in starts)
    assert freqs == sorted(round(440 * 2 ** ((n - 69) / 12), 2) for _, _, n, _ in TUNE)
    # The file's beats on the room's grid: gaps of 1, 0 and 1.5 beats at 240 bpm.
    gaps = [b.at - a.at for a, b in itertools.pairwise(starts)]
    assert gaps == pytest.approx([BEAT, 0.0, 1.5 * BEAT], abs=0.04), gaps
    # From a bar line, a server latency (s.latency, as every pattern plays) after it.
    grid = orch.tempo.grid()
    assert grid is not None
    late = (grid.beat_at(starts[0].at) % grid.beats_per_bar) * BEAT
    assert late < 0.3, f"{late:.3f} s after the bar line"
    playing = service.call("playing", {"instance": "lobby"})
    assert isinstance(playing, PlayingOutput)
    assert "tune" in {p.name for p in playing.rooms[0].patterns}


def test_a_played_mid_is_heard_with_its_pitches_and_onsets(
        room: tuple[Orchestra, Listener, Path]) -> None:
    orch, _, folder = room
    service = LocalService(orch)
    # The tune of the test before still rings (a pluck decays for 2 s): what is heard is
    # this melody alone once its strings are gone.
    deadline = time.monotonic() + 10.0
    while ((server := orch.rooms.status("lobby").server) is None or server.synths) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    service.call("notes", {"action": "play", "instance": "lobby", "synthdef": "pluck",
                           "path": str(folder / "melody.mid"), "start": "now"})
    heard = service.call("listen", {"instance": "lobby", "seconds": 2.6})
    assert isinstance(heard, HeardOutput)
    notes = [n for n in heard.onset_notes if n is not None]
    assert notes == ["C4", "E4", "G4", "C5"], (heard.onsets, heard.onset_notes)
    # Two beats apart in the sound too. The timing itself is measured on scsynth above: the
    # dummy JACK driver drops cycles on a loaded machine, and a recording then runs short.
    gaps = [b - a for a, b in itertools.pairwise(heard.onsets)]
    assert gaps == pytest.approx([2 * BEAT] * 3, rel=0.35), heard.onsets
    # The same window through basic-pitch's note model: at each onset the sound has, the
    # loudest note the model hears begin there, other than the strings plucked before, is
    # the file's. A pluck rings on under the next one, and the model hears those strings
    # again at the new onset (as loud as the new note, now and then), and a faint harmonic.
    out = service.call("notes", {"action": "transcribe", "path": heard.audio})
    assert isinstance(out, NotesOutput) and out.action == "transcribe" and out.notes
    melody: list[int] = []
    ringing: set[int] = set()
    for onset in heard.onsets:
        there = [n for n in out.notes if abs(n.onset - onset) < 0.06]
        new = [n for n in there if n.pitch not in ringing]
        assert new, (onset, out.listing)
        melody.append(max(new, key=lambda n: n.velocity).pitch)
        ringing.add(melody[-1])
    assert melody == [60, 64, 67, 72], out.listing
    assert "C4" in out.listing and "C5" in out.listing


def test_transcribing_what_is_no_audio_file_is_refused_in_words(
        room: tuple[Orchestra, Listener, Path]) -> None:
    orch, _, folder = room
    service = LocalService(orch)
    with pytest.raises(AudioFileError, match="no audio file at"):
        service.call("notes", {"action": "transcribe", "path": "no-such-recording.wav"})
    (folder / "noise.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" * 4)
    with pytest.raises(AudioFileError, match="cannot hear notes in it"):
        service.call("notes", {"action": "transcribe", "path": str(folder / "noise.wav")})


def test_a_looped_mid_plays_until_stopped_by_its_name(
        room: tuple[Orchestra, Listener, Path]) -> None:
    orch, listener, folder = room
    service = LocalService(orch)
    since = time.time()
    service.call("notes", {"action": "play", "instance": "lobby", "path": str(folder / "tune.mid"),
                           "synthdef": "pluck", "name": "again", "loop": True, "start": "now"})
    deadline = time.monotonic() + 3 * 4 * BEAT + 3.0
    while len(listener.synth_starts(since)) < 9 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(listener.synth_starts(since)) >= 9, "a looped file plays more than twice"
    assert orch.rooms.execute_one("lobby", "Pdef(\\again).stop; Pdef(\\again).isPlaying",
                                  timeout=10).value == "false"
    time.sleep(2 * BEAT)
    stopped = time.time()
    time.sleep(4 * BEAT + 0.4)
    assert listener.synth_starts(stopped) == []


@pytest.mark.parametrize(("args", "error", "words"), [
    ({"synthdef": "nosuchdef"}, UnknownSynthDef, "knows no SynthDef named 'nosuchdef'"),
    ({"path": "missing.mid"}, InvalidRequest, "no .mid file at"),
    ({"path": "song.wav"}, InvalidRequest, "is not a .mid file's name"),
    ({"path": "garbage.mid"}, InvalidRequest, "not a readable Standard MIDI File"),
    ({"path": "empty.mid"}, InvalidRequest, "holds no notes"),
])
def test_bad_files_and_unknown_synthdefs_are_refused_in_words(
        room: tuple[Orchestra, Listener, Path], args: dict[str, str],
        error: type[ScorchError], words: str) -> None:
    orch, _, folder = room
    (folder / "state" / "midi").mkdir(parents=True, exist_ok=True)
    (folder / "state" / "midi" / "garbage.mid").write_bytes(b"MThd\x00\x00\x00\x06garbage")
    empty = mido.MidiFile()
    empty.tracks.append(mido.MidiTrack())
    empty.save(str(folder / "state" / "midi" / "empty.mid"))
    call = {"action": "play", "instance": "lobby", "path": str(folder / "tune.mid"), **args}
    with pytest.raises(error, match=words):
        LocalService(orch).call("notes", call)
