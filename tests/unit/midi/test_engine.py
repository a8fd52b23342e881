"""The router's pure core: bytes in, actions out."""

from __future__ import annotations

import pytest

from midi import engine as engine_module
from midi.actions import BendVoice, ReleaseVoice, SetParam, StartVoice, VoiceParam
from midi.engine import (
    Engine,
    TargetSnapshot,
    message_error,
    midicps,
)
from midi.routes import RouteEntry, compile_table
from midi.schema import ControlRoute, KeyRoute
from midi.voices import voice_ids

PORT = "hw:nanoKONTROL2 MIDI 1"
A = ("127.0.0.1", 57110)
B = ("127.0.0.1", 57111)


def engine_with(*routes, endpoints=None) -> Engine:
    engine = Engine()
    entries = [RouteEntry(f"r{i}", r, "config") for i, r in enumerate(routes)]
    resolved = {"a": ("a",), "b": ("b",), "both": ("a", "b")}
    engine.tables = {PORT: compile_table(PORT, entries, resolved)}
    endpoints = {"a": A, "b": B} if endpoints is None else endpoints
    engine.snapshot = TargetSnapshot(endpoints, {("a", "pad"): 1000, ("b", "pad"): 2000})
    return engine


def control(**fields) -> ControlRoute:
    base = {"instance": "a", "node": "pad", "param": "cutoff", "takeover": "immediate"}
    return ControlRoute(**{**base, **fields})


def values(actions) -> list[float]:
    return [round(a.value, 4) for a in actions if isinstance(a, SetParam)]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "empty"),
        ([0x40, 0x10], "running status or garbage"),
        ([0xB0, 7], "2 bytes for status 0xb0"),
        ([0xC0, 1, 2], "3 bytes for status 0xc0"),
        ([0x90, 0x80, 0x10], "data byte above 127"),
        ([0xF0, 1, 2, 0xF7], None),
        ([0xF8], None),
        ([0xB3, 1, 2], None),
    ],
)
def test_malformed_messages_are_named(data, reason):
    error = message_error(data)
    assert (error is None) if reason is None else (reason in error)


def test_garbage_is_counted_and_survived():
    engine = engine_with(control(cc=7))
    for junk in ([0x07, 0x10], [0xF0] + [0x11] * 1000 + [0xF7], [0xB0], [0x90, 200, 1]):
        assert engine.handle(PORT, junk) == []
    assert engine.errors == 3
    assert values(engine.handle(PORT, [0xB0, 7, 127])) == [1.0]


def test_cc_applies_range_and_curve_to_the_named_node():
    engine = engine_with(control(cc=74, range=(20.0, 20000.0), curve="exp"))
    (action,) = engine.handle(PORT, [0xB0, 74, 127])
    assert action == SetParam("a", "pad", "cutoff", pytest.approx(20000.0), A, 1000)
    assert values(engine.handle(PORT, [0xB0, 74, 0])) == [20.0]


def test_channel_filter_and_other_ports_are_ignored():
    engine = engine_with(control(cc=7, channel=2))
    assert engine.handle(PORT, [0xB0, 7, 64]) == []
    assert values(engine.handle(PORT, [0xB1, 7, 127])) == [1.0]
    assert engine.handle("other", [0xB1, 7, 127]) == []


def test_group_route_reaches_every_room_and_a_missing_one_goes_to_desired_state():
    engine = engine_with(control(cc=1, instance="both"), endpoints={"a": A})
    actions = engine.handle(PORT, [0xB0, 1, 127])
    assert [(a.room, a.address, a.value) for a in actions] == [("a", A, 1.0), ("b", None, 1.0)]


def test_14_bit_cc_uses_msb_and_lsb():
    engine = engine_with(control(cc=7, hires=True, range=(0.0, 16383.0)))
    assert values(engine.handle(PORT, [0xB0, 7, 64])) == [8192.0]
    assert values(engine.handle(PORT, [0xB0, 39, 1])) == [8193.0]


def test_nrpn_7_bit_ignores_the_lsb_and_14_bit_uses_it():
    engine = engine_with(
        control(nrpn=130, range=(0.0, 127.0)),
        control(nrpn=130, hires=True, range=(0.0, 16383.0), param="q"),
    )
    for cc, value in ((99, 1), (98, 2)):
        assert engine.handle(PORT, [0xB0, cc, value]) == []
    assert values(engine.handle(PORT, [0xB0, 6, 10])) == [10.0, 1280.0]
    assert values(engine.handle(PORT, [0xB0, 38, 5])) == [1285.0]


def test_relative_encoder_steps_from_the_current_value():
    engine = engine_with(control(cc=16, relative="twos_complement", step=0.1, range=(0.0, 10.0)))
    engine.observe("a", "pad", "cutoff", 5.0)
    assert values(engine.handle(PORT, [0xB0, 16, 2])) == [7.0]
    assert values(engine.handle(PORT, [0xB0, 16, 127])) == [6.0]


def test_pickup_waits_for_the_knob_to_reach_a_value_set_elsewhere():
    engine = engine_with(control(cc=7, takeover="pickup", range=(0.0, 127.0)))
    engine.observe("a", "pad", "cutoff", 100.0)
    assert engine.handle(PORT, [0xB0, 7, 10]) == []
    assert engine.handle(PORT, [0xB0, 7, 50]) == []
    assert values(engine.handle(PORT, [0xB0, 7, 101])) == [101.0]


def test_a_route_replaced_under_the_same_id_takes_its_new_takeover_mode():
    engine = engine_with(control(cc=7, takeover="pickup", range=(0.0, 127.0)))
    engine.observe("a", "pad", "cutoff", 100.0)
    assert engine.handle(PORT, [0xB0, 7, 10]) == []  # pickup: waits for the knob
    replaced = RouteEntry("r0", control(cc=7, takeover="immediate", range=(0.0, 127.0)),
                          "runtime")
    engine.tables = {PORT: compile_table(PORT, [replaced], {"a": ("a",)})}
    assert values(engine.handle(PORT, [0xB0, 7, 10])) == [10.0]


def test_pitchbend_control_maps_centre_to_the_middle():
    engine = engine_with(control(pitchbend=True, range=(-1.0, 1.0)))
    assert values(engine.handle(PORT, [0xE0, 0, 64])) == [0.0]
    assert values(engine.handle(PORT, [0xE0, 127, 127])) == [1.0]
    assert values(engine.handle(PORT, [0xE0, 0, 0])) == [-1.0]


def keys(**fields) -> KeyRoute:
    return KeyRoute(**{"instance": "a", "synthdef": "pluck", **fields})


def test_note_on_starts_a_voice_and_note_off_releases_it():
    engine = engine_with(keys(transpose=12, velocity_curve="amp"))
    (start,) = engine.handle(PORT, [0x90, 57, 127])
    assert isinstance(start, StartVoice)
    assert (start.address, start.synthdef) == (A, "pluck")
    assert dict(zip(start.args[::2], start.args[1::2], strict=True)) == {
        "freq": pytest.approx(440.0), "amp": 1.0, "gate": 1.0
    }
    assert engine.handle(PORT, [0x80, 57, 0]) == [ReleaseVoice(A, start.node_id)]
    (again,) = engine.handle(PORT, [0x90, 57, 64])
    assert engine.handle(PORT, [0x90, 57, 0]) == [ReleaseVoice(A, again.node_id)]


def test_played_hears_each_voice_start_and_end_however_it_ends():
    """The capture's hook: every voice started (velocity) and ended (0), once each, whether
    by its key, the pedal, a stolen voice or panic, with the room and the transposed pitch."""
    engine = engine_with(keys(instance="both", transpose=12, voices=2))
    heard: list[tuple[str, float, int, int]] = []
    engine.played = lambda voice, velocity: heard.append(
        (voice.room, voice.pitch, voice.channel[1], velocity))
    engine.handle(PORT, [0x91, 60, 90])
    assert heard == [("a", 72, 1, 90), ("b", 72, 1, 90)]
    engine.handle(PORT, [0x81, 60, 0])
    engine.handle(PORT, [0xB0, 64, 127])
    engine.handle(PORT, [0x90, 62, 80])
    engine.handle(PORT, [0x80, 62, 0])  # held by the pedal: no end yet
    assert heard[2:] == [("a", 72, 1, 0), ("b", 72, 1, 0), ("a", 74, 0, 80), ("b", 74, 0, 80)]
    engine.handle(PORT, [0xB0, 64, 0])
    assert heard[6:] == [("a", 74, 0, 0), ("b", 74, 0, 0)]
    for note in (64, 65, 67):  # two voices per room: the third steals the first
        engine.handle(PORT, [0x90, note, 100])
    assert [h for h in heard[8:] if h[3] == 0] == [("a", 76, 0, 0), ("b", 76, 0, 0)]
    del heard[:]
    engine.panic()
    assert sorted(heard) == [("a", 77, 0, 0), ("a", 79, 0, 0), ("b", 77, 0, 0), ("b", 79, 0, 0)]


def test_splits_send_each_range_to_its_own_room():
    engine = engine_with(keys(notes=(0, 59)), keys(instance="b", notes=(60, 127)))
    assert [a.address for a in engine.handle(PORT, [0x90, 40, 100])] == [A]
    assert [a.address for a in engine.handle(PORT, [0x90, 80, 100])] == [B]


def test_note_off_reaches_the_voice_even_after_the_routes_changed():
    engine = engine_with(keys())
    (start,) = engine.handle(PORT, [0x90, 60, 100])
    engine.tables = {}
    engine.snapshot = TargetSnapshot({}, {})
    assert engine.handle(PORT, [0x80, 60, 0]) == [ReleaseVoice(A, start.node_id)]


def test_sustain_holds_releases_until_the_pedal_lifts():
    engine = engine_with(keys())
    (start,) = engine.handle(PORT, [0x90, 60, 100])
    assert engine.handle(PORT, [0xB0, 64, 127]) == []
    assert engine.handle(PORT, [0x80, 60, 0]) == []
    assert engine.handle(PORT, [0xB0, 64, 0]) == [ReleaseVoice(A, start.node_id)]


def test_voice_limit_steals_the_oldest():
    engine = engine_with(keys(voices=2))
    first, second = (engine.handle(PORT, [0x90, n, 100])[0] for n in (60, 62))
    actions = engine.handle(PORT, [0x90, 64, 100])
    assert actions[0] == ReleaseVoice(A, first.node_id)
    assert isinstance(actions[1], StartVoice)
    assert second.node_id != actions[1].node_id


def test_pitch_bend_retunes_sounding_voices_and_new_ones():
    engine = engine_with(keys(bend_range=2))
    (start,) = engine.handle(PORT, [0x90, 69, 100])
    (bend,) = engine.handle(PORT, [0xE0, 127, 127])
    assert bend == BendVoice(A, start.node_id, pytest.approx(midicps(71)))
    (later,) = engine.handle(PORT, [0x90, 60, 100])
    assert later.args[1] == pytest.approx(midicps(62))


def test_notes_for_a_stopped_room_start_nothing():
    engine = engine_with(keys(), endpoints={})
    assert engine.handle(PORT, [0x90, 60, 100]) == []
    assert engine.handle(PORT, [0x80, 60, 0]) == []


def test_panic_releases_every_voice():
    engine = engine_with(keys(instance="both"))
    started = engine.handle(PORT, [0x90, 60, 100]) + engine.handle(PORT, [0x90, 64, 100])
    assert sorted(a.node_id for a in engine.panic()) == sorted(a.node_id for a in started)
    assert engine.panic() == []


@pytest.mark.parametrize(
    ("messages", "learned"),
    [
        ([[0xB2, 21, 5]], {"channel": 3, "kind": "cc", "number": 21, "value": 5}),
        ([[0x90, 60, 9]], {"channel": 1, "kind": "note", "number": 60, "value": 9}),
        ([[0x80, 60, 0], [0xE0, 0, 64]], {"channel": 1, "kind": "pitchbend", "number": 0,
                                          "value": 8192}),
        ([[0xB0, 99, 0], [0xB0, 98, 7], [0xB0, 6, 3]], {"channel": 1, "kind": "nrpn",
                                                         "number": 7, "value": 384}),
    ],
)
def test_learn_reports_the_first_control_or_note(messages, learned):
    engine = engine_with()
    seen: list[dict] = []
    engine.learn = seen.append
    for data in messages:
        engine.handle(PORT, data)
    engine.handle(PORT, [0xB0, 1, 1])
    assert seen == [{"port": PORT, **learned}]


# -- issue 15: inputs that go away, max_hold, MPE ----------------------------------------


def test_an_input_that_goes_away_releases_every_voice_it_started():
    engine = engine_with(keys())
    starts = [engine.handle(PORT, [0x90, note, 100])[0] for note in (60, 64, 67)]
    engine.handle(PORT, [0xE0, 0, 127])
    released = engine.drop_port(PORT)
    assert sorted(a.node_id for a in released) == sorted(s.node_id for s in starts)
    assert all(isinstance(a, ReleaseVoice) for a in released)
    assert len(engine.voices) == 0
    # The bend went with it: a voice started after it is plugged back is in tune.
    (start,) = engine.handle(PORT, [0x90, 69, 100])
    assert start.args[1] == pytest.approx(440.0)


def test_max_hold_releases_a_held_voice_at_its_deadline_and_only_once():
    now = [100.0]
    engine = engine_with(keys(max_hold=2.5))
    engine.clock = lambda: now[0]
    (held,) = engine.handle(PORT, [0x90, 60, 100])
    now[0] = 101.0
    (later,) = engine.handle(PORT, [0x90, 62, 100])
    assert engine.next_deadline() == 102.5
    assert engine.expire(102.4) == []
    assert engine.expire(102.5) == [ReleaseVoice(A, held.node_id)]
    assert engine.handle(PORT, [0x80, 60, 0]) == []  # the key comes up later: nothing left
    assert engine.handle(PORT, [0x80, 62, 0]) == [ReleaseVoice(A, later.node_id)]
    assert engine.expire(200.0) == []  # released by its key: not again


def test_notes_played_and_released_do_not_pile_up_until_their_max_hold():
    now = [0.0]
    engine = engine_with(keys(max_hold=86400.0))  # a day: the longest hold allowed
    engine.clock = lambda: now[0]
    (held,) = engine.handle(PORT, [0x90, 40, 100])  # one key stays down all along
    for i in range(20_000):
        now[0] += 0.05
        engine.handle(PORT, [0x90, 60 + i % 12, 100])
        engine.handle(PORT, [0x80, 60 + i % 12, 0])
    assert len(engine._deadlines) <= 2 * len(engine.voices) + engine_module.COMPACT_AFTER + 1
    now[0] = 86401.0
    assert engine.expire(now[0]) == [ReleaseVoice(A, held.node_id)]  # still kept


def test_routes_without_max_hold_never_expire():
    engine = engine_with(keys())
    engine.handle(PORT, [0x90, 60, 100])
    assert engine.next_deadline() is None
    assert engine.expire(1e12) == []


def mpe_engine(zone: str = "lower", **fields):
    return engine_with(keys(mpe=zone, bend_range=2, mpe_bend_range=48, **fields))


def test_an_mpe_note_bends_alone_and_its_neighbour_stays():
    engine = mpe_engine()
    (low,) = engine.handle(PORT, [0x91, 60, 100])  # member channel 2
    (high,) = engine.handle(PORT, [0x92, 64, 100])  # member channel 3
    (bend,) = engine.handle(PORT, [0xE1, 0x7F, 0x7F])  # channel 2 bends all the way up
    assert bend == BendVoice(A, low.node_id, pytest.approx(midicps(60 + 48)))
    # The master channel bends the whole zone by its own range, on top of each note's own.
    bends = engine.handle(PORT, [0xE0, 0x7F, 0x7F])
    assert {b.node_id: round(b.freq, 3) for b in bends} == {
        low.node_id: round(midicps(60 + 48 + 2), 3), high.node_id: round(midicps(64 + 2), 3)}


def test_mpe_pressure_and_timbre_reach_only_their_notes_voice():
    engine = mpe_engine()
    engine.handle(PORT, [0xB1, 74, 127])  # initial timbre before the note-on
    (low,) = engine.handle(PORT, [0x91, 60, 100])
    (high,) = engine.handle(PORT, [0x92, 64, 100])
    assert dict(zip(low.args[::2], low.args[1::2], strict=True))["timbre"] == 1.0
    assert dict(zip(high.args[::2], high.args[1::2], strict=True))["timbre"] == 0.5
    assert engine.handle(PORT, [0xD2, 127]) == [VoiceParam(A, high.node_id, "pressure", 1.0)]
    assert engine.handle(PORT, [0xB1, 74, 0]) == [VoiceParam(A, low.node_id, "timbre", 0.0)]


def test_mpe_zones_take_their_own_channels_and_an_mcm_resizes_them():
    lower = mpe_engine("lower")
    assert lower.handle(PORT, [0x9F, 60, 100])  # member 15 of a 15-channel lower zone
    upper = mpe_engine("upper")
    assert upper.handle(PORT, [0x9E, 60, 100])  # channel 15: first member of the upper zone
    assert upper.handle(PORT, [0x90, 61, 100])  # channel 1: its last member
    # MCM: RPN 6 on the master channel, data entry 3 -> members 2, 3 and 4 only.
    for cc, value in ((101, 0), (100, 6), (6, 3)):
        lower.handle(PORT, [0xB0, cc, value])
    assert lower.handle(PORT, [0x93, 62, 100])
    assert lower.handle(PORT, [0x94, 63, 100]) == []
    for cc, value in ((101, 0), (100, 6), (6, 0)):  # a zone of 0 channels is off
        lower.handle(PORT, [0xB0, cc, value])
    assert lower.handle(PORT, [0x91, 64, 100]) == []


def test_an_mpe_route_cannot_also_name_a_channel_or_take_the_per_note_params():
    with pytest.raises(ValueError, match="chooses its channels"):
        keys(mpe="lower", channel=2)
    with pytest.raises(ValueError, match="pressure"):
        keys(mpe="upper", params={"pressure": 1.0})


def test_a_router_started_again_starts_its_voice_ids_elsewhere_in_its_span():
    first, span = voice_ids(3)
    assert Engine(3, voice_offset=5).voices.new_id() == first + 5
    assert Engine(3, voice_offset=span + 7).voices.new_id() == first + 7  # within the span
