"""Thinning a batch of queued messages: newer controller values replace older, notes never go."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from midi.batch import STATEFUL_CCS, coalesce, replaceable_cc
from midi.routes import RouteEntry, compile_table
from midi.schema import ControlRoute

PORT = "hw:keys"


def batch(*messages: list[int]) -> list[tuple[list[int], float]]:
    return [(list(m), 0.0) for m in messages]


def data(messages) -> list[list[int]]:
    return [m[0] for m in messages]


def table(**control):
    route = ControlRoute(**{"instance": "a", "node": "pad", "param": "cutoff", **control})
    return compile_table(PORT, [RouteEntry("r", route, "config")], {"a": ("a",)})


def test_only_the_newest_value_of_each_controller_and_channel_stays():
    got = coalesce(batch([0xB0, 7, 1], [0xB0, 8, 2], [0xB0, 7, 3], [0xB1, 7, 4], [0xB0, 8, 5]),
                   None)
    assert data(got) == [[0xB0, 7, 3], [0xB1, 7, 4], [0xB0, 8, 5]]


def test_pitch_bend_and_channel_pressure_keep_their_newest_per_channel():
    got = coalesce(batch([0xE0, 0, 64], [0xD0, 5], [0xE0, 0, 70], [0xD0, 9], [0xE1, 0, 1]),
                   None)
    assert data(got) == [[0xE0, 0, 70], [0xD0, 9], [0xE1, 0, 1]]


def test_a_note_keeps_the_values_sent_before_it_on_its_channel():
    # An MPE controller sends a note's initial timbre and bend before its note-on.
    got = coalesce(batch([0xB1, 74, 10], [0xE1, 0, 80], [0x91, 60, 100], [0xB1, 74, 99],
                         [0xE1, 0, 90], [0xB2, 74, 5], [0x92, 62, 100], [0xB2, 74, 6]), None)
    assert data(got) == [[0xB1, 74, 10], [0xE1, 0, 80], [0x91, 60, 100], [0xB1, 74, 99],
                         [0xE1, 0, 90], [0xB2, 74, 5], [0x92, 62, 100], [0xB2, 74, 6]]
    # A note on another channel is no barrier.
    got = coalesce(batch([0xB1, 74, 10], [0x92, 60, 100], [0xB1, 74, 11]), None)
    assert data(got) == [[0x92, 60, 100], [0xB1, 74, 11]]


def test_stateful_controllers_relative_encoders_and_14_bit_halves_keep_every_value():
    assert all(not replaceable_cc(None, 0, cc) for cc in STATEFUL_CCS)
    assert replaceable_cc(None, 0, 7)
    assert not replaceable_cc(table(cc=7, relative="twos_complement"), 0, 7)
    assert replaceable_cc(table(cc=7), 0, 7)
    assert not replaceable_cc(table(cc=1, hires=True), 0, 33)
    pedal = batch([0xB0, 64, 127], [0xB0, 64, 0], [0xB0, 64, 127])
    assert coalesce(pedal, None) == pedal


messages = st.one_of(
    st.tuples(st.sampled_from([0x80, 0x90, 0xB0, 0xE0, 0xA0, 0xC0]), st.integers(0, 2),
              st.integers(0, 127), st.integers(0, 127)).map(
        lambda t: [t[0] | t[1], t[2], t[3]] if t[0] != 0xC0 else [t[0] | t[1], t[2]]),
    st.tuples(st.integers(0, 2), st.integers(0, 127)).map(lambda t: [0xD0 | t[0], t[1]]),
    st.lists(st.integers(0, 255), max_size=4),  # garbage, running status, truncated
)


@given(st.lists(messages, max_size=60))
def test_thinning_keeps_every_other_message_in_order_and_every_last_value(raw):
    given_batch = batch(*raw)
    got = coalesce(given_batch, None)
    kept = data(got)
    # What is not a replaceable value is all there, in order.
    def replaceable(m: list[int]) -> bool:
        return len(m) >= 2 and m[0] & 0xF0 in (0xB0, 0xD0, 0xE0) and 0x80 <= m[0] < 0xF0 and (
            m[0] & 0xF0 != 0xB0 or (len(m) == 3 and m[1] not in STATEFUL_CCS)) and len(m) == (
            2 if m[0] & 0xF0 == 0xD0 else 3)
    assert [m for m in kept if not replaceable(m)] == [m for m in raw if not replaceable(m)]
    # The kept ones are a subsequence of the batch, and each controller's last value is kept.
    position = 0
    for message in kept:
        position = next(i for i in range(position, len(raw)) if raw[i] == message) + 1
    last: dict[tuple[int, int], list[int]] = {}
    for m in raw:
        if replaceable(m):
            last[(m[0], m[1] if m[0] & 0xF0 == 0xB0 else -1)] = m
    for m in last.values():
        assert m in kept


def test_a_sysex_that_swallowed_messages_gives_them_back_in_order():
    from midi.batch import recover, unpack

    swallowed = [0xF0, 1, 2, 0xF8, 0x80, 60, 0, 0x90, 61, 100, 0xFC, 0xF0, 5, 0xF7]
    assert unpack(swallowed) == [[0xF0, 1, 2], [0xF8], [0x80, 60, 0], [0x90, 61, 100],
                                 [0xFC], [0xF0, 5, 0xF7]]
    whole = batch([0xF0, 1, 2, 0xF7], [0x90, 60, 1])
    assert recover(whole) is whole  # nothing to unpack: the same list, no copy
    assert data(recover(batch([0xB0, 1, 2], swallowed))) == [[0xB0, 1, 2],
                                                             *unpack(swallowed)]


well_formed = st.one_of(
    st.tuples(st.sampled_from([0x80, 0x90, 0xA0, 0xB0, 0xE0]), st.integers(0, 15),
              st.integers(0, 127), st.integers(0, 127)).map(lambda t: [t[0] | t[1], t[2], t[3]]),
    st.tuples(st.sampled_from([0xC0, 0xD0]), st.integers(0, 15), st.integers(0, 127)).map(
        lambda t: [t[0] | t[1], t[2]]),
    st.sampled_from([[0xF8], [0xFA], [0xFB], [0xFC]]),
    st.lists(st.integers(0, 127), max_size=8).map(lambda b: [0xF0, *b, 0xF7]),
)


@given(st.lists(st.integers(0, 127), max_size=6), st.lists(well_formed, max_size=30))
def test_what_follows_an_unterminated_sysex_comes_back_message_by_message(head, messages):
    from midi.batch import unpack

    stream = [0xF0, *head, *[b for m in messages for b in m]]
    parts = unpack(stream)
    assert parts[0] == [0xF0, *head]
    assert [p for p in parts if p[0] >= 0xF8] == [m for m in messages if m[0] >= 0xF8]
    channel = [m for m in messages if m[0] < 0xF0]
    assert [p for p in parts if p[0] < 0xF0] == channel


@given(st.lists(st.integers(0, 255), max_size=200))
def test_unpacking_any_bytes_loses_none_and_never_fails(raw):
    from midi.batch import unpack

    parts = unpack([0xF0, *raw])
    assert sorted(b for p in parts for b in p) == sorted([0xF0, *raw])
    assert all(parts)
