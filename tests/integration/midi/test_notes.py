"""Notes captured from a real JACK MIDI input, read back and exported through the MCP tool."""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import jack
import mido
import pytest
from mcp import Client

from actors.jack import jackd_options
from mcp_server.server import build_server
from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.errors import MidiUnavailable
from scorch.primitives.system.jackd import client_environment
from tests.conftest import MakeConfig
from tests.support.mcp.calls import call, fails
from tests.support.midi.answer import played_whole
from tests.support.midi.devices import Hardware
from tests.support.scsynth_listener import Heard, Listener

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

ROOM = """
[instances.lobby]
synthdefs = ["sine"]
"""

MIDI = """
[midi]
backend = "jack"
rescan_interval = 0.1
[tempo]
bpm = 96
beats_per_bar = 3
"""

#: (pitch, velocity, seconds held, seconds to the next press); the last key is held
#: across the next press to show overlapping notes keep their own ends.
PHRASE = [(60, 96, 0.30, 0.40), (64, 80, 0.12, 0.20), (67, 70, 0.45, 0.30),
          (72, 110, 0.50, 0.25), (71, 60, 0.20, 0.30)]
#: Scheduling slack beyond a JACK period: the input thread's poll when idle, and a test
#: process sharing two cores with other JACK servers.
SLACK = 0.008


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def config(make_config: MakeConfig) -> Config:
    return make_config(ROOM, extra=MIDI, tag="notes")


@pytest.fixture
def orch(config: Config, start_orchestra: Callable[[Config], Orchestra]) -> Orchestra:
    orchestra = start_orchestra(config)
    assert orchestra.midi.error is None
    return orchestra


@pytest.fixture
async def client(orch: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orch))) as session:
        yield session


def tolerance(orch: Orchestra) -> float:
    """One JACK period, plus scheduling slack."""
    return jackd_options(orch.config).period / orch.config.audio.sample_rate + SLACK


def connect(orch: Orchestra, keys: Hardware, timeout: float = 10.0) -> None:
    """Tap a key until the router has the port (it connects a new port within a scan)."""
    deadline = time.monotonic() + timeout
    while not any(keys.name in n.source
                  for n in orch.notes.played(orch.notes.span(seconds=60.0))):
        assert time.monotonic() < deadline, "the router never captured the new port"
        keys.send(0x90, 21, 1)
        keys.send(0x80, 21, 0)
        time.sleep(0.05)


def play(keys: Hardware) -> list[tuple[int, int, float, float]]:
    """Play PHRASE on channel 2 as a performer would; return (pitch, velocity, on, off) sent."""
    sent: dict[int, list[float]] = {}
    events: list[tuple[float, int, int, int]] = []  # (monotonic time, status, pitch, velocity)
    t = 0.0
    for pitch, velocity, held, gap in PHRASE:
        events.append((t, 0x91, pitch, velocity))
        events.append((t + held, 0x81, pitch, 0))
        t += gap
    events.sort()
    start = time.monotonic() + 0.05
    for at, status, pitch, velocity in events:
        time.sleep(max(0.0, start + at - time.monotonic()))
        keys.send(status, pitch, velocity)
        sent.setdefault(pitch, []).append(time.monotonic())
    time.sleep(0.1)  # the last release reaches the router
    return sorted(((p, v, sent[p][0], sent[p][1]) for p, v, _, _ in PHRASE),
                  key=lambda n: n[2])


def assert_same_notes(got: list[tuple[int, float, float]],
                      sent: list[tuple[int, int, float, float]], slack: float) -> None:
    """(pitch, onset, duration) read back are the notes sent: pitches, order, gaps, lengths."""
    assert [p for p, _, _ in got] == [p for p, _, _, _ in sent]
    for (pitch, onset, duration), (_, _, on, off) in zip(got, sent, strict=True):
        assert duration == pytest.approx(off - on, abs=slack), pitch
        assert onset - got[0][1] == pytest.approx(on - sent[0][2], abs=slack), pitch


async def test_a_phrase_played_is_read_back_exported_and_kept_across_a_restart(
        orch: Orchestra, client: Client, config: Config,
        start_orchestra: Callable[[Config], Orchestra]) -> None:
    keys = Hardware("scorchtest-notes", "scorchtest-hw", orch.config.audio.jack_server)
    try:
        connect(orch, keys)
        for _ in range(2):  # once more if JACK lost a note in an xrun: see played_whole
            since = time.time()
            sent = play(keys)
            played = await call(client, "notes", action="played", since=since,
                                input="scorchtest-notes")
            notes: list[dict[str, Any]] = played["notes"]
            if played_whole(orch, [n["pitch"] for n in notes], [p for p, *_ in sent], since):
                break
    finally:
        keys.unplug()
    slack = tolerance(orch)

    assert played["count"] == len(PHRASE) and not played["summarised"]
    assert_same_notes([(n["pitch"], n["onset"], n["duration"]) for n in notes], sent, slack)
    assert [(n["velocity"], n["channel"]) for n in notes] == [(v, 1) for _, v, _, _ in sent]
    assert abs(notes[0]["onset"] - (sent[0][2] - time.monotonic() + time.time())) < slack
    assert played["bpm"] == 96 and played["beats_per_bar"] == 3
    lines = played["listing"].splitlines()
    assert lines[0].startswith("bar ") and "C4" in lines[1] and "v96" in lines[1]
    assert [n["name"] for n in notes] == ["C4", "E4", "G4", "C5", "B4"]
    summed = await call(client, "notes", action="played", since=since, max_notes=4)
    assert summed["summarised"] and summed["notes"] == [] and summed["count"] == len(PHRASE)
    assert summed["listing"] == played["listing"]  # the text still fits its budget
    brief = await call(client, "notes", action="played", since=since, budget=100,
                       input="scorchtest-notes")
    assert brief["summarised"] and brief["listing"].startswith("5 notes in ")

    bar = 3 * 60 / 96
    bars = await call(client, "notes", action="played", last_bars=4, input="scorchtest-notes")
    assert [n["pitch"] for n in bars["notes"]][-len(PHRASE):] == [p for p, _, _, _ in sent]
    assert 4 * bar <= bars["end"] - bars["start"] < 5 * bar  # back to a bar line
    assert bars["notes"][0]["onset"] >= bars["start"]

    exported = await call(client, "notes", action="export", since=since, path="phrase.mid")
    path = Path(exported["path"])
    assert path == orch.config.state_path() / "midi" / "phrase.mid"
    midi = mido.MidiFile(str(path))
    tempos = [m.tempo for m in midi.tracks[0] if m.type == "set_tempo"]
    assert tempos == [mido.bpm2tempo(96)]
    meters = [(m.numerator, m.denominator) for m in midi.tracks[0] if m.type == "time_signature"]
    assert meters == [(3, 4)]
    assert_same_notes(read_mid(midi), sent, slack + 60 / 96 / midi.ticks_per_beat)
    # the file starts on the bar line at or before the first note
    assert 0 <= exported["notes"][0]["onset"] - exported["start"] < bar + 1e-3

    sounding = await call(client, "notes", action="sounding")
    assert sounding["count"] == 0 and "scorchtest-notes" in str(sounding["sounding"])

    orch.stop()  # the rings are saved in the state directory, and the next start loads them
    again = start_orchestra(config)
    back = again.notes.played(again.notes.span(since=since), "scorchtest-notes")
    offset = again.notes.wall_offset()
    assert [(n.pitch, n.velocity) for n in back] == [(p, v) for p, v, _, _ in sent]
    assert [round(n.onset + offset, 3) for n in back] == pytest.approx(
        [n["onset"] for n in notes], abs=0.005)


async def test_a_device_connected_to_scorchs_own_input_and_opened_by_the_router_plays_once(
        orch: Orchestra, client: Client) -> None:
    server = orch.config.audio.jack_server
    keys = Hardware("Keystation out", "scorchtest-keystation", server)
    with client_environment(server):
        patchbay = jack.Client("scorchtest-patchbay", no_start_server=True)
    own = f"{orch.config.midi.virtual_port}:{orch.config.midi.virtual_port}"
    try:
        # the device's own software (or a patchbay) connects it to scorch's input...
        patchbay.connect(keys.name, own)
        connect(orch, keys)  # ...while the router opens it too, as it opens every input
        deadline = time.monotonic() + 5.0
        while keys.name in [p.name for p in patchbay.get_all_connections(own)]:
            assert time.monotonic() < deadline, "the second path to the router stayed"
            time.sleep(0.02)
        for _ in range(2):  # once more if JACK lost a note in an xrun: see played_whole
            received = orch.midi.stats()["received"]
            since = time.time()
            sent = play(keys)
            played = await call(client, "notes", action="played", since=since)
            notes: list[dict[str, Any]] = played["notes"]
            if played_whole(orch, [n["pitch"] for n in notes], [p for p, *_ in sent], since):
                break
    finally:
        keys.unplug()
        patchbay.close()

    assert {n["source"] for n in notes} == {keys.name}, played["listing"]
    assert_same_notes([(n["pitch"], n["onset"], n["duration"]) for n in notes], sent,
                      tolerance(orch))
    assert orch.midi.stats()["received"] - received == 2 * len(PHRASE)  # each message once
    ports = await call(client, "midi", action="ports")
    assert ports["result"]["unlinked"] == [keys.name]


async def test_a_phrase_sent_into_scorchs_own_input_plays_voices_and_is_captured_once(
        orch: Orchestra, client: Client) -> None:
    ports = await call(client, "midi", action="ports")
    own = ports["result"]["send_to"][0]
    assert own == "scorch:scorch", ports["result"]
    await call(client, "midi", action="map",
               spec={"port": "scorch", "instance": "lobby", "synthdef": "sine",
                     "amp": [0.0, 0.01]})
    port = orch.rooms.status("lobby").port
    assert port is not None
    listener = Listener(port)
    # the phrase as a model writes it: each message some seconds after the one before
    phrase: list[dict[str, Any]] = []
    rest = 0.0  # one key at a time: each time is the seconds after the message before
    for pitch, velocity, held, gap in PHRASE[:4]:
        phrase.append({"type": "note_on", "note": pitch, "velocity": velocity, "channel": 2,
                       "time": rest})
        phrase.append({"type": "note_off", "note": pitch, "channel": 2, "time": held})
        rest = max(0.0, gap - held)
    try:
        since = time.time()
        sent = await call(client, "midi", action="send", port=own, message=phrase)

        def voices_heard() -> list[Heard]:
            return [h for h in list(listener.heard) if h.at > since
                    and h.message.address == "/n_go" and int(h.message.args[4]) == 0
                    and FIRST_NODE_ID <= int(h.message.args[0]) < FIRST_NODE_ID + NODE_ID_SPAN]

        deadline = time.monotonic() + 2.0  # the last /n_go reaches the listener
        while len(voices_heard()) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)  # and nothing more comes
    finally:
        listener.close()
    assert sent["result"]["sent"] == len(phrase) and sent["result"]["port"] == "scorch"
    span = sum(m["time"] for m in phrase)
    assert span - 0.01 <= sent["result"]["seconds"] < span + 0.5

    voices = voices_heard()
    assert len(voices) == 4, [h.message for h in voices]
    played = await call(client, "notes", action="played", since=since)
    notes: list[dict[str, Any]] = played["notes"]
    assert {n["source"] for n in notes} == {"scorch"}, played["listing"]  # once, as played
    assert [(n["pitch"], n["velocity"], n["channel"]) for n in notes] == [
        (p, v, 1) for p, v, _, _ in PHRASE[:4]]
    starts = [n["onset"] for n in notes]
    gaps = [max(gap, held) for _, _, held, gap in PHRASE[:3]]
    for got, want in zip([b - a for a, b in itertools.pairwise(starts)], gaps, strict=True):
        assert got == pytest.approx(want, abs=0.02)  # one ask to the router per message
    # each voice started as its note was sent into scorch (scsynth's own /n_go)
    for heard, onset in zip(voices, starts, strict=True):
        assert heard.at - onset == pytest.approx(voices[0].at - starts[0], abs=0.02)

    refused = await fails(client, "midi", action="send", port="nowhere",
                          message={"type": "note_on", "note": 60})
    assert "ports that can be sent to: scorch:scorch" in refused
    bad = await fails(client, "midi", action="send", port=own,
                      message=[{"type": "note_on", "note": 60}, {"type": "nope"}])
    assert "message 1 of the phrase" in bad
    late = await fails(client, "midi", action="send", port=own,
                       message=[{"type": "note_on", "note": 60, "time": 30}])
    assert "at most 25 s" in late


def read_mid(midi: mido.MidiFile) -> list[tuple[int, float, float]]:
    """(pitch, onset, duration) in seconds from the file's start, through its tempo."""
    now, down, out = 0.0, {}, []
    for message in midi:
        now += message.time
        if message.type == "note_on" and message.velocity:
            down[message.note] = now
        elif message.type in ("note_on", "note_off") and message.note in down:
            onset = down.pop(message.note)
            out.append((message.note, onset, now - onset))
    return sorted(out, key=lambda n: n[1])


async def test_a_range_must_be_one_and_an_unknown_input_names_the_played_ones(
        client: Client) -> None:
    assert "say one range" in await fails(client, "notes", action="played")
    assert "say one range" in await fails(client, "notes", action="played", last_bars=2,
                                          last_seconds=3)
    assert "no MIDI input or pattern matching 'nope'" in await fails(
        client, "notes", action="played", last_seconds=5, input="nope")
    assert "nothing to export" in await fails(client, "notes", action="export", last_seconds=1)


def test_with_capture_off_notes_says_how_to_turn_it_on_and_nothing_is_saved(
        make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra]) -> None:
    config = make_config(ROOM, extra=MIDI.replace("[midi]", "[midi]\ncapture_notes = 0"),
                         tag="notes")
    orch = start_orchestra(config)
    assert orch.config.midi.capture_notes == 0
    keys = Hardware("scorchtest-notes", "scorchtest-hw", orch.config.audio.jack_server)
    try:
        deadline = time.monotonic() + 10
        while orch.midi.stats()["received"] < 2:  # the router takes the port's keys
            assert time.monotonic() < deadline, "the router never read the new port"
            keys.send(0x90, 60, 90)
            keys.send(0x80, 60, 0)
            time.sleep(0.05)
    finally:
        keys.unplug()
    with pytest.raises(MidiUnavailable, match=r"capture_notes = 0"):
        orch.notes.sounding()
    orch.stop()
    assert not (config.state_path() / "notes").exists()
