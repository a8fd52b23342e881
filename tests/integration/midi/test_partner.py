"""The partner on a real JACK MIDI input and a real room: continue, infill, and answer live.

One orchestra (a room, MIDI on its own JACK server) for the module. The live answer is
timed from scsynth's own ``/n_go`` and ``/n_end`` (tests/support/midi/answer.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import mido
import pytest

from scorch.api.local import LocalService
from scorch.api.ops.music.notes import NotesOutput
from scorch.api.ops.music.partner import PartnerOutput
from scorch.app.orchestra import Orchestra
from scorch.errors import FileExists, InvalidRequest, NotFound, PathRefused, ScorchError
from scorch.notes.capture import PARTNER, ROOM, place
from scorch.notes.partner import key
from tests.support.midi.answer import NodeWatch, answer_once, perform, played_whole
from tests.support.midi.devices import Hardware
from tests.support.scsynth_listener import Listener

pytestmark = pytest.mark.integration

BPM = 120.0
BEAT = 60.0 / BPM
PORT = "scorchtest-partner"
#: Two phrases with a silence of 3 beats between them (pitch, held, to the next press).
LEFT = [(60, 0.2, 0.25), (62, 0.2, 0.25), (64, 0.2, 0.25), (65, 0.2, 0.25), (67, 0.2, 1.5)]
RIGHT = [(72, 0.2, 0.25), (71, 0.2, 0.25), (69, 0.2, 0.25), (67, 0.2, 0.25), (65, 0.2, 0.25),
         (64, 0.2, 0.25)]
#: Bounds, generous for a machine shared by several test runs (BENCHMARKS.md "Partner
#: answer" has the figures: a few ms at the median, up to 0.1 s under load), under a beat
#: (0.5 s); uncut, the held voice would sound about 0.3 s more, then fade over its release.
LATE = 0.1
STOP = 0.2


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Orchestra, Hardware]]:
    from scorch.config.installation import parse_config
    from scorch.primitives.synthdefs.library import SynthDefLibrary
    from tests.conftest import jack_name

    folder = tmp_path_factory.mktemp("partner")
    # realtime, as a stage machine's: a JACK client late by a cycle on a loaded machine
    # loses that cycle's MIDI, and the phrases must arrive whole (the stage tests' reason)
    text = (f'state_dir = "{folder / "state"}"\n[audio]\ndriver = "dummy"\nrealtime = true\n'
            f'jack_server = "{jack_name("partner")}"\n[docs]\nbuild = "on-demand"\n'
            f'[tempo]\nbpm = {BPM}\n[midi]\nbackend = "jack"\nrescan_interval = 0.1\n'
            '[instances.lobby]\nsynthdefs = ["sine"]\n')
    orch = Orchestra(parse_config(text, folder / "config.toml"), SynthDefLibrary())
    orch.start()
    keys = None
    try:
        assert orch.midi.error is None
        keys = Hardware(PORT, "scorchtest-hw", orch.config.audio.jack_server)
        deadline = time.monotonic() + 10
        while PORT not in " ".join(orch.notes.capture().rings):
            assert time.monotonic() < deadline, "the router never captured the port"
            keys.send(0x90, 21, 1)
            keys.send(0x80, 21, 0)
            time.sleep(0.05)
        yield orch, keys
    finally:
        if keys is not None:
            keys.unplug()
        orch.stop()


def ngrams_occur(made: list[int], orders: list[int], history: list[int],
                 played: list[int]) -> None:
    """Each note chosen at order k >= 1 makes, with the k before it, a run of ``played``."""
    seq = history + made
    runs = {tuple(played[i:j]) for i in range(len(played))
            for j in range(i + 1, min(len(played), i + 8) + 1)}
    for i, k in enumerate(orders):
        if k >= 1:
            gram = tuple(seq[len(history) + i - k:len(history) + i + 1])
            assert gram in runs, (gram, i, k)


def test_continue_and_infill_learn_the_input_and_play_save_and_refuse(
        rig: tuple[Orchestra, Hardware]) -> None:
    orch, keys = rig
    service = LocalService(orch)
    for _ in range(2):  # once more if JACK lost a note in an xrun: see played_whole
        since = time.time()
        left, _ = perform(keys, LEFT)
        time.sleep(LEFT[-1][2] - LEFT[-1][1])  # the silence between the phrases
        right, _ = perform(keys, RIGHT)
        time.sleep(0.1)
        played = learned(orch)
        heard = orch.notes.played(orch.notes.span(since=since), PORT)
        if played_whole(orch, [n.pitch for n in heard], left + right, since):
            break
    assert [n.pitch for n in heard] == left + right
    offset = orch.notes.wall_offset()
    split = max(range(1, len(heard)), key=lambda i: heard[i].onset - heard[i - 1].onset)
    left_last, right_first = heard[split - 1].onset + offset, heard[split].onset + offset
    assert right_first - left_last > 1.0  # the silence between the phrases

    out = service.call("partner", {"action": "continue", "input": PORT, "since": since,
                                   "notes": 8, "key": "C", "seed": 1, "save": True,
                                   "instance": "lobby", "synthdef": "sine"})
    assert isinstance(out, PartnerOutput) and out.count == 8 == len(out.notes)
    pitches = [n.pitch for n in out.notes]
    assert all(p % 12 in key("C") for p in pitches)
    assert all(n.source == f"partner:{orch.partner.source(PORT)}" for n in out.notes)
    # the seed is the range's notes: the continuation follows its last onset
    assert out.notes[0].onset > since
    ngrams_occur(pitches, out.orders, [n.pitch for n in heard], played)
    assert out.path is not None and out.pattern == "partner"
    midi = mido.MidiFile(out.path)
    assert [m.note for m in midi if m.type == "note_on" and m.velocity] == pitches
    again = service.call("partner", {"action": "continue", "input": PORT, "since": since,
                                     "notes": 8, "key": "C", "seed": 1})
    assert isinstance(again, PartnerOutput) and [n.pitch for n in again.notes] == pitches
    # a .mid there already is written over only when asked; never one outside midi/'s kind
    take = {"action": "continue", "input": PORT, "since": since, "notes": 8, "seed": 1,
            "path": "take.mid"}
    kept = service.call("partner", take)
    assert isinstance(kept, PartnerOutput) and kept.path is not None
    Path(kept.path).write_bytes(b"mine")
    with pytest.raises(FileExists, match="overwrite = true"):
        service.call("partner", take)
    assert Path(kept.path).read_bytes() == b"mine"
    over = service.call("partner", {**take, "overwrite": True})
    assert isinstance(over, PartnerOutput) and over.path == kept.path
    assert [m.note for m in mido.MidiFile(kept.path) if m.type == "note_on" and m.velocity]
    with pytest.raises(PathRefused):
        service.call("partner", {**take, "path": "../../outside.mid"})
    assert not (Path(kept.path).parents[2] / "outside.mid").exists()

    filled = service.call("partner", {"action": "infill", "input": PORT, "since": since,
                                      "notes": 3, "temperature": 0.5, "seed": 2})
    assert isinstance(filled, PartnerOutput) and filled.count == 3 and filled.join is not None
    onsets = [n.onset for n in filled.notes]
    assert onsets == sorted(onsets)
    # between the phrases: after the left one's last onset, before the right one's first
    assert all(left_last < o < right_first for o in onsets), (left_last, onsets, right_first)
    ngrams_occur([n.pitch for n in filled.notes], filled.orders,
                 [n.pitch for n in heard[:split]], played)

    for bad, words in [({"action": "continue", "input": PORT, "key": "H"}, "a key is"),
                       ({"action": "continue", "input": PORT, "notes": 4, "bars": 1},
                        "notes or bars"),
                       ({"action": "infill", "input": PORT}, "range holding both"),
                       ({"action": "continue", "input": "nope"}, "no MIDI input matching"),
                       ({"action": "answer_on", "input": PORT}, "instance (a room) or output"),
                       ({"action": "answer_on", "input": PORT, "instance": "lobby",
                         "synthdef": "nosuchdef"}, "knows no SynthDef")]:
        with pytest.raises(ScorchError) as err:
            service.call("partner", bad)
        assert words in str(err.value), (bad, err.value)
    with pytest.raises(NotFound):
        service.call("partner", {"action": "answer_off", "input": PORT})
    with pytest.raises(InvalidRequest):
        service.call("partner", {"action": "infill", "input": PORT, "last_seconds": 0.001})


def test_a_continuation_played_in_a_room_reports_the_onsets_it_plays_at(
        rig: tuple[Orchestra, Hardware]) -> None:
    orch, keys = rig
    service = LocalService(orch)
    # nothing else plays in the room: scsynth's /n_go are this continuation's
    assert orch.rooms.execute_one("lobby", "Pdef.all.do(_.stop); 1", timeout=10).ok
    perform(keys, LEFT)
    time.sleep(2.0)  # the seed lies seconds before the call, as a performer's does
    port = orch.rooms.status("lobby").port
    assert port is not None
    listener = Listener(port)
    try:
        asked = time.time()
        out = service.call("partner", {"action": "continue", "input": PORT, "notes": 6,
                                       "seed": 3, "instance": "lobby", "synthdef": "sine",
                                       "name": "onsets"})
        answered = time.time()
        assert isinstance(out, PartnerOutput) and out.count == 6
        onsets = [n.onset for n in out.notes]
        time.sleep(max(0.0, onsets[-1] - time.time()) + 0.5)  # every note went to scsynth
    finally:
        listener.close()
    offset = orch.notes.wall_offset()
    grid = orch.notes.line()
    bar = grid.beats_per_bar * BEAT
    # from the first bar line after its code ran in the room, not after the seed
    assert asked < onsets[0] <= answered + bar, (asked, answered, onsets[0])
    first = place(onsets[0] - offset, grid)
    assert first.beat == 1.0 and f"from bar {first.bar}" in out.listing
    # scsynth started a synth for each a server latency (s.latency) after its onset
    # (what the module's earlier continuation still plays starts before its first onset)
    starts = listener.synth_starts(onsets[0] + 0.1)
    heard = sorted(h.at for h in starts)
    assert len(heard) == len(onsets), [(h.at, h.message.args) for h in starts]
    late = [h - o for h, o in zip(heard, sorted(onsets), strict=True)]
    assert all(abs(x - late[0]) < 0.03 for x in late) and 0.15 < late[0] < 0.3, late
    # and the room's capture of its Pdef holds them where the answer said
    captured = service.call("notes", {"action": "played", "input": "lobby/Pdef onsets",
                                      "since": asked})
    assert isinstance(captured, NotesOutput)
    # (the capture keeps times on its own clock and adds the wall offset back: at 1.8e9 s a
    # float's step is 0.24 us, and a few steps apart is the same onset)
    assert [n.onset for n in captured.notes] == pytest.approx(sorted(onsets), abs=1e-5)


def test_answer_starts_on_the_beat_after_the_pause_and_stops_when_the_performer_plays(
        rig: tuple[Orchestra, Hardware], tmp_path: Path) -> None:
    orch, keys = rig
    service = LocalService(orch)
    port = orch.rooms.status("lobby").port
    assert port is not None
    watch = NodeWatch(port)
    try:
        on = service.call("partner", {"action": "answer_on", "input": PORT, "instance": "lobby",
                                      "synthdef": "sine", "pause_beats": 1.0, "notes": 6,
                                      "seed": 3})
        assert isinstance(on, PartnerOutput) and "answering" in on.listing
        figures = answer_once(orch, keys, watch, pause_beats=1.0)
        listing = service.call("partner", {"action": "answering"})
        off = service.call("partner", {"action": "answer_off", "input": PORT})
    finally:
        watch.close()
    print(f"\nanswer: first voice {figures.late * 1e3:.1f} ms after its beat "
          f"({figures.due_to_beat * 1e3:.0f} ms from the pause's end to that beat); "
          f"stopped {figures.stop * 1e3:.1f} ms after the key press ({figures.held} voice(s) "
          f"held; one JACK period is {64 / 48:.2f} ms)")
    # on the grid, the first beat after the pause (the router saw the last release a poll
    # after it was sent, so the pause ends a little later than measured here)
    assert figures.off_grid < 1e-6
    # the first beat after the pause, as the answer thread saw it end (a loaded machine
    # may wake it a little late: the bound allows that much beyond one beat)
    assert -0.01 < figures.due_to_beat <= BEAT + LATE
    assert 0 <= figures.answer.start - figures.answer.due <= BEAT + LATE
    assert -0.005 < figures.late < LATE
    assert figures.held >= 1 and figures.stop < STOP
    answer = figures.answer
    assert answer.cut is not None and answer.cut_by is not None and answer.sent >= 1
    assert answer.cut - answer.cut_by < STOP  # the key press taken to the voices freed
    # the phrase it answered is the one played
    assert [n.pitch for n in answer.heard] == figures.phrase
    # and what it played in the room is read back as the room's notes
    kept = orch.notes.capture().rings[ROOM + "lobby" + PARTNER].between(answer.start - 0.01,
                                                                          math.inf)
    assert sorted(n.pitch for n in kept) == sorted(
        n.pitch for n in answer.phrase.notes[:answer.sent])
    ngrams_occur([s.pitch for s in answer.phrase.symbols], answer.phrase.orders,
                 figures.phrase, learned(orch))
    assert isinstance(listing, PartnerOutput) and len(listing.answering[answer_source(orch)]) == 1
    assert isinstance(off, PartnerOutput) and not orch.partner.answering()
    assert not orch.notes.capture().listeners


def answer_source(orch: Orchestra) -> str:
    return orch.partner.source(PORT)


def learned(orch: Orchestra) -> list[int]:
    """The pitches the input played, all the ring holds: what the partner learned from."""
    return [n.pitch for n in orch.notes.capture().rings[answer_source(orch)].notes()]


def test_answers_go_to_a_midi_output_and_their_keys_are_released_when_the_performer_plays(
        rig: tuple[Orchestra, Hardware]) -> None:
    import rtmidi

    from scorch.primitives.system.jackd import client_environment

    orch, keys = rig
    service = LocalService(orch)
    received: list[tuple[float, list[int]]] = []
    with client_environment(orch.config.audio.jack_server):
        synth = rtmidi.MidiIn(rtmidi.API_UNIX_JACK, name="scorchtest-synth")
        synth.set_callback(lambda event, _data: received.append((time.monotonic(), event[0])))
        synth.open_virtual_port("partner in")
    try:
        with pytest.raises(ScorchError, match="cannot answer on MIDI output"):
            service.call("partner", {"action": "answer_on", "input": PORT, "output": "nowhere"})
        service.call("partner", {"action": "answer_on", "input": PORT, "output": "partner in",
                                 "channel": 5, "pause_beats": 1.0, "notes": 4, "seed": 4})
        time.sleep(0.75)  # a pause before the phrase; the output's first message arrives
        assert received and received[0][1] == [0xB4, 123, 0]  # all notes off: it is there
        _, last = perform(keys, [(60, 0.4, 0.5), (64, 0.4, 0.5), (67, 0.4, 0.5)])
        deadline = time.monotonic() + 5
        while not any(m[0] == 0x94 and m[2] for _, m in received):
            assert time.monotonic() < deadline, f"no answer came out: {received}"
            time.sleep(0.005)
        first = next(t for t, m in received if m[0] == 0x94 and m[2])
        assert last + BEAT <= first < last + 2 * BEAT + LATE  # after the pause, on the beat
        keys.send(0x90, 72, 80)
        pressed = time.monotonic()
        time.sleep(0.3)
        keys.send(0x80, 72, 0)
    finally:
        service.call("partner", {"action": "answer_off", "input": PORT})
        synth.close_port()
        synth.delete()
    # every key it pressed it released; after the performer's press, nothing new starts
    down: set[int] = set()
    for _, message in received[1:]:
        if message[0] == 0x94 and message[2]:
            down.add(message[1])
        elif message[0] in (0x84, 0x94):
            down.discard(message[1])
    assert not down, received
    assert not [t for t, m in received if m[0] == 0x94 and m[2] and t > pressed + STOP]
