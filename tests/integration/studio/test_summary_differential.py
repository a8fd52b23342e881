"""The one-sentence summary against what was rendered: scores whose notes are known, played by
scsynth -N with the library's SynthDefs, heard by the analysis, checked note by note."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.api.ops.audio import numbers
from scorch.audio.analysis import analyse_file
from scorch.audio.report import SoundReport
from scorch.primitives.scsynth import commands, nrt
from scorch.primitives.scsynth.commands import AddAction
from scorch.primitives.synthdefs.graph import Graph
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.synthdefs.scgf import CONTROL

pytestmark = pytest.mark.integration

MELODY = {"C5": 523.25, "E5": 659.26, "G5": 783.99, "C6": 1046.5}
#: A synth that seeds scsynth's random numbers before any other starts: a pluck's burst of
#: noise is then the same in every render (unseeded, about one melody in ten had a note
#: named by one of its harmonics), so a render's figures are facts, not chances.
SEED = "scorchtest_seed"


def _seed_synthdef() -> bytes:
    graph = Graph()
    graph.one("RandSeed", CONTROL, 1.0, 1234.0)  # seeds at its first control period
    return graph.synthdef(SEED)


def _new(time: float, synthdef: str, node: int, **params: float) -> nrt.Bundle:
    return nrt.bundle(time, commands.s_new(synthdef, node, AddAction.TAIL, commands.ROOT_NODE,
                                           commands.controls(params)))


def _hear(tmp_path: Path, library: SynthDefLibrary, name: str, bundles: list[nrt.Bundle],
          length: float = 3.0) -> SoundReport:
    defs = nrt.bundle(0.0, commands.d_recv(_seed_synthdef()),
                      *(commands.d_recv(library.compiled(n)) for n in library.names()))
    score, out = tmp_path / f"{name}.osc", tmp_path / f"{name}.wav"
    score.write_bytes(nrt.encode_score([defs, _new(0.0, SEED, 998), *bundles,
                                        nrt.end_marker(length)]))
    nrt.render(score, out, sample_rate=48000, channels=2, fmt="wav", timeout=60.0)
    return analyse_file(out)


@pytest.mark.parametrize(("synthdef", "freq", "note"), [
    ("acid", 55.0, "A1"), ("ambient", 220.0, "A3"), ("reese", 55.0, "A1")])
def test_a_held_note_is_one_steady_tone_not_hits(
        tmp_path: Path, library: SynthDefLibrary, synthdef: str, freq: float,
        note: str) -> None:
    report = _hear(tmp_path, library, synthdef,
                   [_new(0.01, synthdef, 1000, freq=freq, amp=0.3)])
    assert report.note == note
    assert report.summary.startswith("A steady"), report.summary
    assert "hit" not in report.summary and "notes at" not in report.summary, report.summary
    assert all(t < 0.1 for t in report.onsets), report.onsets  # at most its own start


def test_a_beat_with_a_tone_over_it_names_the_hits_and_the_tone(
        tmp_path: Path, library: SynthDefLibrary) -> None:
    hits = [0.25 + 0.5 * i for i in range(6)]
    report = _hear(tmp_path, library, "beat", [
        _new(0.01, "sine", 999, freq=880, amp=0.1),
        *(_new(t, "kick", 1001 + i, amp=0.5) for i, t in enumerate(hits))])
    assert report.onsets == pytest.approx(hits, abs=0.02)
    assert report.held is not None and report.held.note == "A5"
    assert report.summary.startswith("Six percussive hits at 0.25, 0.75"), report.summary
    assert "held tone at 880.0 Hz (A5" in report.summary, report.summary
    text = numbers(report)  # what the text content says beside the sentence
    assert "onsets (6): 0.2" in text and "LUFS" in text and "880.0 Hz A5" in text, text


def test_a_melody_over_a_drone_names_the_melodys_notes_and_the_drone(
        tmp_path: Path, library: SynthDefLibrary) -> None:
    times = [0.5 + 0.5 * i for i in range(len(MELODY))]
    report = _hear(tmp_path, library, "melody", [
        _new(0.01, "sine", 999, freq=110, amp=0.2),
        *(_new(t, "pluck", 1001 + i, freq=hz, amp=0.3)
          for i, (t, hz) in enumerate(zip(times, MELODY.values(), strict=True)))])
    assert report.onsets == pytest.approx(times, abs=0.02)
    assert report.onset_notes == list(MELODY)
    assert report.held is not None and report.held.note == "A2"
    named = ", ".join(n or "unpitched" for n in report.onset_notes)
    assert f"playing {named}, over a held tone at 110" in report.summary, report.summary
    assert "pitched near 110" not in report.summary
