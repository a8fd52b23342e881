"""Standard MIDI Files: the grid's tempo and meter out, the same notes back through mido."""

from __future__ import annotations

from pathlib import Path

import mido
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.notes import smf
from scorch.notes.capture import Note
from scorch.state.tempo import Timeline


def _phrase(line: Timeline) -> list[Note]:
    beat = 60.0 / line.bpm
    start = line.time_at(13.0)  # beat 2 of bar 4 of a 4/4 grid
    return [Note(start, beat / 2, 60, 96, 0), Note(start + beat / 2, beat, 64, 80, 0),
            Note(start + beat / 2, beat, 67, 70, 1), Note(start + 2 * beat, 3 * beat, 60, 50, 0)]


def test_a_written_range_reads_back_in_mido_with_the_grids_tempo_meter_and_notes(tmp_path: Path):
    line = Timeline(96.0, 3, beat=0.0, at=50.0)
    notes = _phrase(line)
    zero = smf.write(notes, tmp_path / "out.mid", line)
    assert zero == pytest.approx(line.time_at(12.0))  # the bar line at or before the first note
    midi = mido.MidiFile(str(tmp_path / "out.mid"))
    metas = {m.type: m for m in midi.tracks[0] if m.is_meta}
    assert mido.tempo2bpm(metas["set_tempo"].tempo) == pytest.approx(96.0, abs=1e-3)
    assert (metas["time_signature"].numerator, metas["time_signature"].denominator) == (3, 4)
    back = smf.read(tmp_path / "out.mid")
    assert back.line.bpm == pytest.approx(96.0, abs=1e-3) and back.line.beats_per_bar == 3
    tick = 60.0 / 96.0 / smf.TICKS_PER_BEAT
    assert len(back.notes) == len(notes)
    for got, sent in zip(back.notes, sorted(notes), strict=True):
        assert (got.pitch, got.velocity, got.channel) == (sent.pitch, sent.velocity, sent.channel)
        assert got.onset == pytest.approx(sent.onset - zero, abs=tick)
        assert got.duration == pytest.approx(sent.duration, abs=tick)


def test_a_first_note_a_fraction_of_a_tick_before_a_bar_line_starts_the_file_at_tick_0(
        tmp_path: Path):
    line = Timeline(120.0, 4, beat=0.0, at=0.0)
    early = line.time_at(520.0) - 0.00013  # the kick's downbeat as sclang's seconds had it
    zero = smf.write([Note(early, 0.1, 36, 100), Note(line.time_at(521.0), 0.1, 36, 100)],
                     tmp_path / "k.mid", line)
    assert zero == line.time_at(520.0)
    tick, ons = 0, []
    for msg in mido.MidiFile(str(tmp_path / "k.mid")).tracks[0]:
        tick += msg.time
        if msg.type == "note_on":
            ons.append(tick)
    assert ons == [0, 480]


def test_a_repeated_key_ending_as_it_starts_again_stays_two_notes(tmp_path: Path):
    line = Timeline(120.0, 4, beat=0.0, at=0.0)
    smf.write([Note(0.0, 0.5, 60, 90), Note(0.5, 0.5, 60, 91)], tmp_path / "r.mid", line)
    assert [(n.onset, n.velocity) for n in smf.read(tmp_path / "r.mid").notes] == [(0.0, 90),
                                                                                   (0.5, 91)]


def test_reading_honours_a_tempo_change_inside_the_file(tmp_path: Path):
    track = mido.MidiTrack([
        mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(120), time=0),
        mido.Message("note_on", note=60, velocity=90, time=0),
        mido.Message("note_off", note=60, time=480),
        mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(60), time=0),
        mido.Message("note_on", note=62, velocity=90, time=480),
        mido.Message("note_on", note=62, velocity=0, time=480),
        mido.Message("note_on", note=64, velocity=90, time=0),  # still down when the file ends
    ])
    midi = mido.MidiFile(ticks_per_beat=480)
    midi.tracks.append(track)
    midi.save(str(tmp_path / "t.mid"))
    got = smf.read(tmp_path / "t.mid", source="file")
    assert [(n.pitch, n.onset, n.duration) for n in got.notes] == [
        (60, 0.0, 0.5), (62, 1.5, 1.0), (64, 2.5, 0.0)]
    assert got.line.bpm == pytest.approx(120.0) and got.notes[0].source == "file"


def test_quantising_snaps_onsets_and_ends_to_the_grid_and_keeps_every_note():
    line = Timeline(120.0, 4, beat=0.0, at=0.0)
    played = [Note(0.02, 0.2, 60, 90), Note(0.51, 0.01, 62, 90), Note(0.74, 0.3, 64, 90)]
    got = smf.quantise(played, line, grid=0.5)  # eighths: 0.25 s
    assert [(n.onset, n.duration) for n in got] == [(0.0, 0.25), (0.5, 0.25), (0.75, 0.25)]
    with pytest.raises(ValueError):
        smf.quantise(played, line, grid=0)


def test_reading_can_quantise(tmp_path: Path):
    line = Timeline(120.0, 4, beat=0.0, at=0.0)
    smf.write([Note(0.0, 0.2, 60, 90), Note(0.52, 0.2, 62, 90)], tmp_path / "q.mid", line)
    got = smf.read(tmp_path / "q.mid", grid=1.0)
    assert [(n.onset, n.duration) for n in got.notes] == [(0.0, 0.5), (0.5, 0.5)]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.booleans())
def test_any_bytes_read_as_notes_or_fail_as_unreadable(tmp_path_factory: pytest.TempPathFactory,
                                                       data: bytes, header: bool) -> None:
    path = tmp_path_factory.mktemp("hostile") / "x.mid"
    path.write_bytes((b"MThd\x00\x00\x00\x06\x00\x00\x00\x01\x01\xe0MTrk" if header else b"")
                     + data)
    try:
        found = smf.read(path)
    except smf.UNREADABLE:
        return
    assert all(0 <= n.pitch <= 127 and n.duration >= 0 for n in found.notes)
